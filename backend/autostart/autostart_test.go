//go:build !windows && !darwin

package autostart

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestEnableDisable(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	want := filepath.Join(cfg, "autostart", "talaria.desktop")

	st, err := Get()
	if err != nil || st.Enabled || st.Where != want {
		t.Fatalf("before: %+v %v", st, err)
	}
	cmd := Command{Exe: "/opt/Talaria Desktop/talaria", Args: []string{"--hidden", "--data-dir", "/home/u/my $data/100%"}}
	st, err = Enable(cmd)
	if err != nil || !st.Enabled || st.Where != want {
		t.Fatalf("enable: %+v %v", st, err)
	}
	data, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "TryExec=/opt/Talaria Desktop/talaria\n") {
		t.Fatalf("entry:\n%s", data)
	}
	// desktop-file-validate (desktop-file-utils) is what distributions check entries with.
	if out, err := exec.Command("desktop-file-validate", want).CombinedOutput(); err != nil {
		t.Fatalf("desktop-file-validate: %v\n%s", err, out)
	}
	// GLib reads the Exec line exactly as a session's autostart does.
	if got := glibArgv(t, want); !slices.Equal(got, append([]string{cmd.Exe}, cmd.Args...)) {
		t.Fatalf("GLib reads the command as %q", got)
	}

	// Turned off elsewhere (GNOME Tweaks writes this key): reported off.
	if err := os.WriteFile(want, []byte(strings.Replace(string(data), "X-GNOME-Autostart-enabled=true", "X-GNOME-Autostart-enabled=false", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, _ := Get(); st.Enabled {
		t.Fatal("an entry disabled with X-GNOME-Autostart-enabled=false is reported on")
	}

	st, err = Disable()
	if err != nil || st.Enabled {
		t.Fatalf("disable: %+v %v", st, err)
	}
	if _, err := os.Stat(want); !os.IsNotExist(err) {
		t.Fatalf("the entry is still there: %v", err)
	}
	if _, err := Disable(); err != nil {
		t.Fatalf("disabling twice: %v", err)
	}
}

func TestEnableRefusesRelativePaths(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	if _, err := Enable(Command{Exe: "talaria"}); err == nil {
		t.Fatal("a relative program path was accepted")
	}
}

func TestEnableReportsAnUnwritableFolder(t *testing.T) {
	cfg := t.TempDir()
	if err := os.WriteFile(filepath.Join(cfg, "autostart"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	_, err := Enable(Command{Exe: "/usr/bin/talaria"})
	if err == nil || !strings.Contains(err.Error(), filepath.Join(cfg, "autostart")) {
		t.Fatalf("err = %v, want one naming the folder", err)
	}
}

// glibArgv parses the entry's Exec key with GLib (Debian's python3-gi), as GIO launches it.
func glibArgv(t *testing.T, path string) []string {
	t.Helper()
	script := `import json, sys
from gi.repository import GLib
kf = GLib.KeyFile()
kf.load_from_file(sys.argv[1], GLib.KeyFileFlags.NONE)
ok, argv = GLib.shell_parse_argv(kf.get_string("Desktop Entry", "Exec").replace("%%", "%"))
print(json.dumps(argv))`
	out, err := exec.Command("/usr/bin/python3", "-c", script, path).CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -c (GLib): %v\n%s\n(scripts/setup.sh installs python3-gi)", err, out)
	}
	var argv []string
	if err := json.Unmarshal(out, &argv); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return argv
}
