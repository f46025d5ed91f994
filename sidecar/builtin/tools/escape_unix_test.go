//go:build unix

package tools

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"talaria/internal/testwait"
)

// Escapes an attacker tries against the file tools: special files, hard links, a
// symbolic link swapped in while the tools work, hidden folders inside the workspace.

// withTimeout fails the test when f does not return within testwait's deadline (a FIFO
// must never hang a tool: nothing ever writes to the test's FIFOs).
func withTimeout(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	testwait.Done(t, done, what+" to return")
}

func TestFIFOAndSpecialFiles(t *testing.T) {
	ws, dir, _ := newWorkspace(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "sub", "pipe2"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("pipe", filepath.Join(dir, "pipelink"))
	for _, p := range []string{"pipe", "pipelink"} {
		withTimeout(t, "read_file of a FIFO", func() {
			if _, err := ws.ReadFile(p, 0, 0); !errors.Is(err, ErrNotRegular) {
				t.Errorf("ReadFile(%s): %v", p, err)
			}
		})
		withTimeout(t, "write_file of a FIFO", func() {
			if _, err := ws.WriteFile(p, "x"); !errors.Is(err, ErrNotRegular) {
				t.Errorf("WriteFile(%s): %v", p, err)
			}
		})
		withTimeout(t, "patch of a FIFO", func() {
			if _, err := ws.Patch(p, "a", "b", false); !errors.Is(err, ErrNotRegular) {
				t.Errorf("Patch(%s): %v", p, err)
			}
		})
	}
	withTimeout(t, "search_files over FIFOs", func() {
		res, err := ws.SearchFiles(context.Background(), "package", ".", "", false, false, 0)
		if err != nil || len(res.Matches) != 1 || res.Skipped < 2 {
			t.Errorf("search: %+v %v", res, err)
		}
	})
	withTimeout(t, "search_files of one FIFO", func() {
		if res, err := ws.SearchFiles(context.Background(), "x", "pipe", "", false, false, 0); err == nil && len(res.Matches) > 0 {
			t.Errorf("search of a FIFO: %+v", res)
		}
	})
	withTimeout(t, "list_files beside FIFOs", func() {
		if res, err := ws.ListFiles(context.Background(), ".", true, 0); err != nil || !contains(res.Entries, "pipe") {
			t.Errorf("list: %+v %v", res, err)
		}
	})
	// The FIFO is still a FIFO: nothing replaced it.
	if st, err := os.Lstat(filepath.Join(dir, "pipe")); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", st, err)
	}
	// A socket is refused the same way.
	if ln, err := listenUnix(filepath.Join(dir, "sock")); err == nil {
		defer ln.Close()
		withTimeout(t, "read_file of a socket", func() {
			if _, err := ws.ReadFile("sock", 0, 0); err == nil {
				t.Error("read a socket")
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestHardLinks(t *testing.T) {
	ws, dir, outside := newWorkspace(t)
	secret := filepath.Join(outside, "secret.txt")
	if err := os.Link(secret, filepath.Join(dir, "hard.txt")); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.ReadFile("hard.txt", 0, 0); !errors.Is(err, ErrHardLinked) {
		t.Fatalf("read through a hard link: %v", err)
	}
	if _, err := ws.WriteFile("hard.txt", "changed"); !errors.Is(err, ErrHardLinked) {
		t.Fatalf("write through a hard link: %v", err)
	}
	if _, err := ws.Patch("hard.txt", "outside", "inside", false); !errors.Is(err, ErrHardLinked) {
		t.Fatalf("patch through a hard link: %v", err)
	}
	res, err := ws.SearchFiles(context.Background(), "outside secret", ".", "", true, false, 0)
	if err != nil || len(res.Matches) != 0 {
		t.Fatalf("search through a hard link: %+v %v", res, err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "outside secret\n" {
		t.Fatalf("the outside file changed: %q", b)
	}
	// A write replaces a file by rename: an ordinary file's inode is never written in
	// place (so a link made after the check cannot be written through).
	before, _ := os.Stat(filepath.Join(dir, "a.txt"))
	if _, err := ws.WriteFile("a.txt", "new\n"); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Stat(filepath.Join(dir, "a.txt"))
	if os.SameFile(before, after) {
		t.Fatal("write_file changed the file in place")
	}
	if before.Mode().Perm() != after.Mode().Perm() {
		t.Fatalf("permissions not kept: %v -> %v", before.Mode(), after.Mode())
	}
	left, _ := os.ReadDir(dir)
	for _, e := range left {
		if strings.Contains(e.Name(), ".talaria-") {
			t.Fatalf("a temporary file was left: %s", e.Name())
		}
	}
}

// TestSymlinkRace: while the tools read and write sub/f, another goroutine keeps
// swapping sub between a real folder and a link to the outside folder. No call may read
// the outside secret or change anything outside.
func TestSymlinkRace(t *testing.T) {
	ws, dir, outside := newWorkspace(t)
	secretPath := filepath.Join(outside, "secret.txt")
	os.WriteFile(filepath.Join(outside, "f"), []byte("outside secret\n"), 0o644)
	race := filepath.Join(dir, "race")
	real := filepath.Join(dir, "race-real")
	os.MkdirAll(real, 0o755)
	os.WriteFile(filepath.Join(real, "f"), []byte("inside\n"), 0o644)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			os.Remove(race)
			os.Symlink(real, race)
			os.Remove(race)
			os.Symlink(outside, race)
		}
	}()
	deadline := time.Now().Add(1500 * time.Millisecond)
	reads, writes := 0, 0
	for time.Now().Before(deadline) {
		if res, err := ws.ReadFile("race/f", 0, 0); err == nil {
			reads++
			if strings.Contains(res.Content, "outside") {
				stop.Store(true)
				wg.Wait()
				t.Fatal("read the outside file through a swapped link")
			}
		}
		if _, err := ws.WriteFile("race/f", "written\n"); err == nil {
			writes++
		}
		if res, err := ws.SearchFiles(context.Background(), "outside", "race", "", true, false, 0); err == nil && len(res.Matches) > 0 {
			stop.Store(true)
			wg.Wait()
			t.Fatal("search found the outside file through a swapped link")
		}
	}
	stop.Store(true)
	wg.Wait()
	if b, _ := os.ReadFile(filepath.Join(outside, "f")); string(b) != "outside secret\n" {
		t.Fatalf("the outside file was written: %q", b)
	}
	if b, _ := os.ReadFile(secretPath); string(b) != "outside secret\n" {
		t.Fatalf("the outside secret changed: %q", b)
	}
	ents, _ := os.ReadDir(outside)
	for _, e := range ents {
		if e.Name() != "f" && e.Name() != "secret.txt" {
			t.Fatalf("a file was created outside: %s", e.Name())
		}
	}
	t.Logf("%d reads and %d writes went through inside", reads, writes)
}

func TestHiddenInsideWorkspace(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "ws")
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o700)
	os.WriteFile(filepath.Join(data, "talaria.db"), []byte("SECRET settings"), 0o600)
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("fine"), 0o644)
	os.Symlink("data", filepath.Join(dir, "dlink"))
	os.Symlink(filepath.Join(data, "talaria.db"), filepath.Join(dir, "flink"))
	ws, err := OpenWorkspace(dir, data)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	for _, p := range []string{"data/talaria.db", "dlink/talaria.db", "flink", filepath.Join(data, "talaria.db"), "./data/../data/talaria.db"} {
		if res, err := ws.ReadFile(p, 0, 0); err == nil || strings.Contains(res.Content, "SECRET") {
			t.Errorf("ReadFile(%s) = %+v, %v", p, res, err)
		}
		if _, err := ws.WriteFile(p, "x"); err == nil {
			t.Errorf("WriteFile(%s) succeeded", p)
		}
		if _, err := ws.Patch(p, "SECRET", "x", false); err == nil {
			t.Errorf("Patch(%s) succeeded", p)
		}
	}
	if _, err := ws.WriteFile("dlink/new.txt", "x"); err == nil {
		t.Error("wrote into the hidden folder through a link")
	}
	if _, err := os.Stat(filepath.Join(data, "new.txt")); err == nil {
		t.Error("a file appeared in the hidden folder")
	}
	if b, _ := os.ReadFile(filepath.Join(data, "talaria.db")); string(b) != "SECRET settings" {
		t.Fatalf("the hidden file changed: %q", b)
	}
	list, _ := ws.ListFiles(context.Background(), ".", true, 0)
	for _, e := range list.Entries {
		if strings.HasPrefix(e, "data") && e != "dlink" {
			t.Errorf("listed a hidden entry: %s", e)
		}
	}
	if res, _ := ws.SearchFiles(context.Background(), "SECRET", ".", "", true, false, 0); len(res.Matches) != 0 {
		t.Errorf("search found hidden content: %+v", res)
	}
	if _, err := ws.ReadFile("ok.txt", 0, 0); err != nil {
		t.Fatal(err)
	}
	// A workspace inside (or equal to) a hidden folder is refused.
	if _, err := OpenWorkspace(data, data); err == nil {
		t.Fatal("a workspace inside a hidden path was opened")
	}
}

func listenUnix(path string) (interface{ Close() error }, error) {
	return net.Listen("unix", path)
}
