package mcp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"talaria/sidecar/mcp"
)

func TestFindRefusal(t *testing.T) {
	for _, c := range []struct{ text, path, reason string }{
		{"Error: EROFS: read-only file system, open '/opt/x/memory.jsonl'", "/opt/x/memory.jsonl", "read-only file system"},
		{"EACCES: permission denied, mkdir '/home/me/.cache/srv'", "/home/me/.cache/srv", "permission denied"},
		{"OSError: [Errno 30] Read-only file system: '/srv/data/db.sqlite'", "/srv/data/db.sqlite", "read-only file system"},
		{"PermissionError: [Errno 13] Permission denied: '/var/log/x.log'", "/var/log/x.log", "permission denied"},
		{"sh: 1: cannot create /etc/motd: Read-only file system", "/etc/motd", "read-only file system"},
	} {
		r, ok := mcp.FindRefusal(c.text)
		if !ok || r.Path != c.path || r.Reason != c.reason {
			t.Errorf("FindRefusal(%q) = %+v, %v; want %s (%s)", c.text, r, ok, c.path, c.reason)
		}
	}
	for _, text := range []string{"ENOENT: no such file or directory, open '/x'", "all good", "permission denied by the user"} {
		if r, ok := mcp.FindRefusal(text); ok {
			t.Errorf("FindRefusal(%q) = %+v; want none", text, r)
		}
	}
}

// A script's package folder is writable; the interpreter's folder, the home folder and
// system folders never are.
func TestWritableFolders(t *testing.T) {
	pkg := filepath.Join(t.TempDir(), "srv")
	if err := os.MkdirAll(filepath.Join(pkg, "dist"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(pkg, "package.json"), []byte("{}"), 0o644)
	script := filepath.Join(pkg, "dist", "index.js")
	os.WriteFile(script, []byte("console.log(1)"), 0o644)
	link := filepath.Join(t.TempDir(), "bin-link")
	if err := os.Symlink(script, link); err != nil {
		t.Fatal(err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	extra := t.TempDir()
	got := mcp.WritableFolders([]string{node, link, "/etc/passwd", home}, home, []string{extra, filepath.Join(extra, "missing")})
	realPkg, _ := filepath.EvalSymlinks(pkg)
	if !slices.Equal(got, []string{realPkg, extra}) {
		t.Fatalf("WritableFolders = %v; want [%s %s]", got, realPkg, extra)
	}
}

// A refusal in npx's cache says to install the server, not to open the cache folder.
func TestRefusalHintInALauncherCache(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, ".npm", "_npx", "c98c", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "memory.jsonl")
	hint := mcp.RefusalHint("memory", mcp.Refusal{Path: p, Reason: "read-only file system"})
	if !strings.Contains(hint, p) || !strings.Contains(hint, "Install the server") || !strings.Contains(hint, filepath.Join(home, ".npm")) {
		t.Fatalf("hint %q", hint)
	}
}
