package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newWorkspace makes a workspace with a few files and an outside directory beside it.
func newWorkspace(t *testing.T) (*Workspace, string, string) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{dir, outside, filepath.Join(dir, "sub"), filepath.Join(dir, ".git"), filepath.Join(dir, "node_modules", "x")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(dir, "a.txt"):                     "one\ntwo\nthree\n",
		filepath.Join(dir, "sub", "b.go"):               "package b\n\nfunc B() {}\n",
		filepath.Join(dir, ".git", "HEAD"):              "ref: refs/heads/main\n",
		filepath.Join(dir, "node_modules", "x", "i.js"): "func B\n",
		filepath.Join(outside, "secret.txt"):            "outside secret\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Symbolic links: out (to a file outside), outdir (to the outside dir), abs (an
	// absolute link back inside), rel (a relative link inside), up (..).
	links := map[string]string{
		"out":    filepath.Join(outside, "secret.txt"),
		"outdir": outside,
		"abs":    filepath.Join(dir, "a.txt"),
		"rel":    "a.txt",
		"reldir": "sub",
		"up":     "..",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	ws, err := OpenWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws, dir, outside
}

func TestPathsStayInside(t *testing.T) {
	ws, dir, outside := newWorkspace(t)
	refused := []string{
		"../outside/secret.txt",
		"sub/../../outside/secret.txt",
		filepath.Join(outside, "secret.txt"),
		"/etc/passwd",
		"out",
		"outdir/secret.txt",
		"up/outside/secret.txt",
		"..",
	}
	for _, p := range refused {
		if _, err := ws.ReadFile(p, 0, 0); !errors.Is(err, ErrOutside) {
			t.Errorf("ReadFile(%q): want ErrOutside, got %v", p, err)
		}
		if _, err := ws.WriteFile(p, "x"); !errors.Is(err, ErrOutside) {
			t.Errorf("WriteFile(%q): want ErrOutside, got %v", p, err)
		}
		if _, err := ws.Patch(p, "outside", "x", false); !errors.Is(err, ErrOutside) {
			t.Errorf("Patch(%q): want ErrOutside, got %v", p, err)
		}
	}
	for _, p := range []string{"outdir", "up", "..", outside} {
		if _, err := ws.ListFiles(context.Background(), p, true, 0); !errors.Is(err, ErrOutside) {
			t.Errorf("ListFiles(%q): want ErrOutside, got %v", p, err)
		}
		if _, err := ws.SearchFiles(context.Background(), "secret", p, "", false, false, 0); !errors.Is(err, ErrOutside) {
			t.Errorf("SearchFiles(%q): want ErrOutside, got %v", p, err)
		}
	}
	// Writing through a link to a new file outside is refused and creates nothing.
	if _, err := ws.WriteFile("outdir/new.txt", "x"); !errors.Is(err, ErrOutside) {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !os.IsNotExist(err) {
		t.Fatal("a file was created outside the workspace")
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "outside secret\n" {
		t.Fatal("the outside file changed")
	}
	// Inside: relative and absolute paths, links that stay inside (relative or absolute).
	for _, p := range []string{"a.txt", "./a.txt", filepath.Join(dir, "a.txt"), "sub/../a.txt", "rel", "abs"} {
		res, err := ws.ReadFile(p, 0, 0)
		if err != nil || res.Content != "one\ntwo\nthree\n" {
			t.Errorf("ReadFile(%q) = %+v, %v", p, res, err)
		}
	}
	if res, err := ws.ListFiles(context.Background(), "reldir", false, 0); err != nil || len(res.Entries) != 1 {
		t.Errorf("ListFiles(reldir) = %+v, %v", res, err)
	}
	if _, err := ws.Rel(""); err == nil {
		t.Error("an empty path was accepted")
	}
}

func TestReadFile(t *testing.T) {
	ws, dir, _ := newWorkspace(t)
	res, err := ws.ReadFile("a.txt", 2, 1)
	if err != nil || res.Content != "two\n" || res.StartLine != 2 || res.EndLine != 2 || res.TotalLines != 3 || !res.Truncated {
		t.Fatalf("%+v %v", res, err)
	}
	if res, err := ws.ReadFile("a.txt", 9, 0); err != nil || res.Content != "" || res.EndLine != 0 || res.TotalLines != 3 {
		t.Fatalf("past the end: %+v %v", res, err)
	}
	os.WriteFile(filepath.Join(dir, "bin"), []byte("a\x00b"), 0o644)
	if _, err := ws.ReadFile("bin", 0, 0); err == nil || !strings.Contains(err.Error(), "binary") {
		t.Fatalf("binary: %v", err)
	}
	if _, err := ws.ReadFile("sub", 0, 0); err == nil || !strings.Contains(err.Error(), "directory") {
		t.Fatalf("dir: %v", err)
	}
	if _, err := ws.ReadFile("missing.txt", 0, 0); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("missing: %v", err)
	}
	big := strings.Repeat(strings.Repeat("x", 1000)+"\n", 400)
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644)
	if res, err := ws.ReadFile("big.txt", 0, 0); err != nil || !res.Truncated || len(res.Content) > MaxReadBytes || res.TotalLines != 400 {
		t.Fatalf("big: %d bytes truncated %v %v", len(res.Content), res.Truncated, err)
	}
}

func TestWriteFileAndPatch(t *testing.T) {
	ws, dir, _ := newWorkspace(t)
	res, err := ws.WriteFile("new/deep/c.txt", "hello\n")
	if err != nil || !res.Created || res.Path != "new/deep/c.txt" || res.Diff != "--- /dev/null\n+++ b/new/deep/c.txt\n@@ -0,0 +1 @@\n+hello\n" ||
		len(res.FilesModified) != 1 || res.FilesModified[0] != "new/deep/c.txt" {
		t.Fatalf("%+v %v", res, err)
	}
	os.Chmod(filepath.Join(dir, "a.txt"), 0o600)
	res, err = ws.WriteFile("a.txt", "one\n2\nthree\n")
	if err != nil || res.Created || res.Diff != "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n" {
		t.Fatalf("%+v %v", res, err)
	}
	if st, _ := os.Stat(filepath.Join(dir, "a.txt")); st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", st.Mode())
	}
	if _, err := ws.WriteFile("sub", "x"); err == nil {
		t.Fatal("wrote over a directory")
	}
	if _, err := ws.WriteFile(".", "x"); err == nil {
		t.Fatal("wrote the workspace itself")
	}

	res, err = ws.Patch("sub/b.go", "func B() {}", "func B() int { return 1 }", false)
	if err != nil || res.Replacements != 1 || !strings.Contains(res.Diff, "-func B() {}\n+func B() int { return 1 }\n") || res.FilesModified[0] != "sub/b.go" {
		t.Fatalf("%+v %v", res, err)
	}
	os.WriteFile(filepath.Join(dir, "d.txt"), []byte("x y x\n"), 0o644)
	for _, tt := range []struct {
		path, old, new string
		all            bool
		want           string
	}{
		{"d.txt", "x", "z", false, "occurs 2 times"},
		{"d.txt", "q", "z", false, "not found"},
		{"d.txt", "", "z", false, "empty"},
		{"d.txt", "x", "x", false, "same"},
		{"nope.txt", "x", "z", false, "does not exist"},
	} {
		if _, err := ws.Patch(tt.path, tt.old, tt.new, tt.all); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Patch(%q, %q): %v, want %q", tt.path, tt.old, err, tt.want)
		}
	}
	res, err = ws.Patch("d.txt", "x", "z", true)
	if err != nil || res.Replacements != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "d.txt")); string(b) != "z y z\n" {
		t.Fatalf("%q", b)
	}
}

