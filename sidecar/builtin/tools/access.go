package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The file tools' only ways into the file system: open a file to read, open a folder to
// list, write a file. Each goes through the workspace's os.Root and the checks of
// Workspace (see its doc).

// ErrNotRegular is wrapped by the errors of paths that are not regular files (a FIFO,
// a device, a socket).
var ErrNotRegular = errors.New("is not a regular file")

// ErrHardLinked is wrapped by the errors of files with more than one hard link.
var ErrHardLinked = errors.New("has more than one hard link")

// openFile opens rel for reading: without blocking (a FIFO opens at once), checked to
// be inside the workspace and outside the hidden paths. A folder is returned as is
// (the caller decides); anything else that is not a regular file with one link is
// refused. The caller closes the file.
func (w *Workspace) openFile(rel string) (*os.File, fs.FileInfo, error) {
	if w.hiddenRel(rel) {
		return nil, nil, fmt.Errorf("path %q %w", Display(rel), ErrHidden)
	}
	f, err := do(w, rel, func(r string) (*os.File, error) { return w.root.OpenFile(r, os.O_RDONLY|openNonblock, 0) })
	if err != nil {
		return nil, nil, friendly(rel, err)
	}
	if err := w.checkOpened(rel, f); err != nil {
		f.Close()
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, friendly(rel, err)
	}
	if st.IsDir() {
		return f, st, nil
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s %w (%s): the file tools read and write regular files only", Display(rel), ErrNotRegular, kindOf(st.Mode()))
	}
	if n := linkCount(f, st); n > 1 {
		f.Close()
		return nil, nil, fmt.Errorf("%s %w (%d names): another name of it may lie outside the workspace, so the file tools do not touch it", Display(rel), ErrHardLinked, n)
	}
	return f, st, nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file"
}

// readDir lists the folder rel (opened without blocking and checked like openFile),
// sorted by name, hidden paths left out.
func (w *Workspace) readDir(rel string) ([]fs.DirEntry, error) {
	if w.hiddenRel(rel) {
		return nil, fmt.Errorf("path %q %w", Display(rel), ErrHidden)
	}
	f, err := do(w, rel, func(r string) (*os.File, error) {
		return w.root.OpenFile(r, os.O_RDONLY|openNonblock|openDirectory, 0)
	})
	if err != nil {
		return nil, friendly(rel, err)
	}
	defer f.Close()
	if err := w.checkOpened(rel, f); err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		return nil, friendly(rel, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", Display(rel))
	}
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, friendly(rel, err)
	}
	out := ents[:0]
	for _, e := range ents {
		if !w.hiddenRel(filepath.Join(rel, e.Name())) {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// walk visits the folder start and everything below it in lexical order, depth first,
// without following symbolic links to folders. fn gets the slash-separated path (from
// the workspace) and the entry; it may return fs.SkipDir (for a folder) or fs.SkipAll.
// Unreadable folders below start are left out.
func (w *Workspace) walk(ctx context.Context, start string, fn func(name string, d fs.DirEntry) error) error {
	var visit func(dir string) error
	visit = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		ents, err := w.readDir(dir)
		if err != nil {
			if dir == start {
				return err
			}
			return nil
		}
		for _, e := range ents {
			rel := filepath.Join(dir, e.Name())
			err := fn(filepath.ToSlash(rel), e)
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			if err != nil {
				return err
			}
			if e.IsDir() {
				if err := visit(rel); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := visit(start)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return err
}

// write replaces the content of rel (creating it) with mode: a new file is written
// beside it and renamed over it, so a write never changes an inode another name shares
// and a reader never sees half a file. A symbolic link that stays inside the workspace
// is written through (its target is replaced). The folder must exist.
func (w *Workspace) write(rel, content string, mode fs.FileMode) error {
	if w.hiddenRel(rel) {
		return fmt.Errorf("path %q %w", Display(rel), ErrHidden)
	}
	target := rel
	if st, err := do(w, rel, w.root.Lstat); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		f, _, err := w.openFile(rel)
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !strings.Contains(err.Error(), "does not exist") {
			return err
		}
		if f != nil {
			if real, ok := fdPath(f); ok {
				if r, err := filepath.Rel(w.real, real); err == nil && filepath.IsLocal(r) {
					target = r
				}
			}
			f.Close()
		}
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	dir = filepath.Clean(dir)
	sub, err := do(w, dir, w.root.OpenRoot)
	if err != nil {
		return friendly(dir, err)
	}
	defer sub.Close()
	var rnd [6]byte
	rand.Read(rnd[:]) //nolint:errcheck // crypto/rand.Read never fails
	tmp := "." + base + ".talaria-" + hex.EncodeToString(rnd[:])
	f, err := sub.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return friendly(target, err)
	}
	fail := func(err error) error {
		f.Close()
		sub.Remove(tmp) //nolint:errcheck // best effort
		return err
	}
	if err := w.checkOpened(target, f); err != nil {
		return fail(err)
	}
	if _, err := f.WriteString(content); err != nil {
		return fail(friendly(target, err))
	}
	if err := f.Chmod(mode); err != nil {
		return fail(friendly(target, err))
	}
	if err := f.Close(); err != nil {
		sub.Remove(tmp) //nolint:errcheck // best effort
		return friendly(target, err)
	}
	if err := sub.Rename(tmp, base); err != nil {
		sub.Remove(tmp) //nolint:errcheck // best effort
		return friendly(target, err)
	}
	return nil
}
