//go:build !windows && !darwin

package autostart

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// EntryPath is the XDG autostart entry: $XDG_CONFIG_HOME/autostart/talaria.desktop, or
// ~/.config/autostart/talaria.desktop.
func EntryPath() (string, error) {
	base := os.Getenv("XDG_CONFIG_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", errors.New("autostart: cannot find the home folder (set HOME)")
		}
		base = filepath.Join(home, ".config")
	}
	return filepath.Join(base, "autostart", "talaria.desktop"), nil
}

// Entry is the desktop entry that starts cmd at login. TryExec makes sessions skip it
// once the program is gone (uninstalled); X-GNOME-Autostart-enabled is what GNOME's
// tools toggle.
func Entry(cmd Command) string {
	var b strings.Builder
	b.WriteString("[Desktop Entry]\n")
	b.WriteString("Type=Application\n")
	b.WriteString("Name=Talaria\n")
	b.WriteString("Comment=Start Talaria in the system tray at login\n")
	b.WriteString("Exec=" + execLine(cmd) + "\n")
	b.WriteString("TryExec=" + escapeValue(cmd.Exe) + "\n")
	b.WriteString("Icon=talaria\n")
	b.WriteString("Terminal=false\n")
	b.WriteString("StartupNotify=false\n")
	b.WriteString("X-GNOME-Autostart-enabled=true\n")
	b.WriteString("X-KDE-autostart-after=panel\n")
	return b.String()
}

// execLine quotes cmd for an Exec key (Desktop Entry Specification 1.5, "The Exec
// key"): an argument with a reserved character is put in double quotes with `"`, "`",
// `$` and `\` backslash-escaped; `%` is doubled; then the value is escaped as a string.
func execLine(cmd Command) string {
	parts := make([]string, 0, 1+len(cmd.Args))
	for _, a := range append([]string{cmd.Exe}, cmd.Args...) {
		a = strings.ReplaceAll(a, "%", "%%")
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\><~|&;$*?#()`") {
			var q strings.Builder
			q.WriteByte('"')
			for _, r := range a {
				if strings.ContainsRune("\"`$\\", r) {
					q.WriteByte('\\')
				}
				q.WriteRune(r)
			}
			q.WriteByte('"')
			a = q.String()
		}
		parts = append(parts, a)
	}
	return escapeValue(strings.Join(parts, " "))
}

// escapeValue escapes a string value of a desktop entry ("Possible value types").
func escapeValue(s string) string {
	r := strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`)
	return r.Replace(s)
}

func get() (State, error) {
	path, err := EntryPath()
	if err != nil {
		return State{}, err
	}
	st := State{Where: path}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: cannot read %s: %w", path, err)
	}
	keys := parseEntry(data)
	// Hidden=true and X-GNOME-Autostart-enabled=false both turn an entry off.
	st.Enabled = !strings.EqualFold(keys["Hidden"], "true") && !strings.EqualFold(keys["X-GNOME-Autostart-enabled"], "false")
	if st.Enabled {
		st.Command = keys["Exec"]
	}
	return st, nil
}

// parseEntry returns the keys of the [Desktop Entry] group (no locale handling: the
// keys read here are not localised).
func parseEntry(data []byte) map[string]string {
	keys := map[string]string{}
	group := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			group = strings.Trim(line, "[]")
		case group == "Desktop Entry":
			if k, v, ok := strings.Cut(line, "="); ok {
				keys[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
		}
	}
	return keys
}

func enable(cmd Command) (State, error) {
	path, err := EntryPath()
	if err != nil {
		return State{}, err
	}
	if err := writeFile(path, []byte(Entry(cmd))); err != nil {
		return State{Where: path}, fmt.Errorf("autostart: %w; check that the folder is writable", err)
	}
	return get()
}

func disable() (State, error) {
	path, err := EntryPath()
	if err != nil {
		return State{}, err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return State{Where: path, Enabled: true}, fmt.Errorf("autostart: cannot remove %s: %w", path, err)
	}
	return State{Where: path}, nil
}
