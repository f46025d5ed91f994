//go:build !windows && !darwin

package backend_test

import (
	"os"
	"strings"
	"testing"
)

func TestSetAutostart(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	svc, _ := openService(t)

	if st := svc.About().GetAutostart(); st.Enabled || st.Error != "" {
		t.Fatalf("before: %+v", st)
	}
	st, err := svc.About().SetAutostart(true)
	if err != nil || !st.Enabled {
		t.Fatalf("on: %+v %v", st, err)
	}
	exe, _ := os.Executable()
	// The test's data folder is not the per-user one, so the entry names it.
	if !strings.Contains(st.Command, "--hidden --data-dir "+svc.Paths.DataDir) || !strings.Contains(st.Command, exe[strings.LastIndex(exe, "/")+1:]) {
		t.Fatalf("command = %q", st.Command)
	}
	if got := svc.About().GetAutostart(); !got.Enabled || got.Where != cfg+"/autostart/talaria.desktop" {
		t.Fatalf("after on: %+v", got)
	}
	if st, err := svc.About().SetAutostart(false); err != nil || st.Enabled {
		t.Fatalf("off: %+v %v", st, err)
	}
	if got := svc.About().GetAutostart(); got.Enabled {
		t.Fatalf("after off: %+v", got)
	}
}

func TestSetAutostartReportsTheFile(t *testing.T) {
	cfg := t.TempDir()
	if err := os.WriteFile(cfg+"/autostart", nil, 0o644); err != nil { // a file where the folder goes
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", cfg)
	svc, _ := openService(t)
	st, err := svc.About().SetAutostart(true)
	if err == nil || st.Enabled || !strings.Contains(err.Error(), cfg+"/autostart") {
		t.Fatalf("%+v %v", st, err)
	}
}
