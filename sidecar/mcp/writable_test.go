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
	got, _ := mcp.WritableFolders([]string{node, link, "/etc/passwd", home}, home, "", []string{extra, filepath.Join(extra, "missing")})
	realPkg, _ := filepath.EvalSymlinks(pkg)
	if !slices.Equal(got, []string{realPkg, extra}) {
		t.Fatalf("WritableFolders = %v; want [%s %s]", got, realPkg, extra)
	}
}

// files creates each file (its folders first) with its content; a name ending in / is
// a folder.
func files(t *testing.T, root string, content map[string]string) {
	t.Helper()
	for name, body := range content {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// realTemp is a new temporary folder resolved through symbolic links.
func realTemp(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// withheld reports whether ws withholds path for a reason that contains why.
func withheld(ws []mcp.Withheld, path, why string) bool {
	return slices.ContainsFunc(ws, func(w mcp.Withheld) bool { return w.Path == path && strings.Contains(w.Reason, why) })
}

// An entry point in a project's virtual environment (or any bin folder) never makes
// the project writable: the climb stops at the venv (withheld, it holds pyvenv.cfg)
// or at bin.
func TestWritableFoldersStopAtAVenvOrBin(t *testing.T) {
	repo := realTemp(t)
	files(t, repo, map[string]string{
		"pyproject.toml": "[project]\n", ".git/hooks/": "",
		".venv/pyvenv.cfg": "home = /usr/bin\n", ".venv/bin/my-mcp": "#!/usr/bin/python3\nprint()\n",
		"novenv/bin/my-mcp": "#!/usr/bin/python3\nprint()\n", "novenv/setup.py": "",
		"tool/package.json": "{}", "tool/bin/cli.js": "console.log(1)",
		"node_modules/some-mcp/package.json": "{}", "node_modules/some-mcp/bin/cli.js": "",
		"node_modules/@scope/mcp/package.json": "{}", "node_modules/@scope/mcp/bin/cli.js": "",
	})
	venv := filepath.Join(repo, ".venv")
	got, held := mcp.WritableFolders([]string{filepath.Join(venv, "bin", "my-mcp")}, "", "", nil)
	if len(got) != 0 || len(held) != 1 || !withheld(held, venv, "pyvenv.cfg") {
		t.Fatalf("a venv entry point: writable %v, withheld %+v; want nothing writable and %s withheld", got, held, venv)
	}
	if !strings.Contains(held[0].Message("srv"), "Writable folders") {
		t.Fatalf("the withheld folder's message %q does not say how to allow it", held[0].Message("srv"))
	}
	for _, script := range []string{filepath.Join(repo, "novenv", "bin", "my-mcp"), filepath.Join(repo, "tool", "bin", "cli.js")} {
		if got, held := mcp.WritableFolders([]string{script}, "", "", nil); len(got) != 0 || len(held) != 0 {
			t.Errorf("%s: writable %v, withheld %+v; want nothing (the climb stops at bin)", script, got, held)
		}
	}
	// A package npm installed is climbed past its bin (node_modules/.bin links there).
	for _, pkg := range []string{filepath.Join(repo, "node_modules", "some-mcp"), filepath.Join(repo, "node_modules", "@scope", "mcp")} {
		if got, _ := mcp.WritableFolders([]string{filepath.Join(pkg, "bin", "cli.js")}, "", "", nil); !slices.Equal(got, []string{pkg}) {
			t.Errorf("%s/bin/cli.js: writable %v; want [%s]", pkg, got, pkg)
		}
	}
}

// A package folder that is a git repository, the home folder or a settings folder in
// it is withheld with the reason; the user can still name it in writable_paths.
func TestWritableFoldersWithholdRepositoriesAndSettings(t *testing.T) {
	home := realTemp(t)
	t.Setenv("HOME", home)
	files(t, home, map[string]string{
		"srv.js": "", "package.json": "{}",
		".config/package.json": "{}", ".config/srv.js": "",
		".ssh/setup.py": "", ".ssh/srv.py": "",
		"code/repo/package.json": "{}", "code/repo/.git/hooks/": "", "code/repo/dist/index.js": "",
		"code/worktree/pyproject.toml": "", "code/worktree/.git": "gitdir: ../repo/.git/worktrees/w\n", "code/worktree/srv.py": "",
		"code/plain/package.json": "{}", "code/plain/dist/index.js": "",
	})
	for _, c := range []struct{ script, root, why string }{
		{"srv.js", "", "home folder"},
		{".config/srv.js", ".config", "settings folder"},
		{".ssh/srv.py", ".ssh", "settings folder"},
		{"code/repo/dist/index.js", "code/repo", "git repository"},
		{"code/worktree/srv.py", "code/worktree", "git repository"},
	} {
		root := filepath.Join(home, c.root)
		got, held := mcp.WritableFolders([]string{filepath.Join(home, c.script)}, "", "", nil)
		if len(got) != 0 || !withheld(held, root, c.why) {
			t.Errorf("%s: writable %v, withheld %+v; want %s withheld (%s)", c.script, got, held, root, c.why)
		}
	}
	plain := filepath.Join(home, "code", "plain")
	if got, _ := mcp.WritableFolders([]string{filepath.Join(plain, "dist", "index.js")}, "", "", nil); !slices.Equal(got, []string{plain}) {
		t.Errorf("a package without .git: writable %v; want [%s]", got, plain)
	}
	repo := filepath.Join(home, "code", "repo")
	if got, _ := mcp.WritableFolders([]string{filepath.Join(repo, "dist", "index.js")}, "", "", []string{repo}); !slices.Equal(got, []string{repo}) {
		t.Errorf("a repository the user allowed: writable %v; want [%s]", got, repo)
	}
}

// The working folder is writable only inside the chat's workspace or the server's own
// folder; elsewhere (the home folder, a folder beside the workspace) it is withheld.
func TestWritableFoldersWorkingFolder(t *testing.T) {
	home := realTemp(t)
	t.Setenv("HOME", home)
	files(t, home, map[string]string{"ws/sub/": "", "srv/package.json": "{}", "srv/data/": "", "srv/dist/index.js": "", "elsewhere/": ""})
	script := filepath.Join(home, "srv", "dist", "index.js")
	ws, pkg := filepath.Join(home, "ws"), filepath.Join(home, "srv")
	for _, c := range []struct {
		cwd  string
		want []string
	}{
		{filepath.Join(ws, "sub"), []string{pkg, filepath.Join(ws, "sub")}},
		{filepath.Join(pkg, "data"), []string{pkg, filepath.Join(pkg, "data")}},
		{filepath.Join(home, "elsewhere"), []string{pkg}},
		{home, []string{pkg}},
	} {
		got, held := mcp.WritableFolders([]string{script}, c.cwd, ws, nil)
		if !slices.Equal(got, c.want) {
			t.Errorf("cwd %s: writable %v; want %v", c.cwd, got, c.want)
		}
		if len(c.want) == 1 && !withheld(held, c.cwd, "working folder") {
			t.Errorf("cwd %s: withheld %+v; want it withheld as the working folder", c.cwd, held)
		}
	}
}

// A refusal in npx's cache says to install the server, not to open the cache folder.
func TestRefusalHintInALauncherCache(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(home, ".npm", "_npx", "c98c", "node_modules", "@modelcontextprotocol", "server-memory", "dist", "memory.jsonl")
	hint := mcp.RefusalHint("memory", "", mcp.Refusal{Path: p, Reason: "read-only file system"})
	if !strings.Contains(hint, p) || !strings.Contains(hint, "Install the server") || !strings.Contains(hint, filepath.Join(home, ".npm")) {
		t.Fatalf("hint %q", hint)
	}
}