func TestListAndSearch(t *testing.T) {
	ws, _, _ := newWorkspace(t)
	ctx := context.Background()
	res, err := ws.ListFiles(ctx, "", false, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := ".git/ a.txt abs node_modules/ out outdir rel reldir sub/ up"
	if got := strings.Join(res.Entries, " "); got != want {
		t.Fatalf("entries %q", got)
	}
	res, err = ws.ListFiles(ctx, ".", true, 0)
	if err != nil || !strings.Contains(strings.Join(res.Entries, " "), "sub/b.go") || strings.Contains(strings.Join(res.Entries, " "), "HEAD") ||
		strings.Contains(strings.Join(res.Entries, " "), "i.js") {
		t.Fatalf("%+v %v", res, err)
	}
	if res, _ := ws.ListFiles(ctx, ".", true, 2); len(res.Entries) != 2 || !res.Truncated {
		t.Fatalf("cap: %+v", res)
	}

	sr, err := ws.SearchFiles(ctx, `func \w+`, "", "", false, false, 0)
	if err != nil || len(sr.Matches) != 1 || sr.Matches[0] != (Match{Path: "sub/b.go", Line: 3, Text: "func B() {}"}) {
		t.Fatalf("%+v %v", sr, err)
	}
	// The outside file is reachable only through links; search never follows them out.
	if sr, _ := ws.SearchFiles(ctx, "outside secret", ".", "", true, false, 0); len(sr.Matches) != 0 {
		t.Fatalf("searched outside: %+v", sr)
	}
	if sr, _ := ws.SearchFiles(ctx, "(", ".", "", false, false, 0); !sr.Literal || sr.Note == "" {
		t.Fatalf("bad regexp: %+v", sr)
	}
	if sr, _ := ws.SearchFiles(ctx, "ONE", ".", "*.txt", false, true, 0); len(sr.Matches) != 1 || sr.Matches[0].Path != "a.txt" {
		t.Fatalf("ignore case and glob: %+v", sr)
	}
	if sr, _ := ws.SearchFiles(ctx, "e", "a.txt", "", false, false, 1); len(sr.Matches) != 1 || !sr.Truncated {
		t.Fatalf("cap: %+v", sr)
	}
	if sr, _ := ws.SearchFiles(ctx, "package", "sub", "*.txt", false, false, 0); len(sr.Matches) != 0 {
		t.Fatalf("glob: %+v", sr)
	}
}
