package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestWorkspaceHidden: a workspace that is, or lies inside, a path the policy hides
// (a secret store under HOME, the host's hidden paths), by name or through a link, is
// named; one beside them is not; in full access the secret stores are not hidden.
func TestWorkspaceHidden(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	ssh := filepath.Join(home, ".ssh")
	data := filepath.Join(t.TempDir(), "data")
	for _, d := range []string{filepath.Join(ssh, "keys"), filepath.Join(home, "code"), data} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(home, "code", "k")
	if err := os.Symlink(ssh, link); err != nil {
		t.Fatal(err)
	}
	for ws, want := range map[string]string{
		ssh:                          ssh,
		filepath.Join(ssh, "keys"):   ssh,
		link:                         ssh,
		filepath.Join(home, "code"):  "",
		home:                         "",
		filepath.Join(data, "inner"): data,
	} {
		p := Policy{Mode: DefaultMode, Workspace: ws, Hidden: []string{data}}
		if got := p.WorkspaceHidden(); (got == "") != (want == "") || (want != "" && realPath(got) != realPath(want)) {
			t.Errorf("WorkspaceHidden(%s) = %q, want %q", ws, got, want)
		}
	}
	if got := (Policy{Mode: ModeFullAccess, Workspace: ssh}).WorkspaceHidden(); got != "" {
		t.Errorf("full access hides %q", got)
	}
}
