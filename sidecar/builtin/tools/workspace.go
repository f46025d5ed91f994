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
// check and a use cannot escape either).
type Workspace struct {
	dir  string // as given, cleaned
	real string // with symlinks resolved
	root *os.Root
}

// ErrOutside is wrapped by the errors of paths outside the workspace.
var ErrOutside = errors.New("outside the workspace")

// OpenWorkspace opens dir, which must be an existing absolute directory.
func OpenWorkspace(dir string) (*Workspace, error) {
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
	return &Workspace{dir: dir, real: real, root: root}, nil
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
