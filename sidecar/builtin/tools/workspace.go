// Package tools holds the built-in runtime's tool implementations that know nothing of
// the protocol: file access confined to a workspace, the shell command runner with its
// process-group handling and output cap, the todo list, unified diffs and redaction of
// secret values. Package builtin turns them into tool calls and frames.
package tools

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Workspace gives file access confined to one directory tree: relative paths resolve
// against it, absolute paths must lie inside it, and ".." or symbolic links that lead
// outside are refused (os.Root does the confinement, so a symlink swapped in between a
// check and a use cannot escape either). On top of that:
//
//   - every file is opened without blocking and must be a regular file: a FIFO, a
//     device or a socket is refused at once, never waited on;
//   - a file with more than one hard link is refused (its other name may be outside);
//   - writes go to a new file in the same folder, renamed over the old one, so a write
//     never changes an inode another name shares;
//   - where the OS can name an open file (Linux, macOS, Windows), the opened file's real
//     path is checked to lie inside the workspace and outside every hidden path (the
//     app's data folder): a hidden folder inside the workspace stays out of reach
//     through any symbolic link.
type Workspace struct {
	dir    string // as given, cleaned
	real   string // with symlinks resolved
	root   *os.Root
	hidden []string // real paths the tools never touch
}

// ErrOutside is wrapped by the errors of paths outside the workspace.
var ErrOutside = errors.New("outside the workspace")

// OpenWorkspace opens dir, which must be an existing absolute directory. hidden are
// absolute paths the tools refuse even inside it (the app's data folder). Errors: no
// or a relative dir, a dir that cannot be opened, a dir inside or equal to a hidden
// path.
func OpenWorkspace(dir string, hidden ...string) (*Workspace, error) {
	if strings.TrimSpace(dir) == "" {
		return nil, errors.New("no workspace folder is set for this session")
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("the workspace %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("the workspace folder %s cannot be opened: %w", dir, err)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	w := &Workspace{dir: dir, real: real, root: root}
	for _, h := range hidden {
		if !filepath.IsAbs(h) {
			continue
		}
		hr := filepath.Clean(h)
		if r, err := filepath.EvalSymlinks(hr); err == nil {
			hr = r
		}
		if within(real, hr) || within(dir, filepath.Clean(h)) {
			root.Close()
			return nil, fmt.Errorf("the workspace %s lies inside %s, which the agent never touches: choose another workspace", dir, h)
		}
		w.hidden = append(w.hidden, hr, filepath.Clean(h))
	}
	return w, nil
}

// within reports whether p is dir or lies inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// ErrHidden is wrapped by the errors of paths the tools never touch.
var ErrHidden = errors.New("is a folder the agent never touches")

// hiddenRel reports whether the workspace-relative rel names a hidden path or lies in
// one (by name; checkOpened checks what was really opened).
func (w *Workspace) hiddenRel(rel string) bool {
	for _, base := range []string{w.dir, w.real} {
		p := filepath.Join(base, rel)
		for _, h := range w.hidden {
			if within(p, h) {
				return true
			}
		}
	}
	return false
}

// checkOpened checks the real path of an open file: inside the workspace and outside
// every hidden path. Where the OS cannot name an open file it checks nothing.
func (w *Workspace) checkOpened(rel string, f *os.File) error {
	real, ok := fdPath(f)
	if !ok {
		return nil
	}
	if !within(real, w.real) && !within(real, w.dir) {
		return fmt.Errorf("path %q leads %w", Display(rel), ErrOutside)
	}
	for _, h := range w.hidden {
		if within(real, h) {
			return fmt.Errorf("path %q %w", Display(rel), ErrHidden)
		}
	}
	return nil
}

// Dir is the workspace directory.
func (w *Workspace) Dir() string { return w.dir }

// Close releases the workspace's directory handle.
func (w *Workspace) Close() error { return w.root.Close() }

// Rel resolves a path the model gave to a clean path relative to the workspace ("." for
// the workspace itself). Relative paths are taken from the workspace; absolute ones
// (and ~/...) must be inside it. It checks names only; symbolic links are checked when
// the path is used.
func (w *Workspace) Rel(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("no path was given")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("the path contains a NUL byte")
	}
	orig := p
	if p == "~" || strings.HasPrefix(p, "~/") {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("path %q: %w", orig, ErrOutside)
		}
		p = filepath.Join(home, p[1:])
	}
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		p = filepath.Clean(p)
		for _, base := range []string{w.dir, w.real} {
			if rel, err := filepath.Rel(base, p); err == nil && filepath.IsLocal(rel) || rel == "." {
				return rel, nil
			}
		}
		return "", fmt.Errorf("path %q is %w (%s)", orig, ErrOutside, w.dir)
	}
	p = filepath.Clean(p)
	if p != "." && !filepath.IsLocal(p) {
		return "", fmt.Errorf("path %q leads %w (%s)", orig, ErrOutside, w.dir)
	}
	return p, nil
}

// Display is how a workspace-relative path is shown: slash-separated.
func Display(rel string) string { return filepath.ToSlash(rel) }

// resolve returns the path to hand to os.Root for rel. os.Root refuses every absolute
// symbolic link; one that points back inside the workspace is resolved here instead.
func (w *Workspace) resolve(rel string, err error) (string, bool) {
	if err == nil || !isEscape(err) {
		return "", false
	}
	real, e := filepath.EvalSymlinks(filepath.Join(w.real, rel))
	if e != nil {
		// A path being created: resolve its nearest existing parent.
		dir, name := filepath.Split(filepath.Join(w.real, rel))
		real, e = filepath.EvalSymlinks(dir)
		if e != nil {
			return "", false
		}
		real = filepath.Join(real, name)
	}
	r, e := filepath.Rel(w.real, real)
	if e != nil || !(filepath.IsLocal(r) || r == ".") || r == rel {
		return "", false
	}
	return r, true
}

// do runs op on rel, retrying once through resolve when os.Root refused an absolute
// symbolic link that stays inside the workspace. Escapes become ErrOutside errors.
func do[T any](w *Workspace, rel string, op func(string) (T, error)) (T, error) {
	v, err := op(rel)
	if r, ok := w.resolve(rel, err); ok {
		v, err = op(r)
	}
	if err != nil && isEscape(err) {
		var zero T
		return zero, fmt.Errorf("path %q leads %w through a symbolic link", Display(rel), ErrOutside)
	}
	return v, err
}

func isEscape(err error) bool {
	return err != nil && strings.Contains(err.Error(), "path escapes from parent")
}
