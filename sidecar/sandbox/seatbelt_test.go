package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// TestSeatbeltProfile checks the macOS profile's shape (docs/sandbox.md, "macOS"): deny
// by default in the confined modes, writes only to the workspace and the private tmp
// (not the workspace in read-only mode), network only when allowed, the hidden paths
// and secret stores denied last (SBPL: the last matching rule wins), quoted paths.
func TestSeatbeltProfile(t *testing.T) {
	t.Setenv("HOME", "/Users/u")
	ws, tmp, data := "/Users/u/Talaria", "/private/tmp/t1", `/Users/u/Library/Application Support/Talaria "x"`
	prof, err := SeatbeltProfile(Policy{Workspace: ws, Hidden: []string{data}}, tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(deny default)", `(allow file-write* (subpath "/private/tmp/t1") (subpath "/Users/u/Talaria")`,
		`(deny file-read* file-write* (subpath "/Users/u/Library/Application Support/Talaria \"x\""))`,
		`(deny file-read* file-write* (subpath "/Users/u/.ssh"))`, `(deny file-read* file-write* (subpath "/Users/u/Library/Keychains"))`} {
		if !strings.Contains(prof, want) {
			t.Errorf("workspace-write profile lacks %s:\n%s", want, prof)
		}
	}
	if strings.Contains(prof, "network") || strings.Contains(prof, "SecurityServer") {
		t.Errorf("workspace-write profile allows network or the Keychain:\n%s", prof)
	}
	if strings.LastIndex(prof, "(allow") > strings.Index(prof, "(deny file-read*") {
		t.Errorf("an allow rule comes after the hidden paths' denials:\n%s", prof)
	}

	ro, _ := SeatbeltProfile(Policy{Mode: ModeReadOnly, Network: true, Workspace: ws}, tmp)
	if strings.Contains(ro, `(subpath "/Users/u/Talaria")`) || !strings.Contains(ro, "(allow network*)") {
		t.Errorf("read-only profile with network:\n%s", ro)
	}
	full, _ := SeatbeltProfile(Policy{Mode: ModeFullAccess, Workspace: ws, Hidden: []string{data}}, tmp)
	if !strings.Contains(full, "(allow default)") || strings.Contains(full, ".ssh") || !strings.Contains(full, "Application Support/Talaria") {
		t.Errorf("full access hides the data folder only:\n%s", full)
	}
	var pe *PolicyError
	if _, err := SeatbeltProfile(Policy{Workspace: "rel"}, tmp); !errors.As(err, &pe) {
		t.Errorf("relative workspace: %v", err)
	}
	if _, err := SeatbeltProfile(Policy{Mode: "yolo", Workspace: ws}, tmp); !errors.As(err, &pe) {
		t.Errorf("unknown mode: %v", err)
	}
}
