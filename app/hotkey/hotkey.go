// Package hotkey registers a global keyboard shortcut (one that works while another
// program has the focus) where the desktop allows one: on an X11 session it grabs the
// key on the root window (XGrabKey, on a connection of its own). Wayland gives programs
// no global keys; there the user binds `talaria --quick-ask` to a shortcut in the
// desktop's keyboard settings instead, and Register says so. macOS and Windows are not
// done yet (ErrUnsupported). The module proxy offers no maintained Go library for this
// (golang.design/x/hotkey is not available there), hence the small cgo binding.
package hotkey

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnsupported is returned by Register where this build has no global shortcuts.
var ErrUnsupported = errors.New("global shortcuts are not available on this system yet: bind `talaria --quick-ask` to a shortcut in the system's keyboard settings")

// ErrWayland is returned by Register in a Wayland session.
var ErrWayland = errors.New("Wayland lets no program take a global shortcut: bind `talaria --quick-ask` to a shortcut in your desktop's keyboard settings (GNOME: Settings, Keyboard, Custom Shortcuts)")

// TakenError is returned by Register when another program holds the shortcut.
type TakenError struct{ Shortcut string }

func (e *TakenError) Error() string {
	return fmt.Sprintf("%s is taken by another program: choose another shortcut", e.Shortcut)
}

// Shortcut is a parsed shortcut: modifiers and one key.
type Shortcut struct {
	Ctrl, Alt, Shift, Super bool
	// Key is the key's X11 keysym name ("space", "a", "F1", "Return").
	Key string
}

// String writes the shortcut the way Parse reads it ("Ctrl+Alt+Space").
func (s Shortcut) String() string {
	var parts []string
	for _, m := range []struct {
		on   bool
		name string
	}{{s.Ctrl, "Ctrl"}, {s.Alt, "Alt"}, {s.Shift, "Shift"}, {s.Super, "Super"}} {
		if m.on {
			parts = append(parts, m.name)
		}
	}
	key := s.Key
	if len(key) == 1 {
		key = strings.ToUpper(key)
	} else if key == "space" {
		key = "Space"
	}
	return strings.Join(append(parts, key), "+")
}

// ParseError says why a shortcut could not be read.
type ParseError struct{ Text, Problem string }

func (e *ParseError) Error() string {
	return fmt.Sprintf("%q is not a shortcut: %s", e.Text, e.Problem)
}

// Parse reads a shortcut such as "Ctrl+Alt+Space", "Super+Shift+K" or "Ctrl+F12":
// modifiers Ctrl (Control), Alt, Shift, Super (Meta, Win, Cmd), then one key: a
// letter, a digit, F1 to F24, Space, Enter (Return), Tab, or an X11 keysym name. At
// least one of Ctrl, Alt and Super is needed (a plain key would be taken from every
// program). Errors: *ParseError.
func Parse(text string) (Shortcut, error) {
	var s Shortcut
	fields := strings.Split(strings.TrimSpace(text), "+")
	if len(fields) < 2 {
		return s, &ParseError{text, "write modifiers and a key, e.g. Ctrl+Alt+Space"}
	}
	for i, f := range fields {
		f = strings.TrimSpace(f)
		last := i == len(fields)-1
		switch strings.ToLower(f) {
		case "ctrl", "control":
			s.Ctrl = true
		case "alt", "option":
			s.Alt = true
		case "shift":
			s.Shift = true
		case "super", "meta", "win", "cmd", "command":
			s.Super = true
		default:
			if !last {
				return s, &ParseError{text, fmt.Sprintf("%q is not a modifier (Ctrl, Alt, Shift, Super)", f)}
			}
			key, err := keyName(f)
			if err != nil {
				return s, &ParseError{text, err.Error()}
			}
			s.Key = key
			continue
		}
		if last {
			return s, &ParseError{text, "it ends with a modifier: add a key"}
		}
	}
	if !s.Ctrl && !s.Alt && !s.Super {
		return s, &ParseError{text, "use Ctrl, Alt or Super with the key"}
	}
	return s, nil
}

// keyName maps a key's name to its X11 keysym name.
func keyName(f string) (string, error) {
	lower := strings.ToLower(f)
	if f == "" {
		return "", fmt.Errorf("the key is missing")
	}
	switch {
	case len(f) == 1 && (f[0] >= 'a' && f[0] <= 'z' || f[0] >= 'A' && f[0] <= 'Z'):
		return lower, nil
	case len(f) == 1 && f[0] >= '0' && f[0] <= '9':
		return f, nil
	case lower == "space":
		return "space", nil
	case lower == "enter" || lower == "return":
		return "Return", nil
	case lower == "tab":
		return "Tab", nil
	case lower == "esc" || lower == "escape":
		return "Escape", nil
	case len(lower) >= 2 && lower[0] == 'f' && strings.Trim(lower[1:], "0123456789") == "":
		var n int
		if _, err := fmt.Sscanf(lower[1:], "%d", &n); err == nil && n >= 1 && n <= 24 && fmt.Sprint(n) == lower[1:] {
			return "F" + lower[1:], nil
		}
		return "", fmt.Errorf("function keys are F1 to F24")
	}
	for _, r := range f {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return "", fmt.Errorf("%q is not a key name", f)
		}
	}
	return f, nil // another keysym name (e.g. "Pause", "Home"); the system checks it
}
