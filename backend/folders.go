package backend

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"talaria/backend/core"
)

// moveToLayout moves, once, the logs and the cache that older versions kept inside the
// per-user data folder to where core.Layout puts them now (the XDG state and cache
// folders, issue 26, item 9b). Each entry moves as a whole; one already at the new place
// is left where it was (nothing is overwritten or lost), and an old folder is removed
// once empty. It returns what could not be moved, for the log.
func moveToLayout(paths core.Paths) []string {
	old := core.PathsFor(paths.DataDir)
	var problems []string
	for _, m := range [][2]string{{old.LogDir, paths.LogDir}, {old.CacheDir, paths.CacheDir}} {
		if filepath.Clean(m[0]) == filepath.Clean(m[1]) {
			continue
		}
		problems = append(problems, moveEntries(m[0], m[1])...)
	}
	return problems
}

// moveEntries moves every entry of from into to (made if missing), then removes from
// when it is empty.
func moveEntries(from, to string) []string {
	entries, err := os.ReadDir(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return []string{fmt.Sprintf("cannot read %s: %v", from, err)}
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return []string{fmt.Sprintf("cannot create %s: %v", to, err)}
	}
	var problems []string
	for _, e := range entries {
		src, dst := filepath.Join(from, e.Name()), filepath.Join(to, e.Name())
		if _, err := os.Lstat(dst); err == nil {
			problems = append(problems, fmt.Sprintf("%s stays where it is: %s exists", src, dst))
			continue
		}
		if err := moveEntry(src, dst); err != nil {
			problems = append(problems, fmt.Sprintf("cannot move %s to %s: %v", src, dst, err))
		}
	}
	_ = os.Remove(from) // only when empty
	return problems
}

// moveEntry renames src to dst, or copies and removes it when they are on different
// file systems.
func moveEntry(src, dst string) error {
	err := os.Rename(src, dst)
	if !errors.Is(err, syscall.EXDEV) {
		return err
	}
	if err := copyTree(src, dst); err != nil {
		os.RemoveAll(dst)
		return err
	}
	return os.RemoveAll(src)
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case d.Type()&os.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case !d.Type().IsRegular():
			return nil // sockets and pipes are not kept
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(target, os.O_CREATE|os.O_EXCL|os.O_WRONLY, info.Mode().Perm())
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}
