package autostart

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/windows/registry"
)

const (
	runKey   = `Software\Microsoft\Windows\CurrentVersion\Run`
	runValue = "Talaria"
)

// EntryPath names the registry value that holds the entry.
func EntryPath() (string, error) { return `HKEY_CURRENT_USER\` + runKey + `\` + runValue, nil }

// Entry is the command line the Run value holds: every argument quoted as
// CommandLineToArgvW reads it.
func Entry(cmd Command) string {
	parts := make([]string, 0, 1+len(cmd.Args))
	for _, a := range append([]string{cmd.Exe}, cmd.Args...) {
		if a == "" || strings.ContainsAny(a, " \t\"") {
			a = `"` + strings.ReplaceAll(a, `"`, `\"`) + `"`
		}
		parts = append(parts, a)
	}
	return strings.Join(parts, " ")
}

func get() (State, error) {
	where, _ := EntryPath()
	st := State{Where: where}
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: cannot open %s: %w", where, err)
	}
	defer k.Close()
	v, _, err := k.GetStringValue(runValue)
	if errors.Is(err, registry.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("autostart: cannot read %s: %w", where, err)
	}
	st.Enabled, st.Command = true, v
	return st, nil
}

func enable(cmd Command) (State, error) {
	where, _ := EntryPath()
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE|registry.QUERY_VALUE)
	if err != nil {
		return State{Where: where}, fmt.Errorf("autostart: cannot open %s: %w", where, err)
	}
	defer k.Close()
	if err := k.SetStringValue(runValue, Entry(cmd)); err != nil {
		return State{Where: where}, fmt.Errorf("autostart: cannot write %s: %w", where, err)
	}
	return get()
}

func disable() (State, error) {
	where, _ := EntryPath()
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return State{Where: where}, nil
	}
	if err != nil {
		return State{Where: where, Enabled: true}, fmt.Errorf("autostart: cannot open %s: %w", where, err)
	}
	defer k.Close()
	if err := k.DeleteValue(runValue); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return State{Where: where, Enabled: true}, fmt.Errorf("autostart: cannot remove %s: %w", where, err)
	}
	return State{Where: where}, nil
}
