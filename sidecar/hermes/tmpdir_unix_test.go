//go:build unix

package hermes

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"talaria/internal/testwait"
)

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// A runtime's start removes the gateway folders of sidecars that are gone and nothing
// else: not a live sidecar's (ours), not a name it does not make, not a link.
func TestSweepRemovesOnlyDeadSidecarsFolders(t *testing.T) {
	root := t.TempDir()
	dead := strconv.Itoa(deadPid(t))
	mkdir := func(name string) string {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "sub", "hermes-snap-1.sh"), []byte("declare -x TOKEN=secret\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	old := time.Now().Add(-2 * staleGrace)
	stale := mkdir("talaria-hermes-" + dead + "-123456")
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	live := mkdir("talaria-hermes-" + strconv.Itoa(os.Getpid()) + "-42")
	kept := []string{live,
		mkdir("talaria-hermes-1-7"), // init: alive
		mkdir("talaria-hermes-" + dead),
		mkdir("talaria-hermes-" + dead + "-"),
		mkdir("talaria-hermes-" + dead + "-12x"),
		mkdir("talaria-hermes-abc-1"),
		mkdir("talaria-hermes--" + dead + "-1"),
		mkdir("talaria-hermes-+" + dead + "-1"),
		mkdir("talaria-hermes-0-1"),
		mkdir("talaria-hermes-4294967297-1"), // would be pid 1 as a 32-bit pid_t
		mkdir("other-hermes-" + dead + "-1"),
		mkdir("Talaria-hermes-" + dead + "-1"),
		mkdir("talaria-hermes-" + dead + "-77"), // no lock yet and just made: being set up
	}
	// The owner lock decides where there is one: held (its sidecar lives, whatever
	// its pid names here) keeps the folder; free (its sidecar is gone, even though
	// the pid is some live process, as from another pid namespace) removes it.
	held := mkdir("talaria-hermes-" + dead + "-88")
	if err := os.Chtimes(held, old, old); err != nil {
		t.Fatal(err)
	}
	lock, err := lockTempDir(held)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	kept = append(kept, held)
	freed := mkdir("talaria-hermes-1-99") // pid 1 is alive
	if err := os.WriteFile(filepath.Join(freed, ownerLockName), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A file and a link with a dead owner's name are left alone (and the link's
	// target with them).
	file := filepath.Join(root, "talaria-hermes-"+dead+"-5")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	target := mkdir("link-target")
	link := filepath.Join(root, "talaria-hermes-"+dead+"-6")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, file, target, link, filepath.Join(target, "sub", "hermes-snap-1.sh"))

	removed := sweepStaleTempDirs(root, slog.New(slog.DiscardHandler))
	slices.Sort(removed)
	want := []string{stale, freed}
	slices.Sort(want)
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q, want only %q", removed, want)
	}
	if _, err := os.Lstat(stale); !os.IsNotExist(err) {
		t.Errorf("the dead sidecar's folder is still there: %v", err)
	}
	for _, p := range kept {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was not to be touched: %v", p, err)
		}
	}
	// A root that cannot be listed is no error.
	if got := sweepStaleTempDirs(filepath.Join(root, "missing"), slog.New(slog.DiscardHandler)); got != nil {
		t.Errorf("sweeping a missing folder: %q", got)
	}
}

func TestTempDirNamesParse(t *testing.T) {
	dir, err := newTempDir()
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if pid, ok := tempDirOwner(filepath.Base(dir)); !ok || pid != os.Getpid() {
		t.Errorf("newTempDir's %s parses as pid %d %v", dir, pid, ok)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("newTempDir's folder: %v %v", st, err)
	}
}

// The gateway's folder goes on every way it ends: a command that cannot start, and a
// process that exits on its own (the folder is gone when done is closed). These are
// plain processes, not Hermes: TestGatewayTempDirAgainstRealHermes is the real one.
func TestGatewayTempDirRemovedWhenItEnds(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	log := slog.New(slog.DiscardHandler)
	left := func() []string {
		m, _ := filepath.Glob(filepath.Join(tmp, tempDirPrefix+"*"))
		return m
	}

	if _, err := startGateway([]string{filepath.Join(tmp, "no-such-python")}, nil, tmp, log, nil, nil, nil); err == nil {
		t.Fatal("a missing command started")
	}
	if l := left(); len(l) != 0 {
		t.Errorf("a gateway that did not start left %q", l)
	}

	out := filepath.Join(t.TempDir(), "env")
	g, err := startGateway([]string{"sh", "-c", `echo "$TMPDIR $TMP $TEMP" > "$0"; touch "$TMPDIR/hermes-snap-1.sh"`, out},
		[]string{"TMPDIR=/elsewhere", "TMP=/elsewhere"}, tmp, log, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	testwait.Done(t, g.done, "the end of the process")
	b, _ := os.ReadFile(out)
	if want := g.tmpDir + " " + g.tmpDir + " " + g.tmpDir + "\n"; string(b) != want {
		t.Errorf("the process saw TMPDIR TMP TEMP %q, want %q", b, want)
	}
	if l := left(); len(l) != 0 {
		t.Errorf("a gateway that exited left %q", l)
	}
}
