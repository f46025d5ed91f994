// Package autostart writes and removes the entry that starts Talaria when the user
// logs in: an XDG autostart desktop entry on Linux and the BSDs
// ($XDG_CONFIG_HOME/autostart/talaria.desktop, per the XDG Autostart specification
// 0.5), a LaunchAgent on macOS (~/Library/LaunchAgents/io.talaria.Desktop.plist), and
// the HKCU Run key on Windows (value "Talaria"). The entry itself is the setting: there
// is no copy in the database, so a user who removes it elsewhere (GNOME Tweaks, the
// Task Manager) sees it off in Talaria too.
package autostart

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Command is what the entry starts: an absolute executable and its arguments (e.g.
// ["--hidden"]).
type Command struct {
	Exe  string
	Args []string
}

// State is whether Talaria starts at login, and where that is recorded.
type State struct {
	Enabled bool   `json:"enabled"`
	Where   string `json:"where"`   // the file or registry value that holds the entry
	Command string `json:"command"` // what it starts, as written there ("" when off)
}

// ErrUnsupported is returned where no autostart mechanism is known.
var ErrUnsupported = errors.New("starting at login is not supported on this system")

// Get reports the current state. A missing entry is not an error.
func Get() (State, error) { return get() }

// Enable writes the entry for cmd, replacing an older one (e.g. after the app moved).
// cmd.Exe must be absolute. Errors name the file or key and what to do.
func Enable(cmd Command) (State, error) {
	if !filepath.IsAbs(cmd.Exe) {
		return State{}, fmt.Errorf("autostart: the program path %q is not absolute", cmd.Exe)
	}
	return enable(cmd)
}

// Disable removes the entry; removing an absent entry is not an error.
func Disable() (State, error) { return disable() }

// Executable is the running program's absolute path with symlinks resolved, the
// program an entry should start.
func Executable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("autostart: cannot find the running program: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return exe, nil
}

// writeFile replaces path with data atomically (a temporary file renamed over it), so
// a crash never leaves a half-written entry.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("cannot create %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".talaria-autostart-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %w", filepath.Dir(path), err)
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("cannot write %s: %w", path, werr)
	}
	return nil
}
