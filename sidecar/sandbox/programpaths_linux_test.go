package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A program installed under /tmp (a checkout or a download there, e.g. an MCP server's
// script with its modules beside it) is invisible in the sandbox's private /tmp unless
// its own tree is made visible read-only; that tree stays read-only, a workspace inside
// it stays writable, and a hidden path inside it stays hidden.
func TestProgramInPrivateTmpSeesItsOwnTree(t *testing.T) {
	mustAvailable(t)
	tree, err := os.MkdirTemp("/tmp", "talaria-program-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tree) })
	script := filepath.Join(tree, "pkg", "dist", "index.sh")
	module := filepath.Join(tree, "node_modules", "dep", "value.txt")
	secret := filepath.Join(tree, "data")
	ws := filepath.Join(tree, "work")
	for _, d := range []string{filepath.Dir(script), filepath.Dir(module), secret, ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(module, []byte("from-the-module"), 0o644)
	os.WriteFile(filepath.Join(secret, "key"), []byte("SECRET-KEY"), 0o600)
	os.WriteFile(script, []byte("cat "+module+"\n"), 0o755)

	ro := ProgramPaths([]string{"/bin/bash", script}, "")
	if len(ro) != 1 || ro[0] != tree {
		t.Fatalf("ProgramPaths = %v, want [%s]", ro, tree)
	}
	if got := ProgramPaths([]string{"/bin/bash", "/usr/bin/env", "relative/x"}, "/nonexistent"); len(got) != 0 {
		t.Fatalf("ProgramPaths outside /tmp = %v, want none", got)
	}

	p := Policy{Mode: ModeWorkspaceWrite, Workspace: ws, Hidden: []string{secret}}
	out, code := run(t, p, "bash "+script)
	if code == 0 || strings.Contains(out, "from-the-module") {
		t.Fatalf("without ReadOnly the private /tmp must hide the program: code %d, %q", code, out)
	}

	p.ReadOnly = ro
	out, code = run(t, p, "bash "+script+"; echo x > "+filepath.Join(ws, "ok")+" && echo wrote-ws; echo y > "+filepath.Join(tree, "pkg", "new")+" && echo wrote-tree; cat "+filepath.Join(secret, "key"))
	if !strings.Contains(out, "from-the-module") {
		t.Fatalf("with ReadOnly the program must see its module: code %d, %q", code, out)
	}
	if !strings.Contains(out, "wrote-ws") {
		t.Errorf("the workspace inside the read-only tree must stay writable: %q", out)
	}
	if strings.Contains(out, "wrote-tree") {
		t.Errorf("the program's tree must be read-only: %q", out)
	}
	if strings.Contains(out, "SECRET-KEY") {
		t.Errorf("a hidden path inside the read-only tree must stay hidden: %q", out)
	}
	if _, err := os.Stat(filepath.Join(tree, "pkg", "new")); err == nil {
		t.Errorf("a file was written into the read-only tree")
	}
}
