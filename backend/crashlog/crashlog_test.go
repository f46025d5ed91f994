package crashlog_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"talaria/backend/crashlog"
)

// The test binary is also the process that crashes: CRASHLOG_CHILD names its crash
// folder and CRASHLOG_MODE what it does ("panic": a panic in a goroutine, as a bug in
// the app would; "clean": start and shut down).
func TestMain(m *testing.M) {
	if dir := os.Getenv("CRASHLOG_CHILD"); dir != "" {
		os.Exit(child(dir, os.Getenv("CRASHLOG_MODE")))
	}
	os.Exit(m.Run())
}

func child(dir, mode string) int {
	r, err := crashlog.Install(dir)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 3
	}
	if mode == "clean" {
		if err := r.Close(); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			return 3
		}
		return 0
	}
	block := make(chan struct{})
	go func() { panic("crash test: the window process broke") }()
	<-block
	return 0
}

func runChild(t *testing.T, dir, mode string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "CRASHLOG_CHILD="+dir, "CRASHLOG_MODE="+mode)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running the child: %v", err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// TestCrashIsKept (issue 26, item 9a): a real panic of a process with the crash log
// installed is in its folder (the panic and the stacks, as on stderr), is the newest
// crash, and the next start files it as crash-<time>.log; a clean run leaves none.
func TestCrashIsKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "crashes")
	if code, out := runChild(t, dir, "clean"); code != 0 {
		t.Fatalf("a clean run exited %d: %s", code, out)
	}
	if c, ok := crashlog.Latest(dir); ok {
		t.Fatalf("a clean run left a crash report: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "current.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a clean run left current.log (%v)", err)
	}

	code, out := runChild(t, dir, "panic")
	if code != 2 || !strings.Contains(out, "panic: crash test: the window process broke") {
		t.Fatalf("the child exited %d, want a Go panic (2):\n%s", code, out)
	}
	c, ok := crashlog.Latest(dir)
	if !ok {
		t.Fatal("no crash report after a panic")
	}
	if c.Summary != "panic: crash test: the window process broke" || !strings.Contains(c.Text, "goroutine ") ||
		!strings.Contains(c.Text, "crashlog_test.child") || c.At == 0 {
		t.Fatalf("the crash report: %+v", c)
	}

	// The next start files it; the newest crash is still that one.
	r, err := crashlog.Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	filed, ok := crashlog.Latest(dir)
	if !ok || !strings.HasPrefix(filepath.Base(filed.Path), "crash-") || filed.Text != c.Text {
		t.Fatalf("after the next start the newest crash is %+v, want the filed report of %s", filed, c.Path)
	}
	if _, err := os.Stat(filepath.Join(dir, "current.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("current.log is still there after a clean run (%v)", err)
	}
}

// TestOldReportsGo: the folder keeps the newest MaxKept reports.
func TestOldReportsGo(t *testing.T) {
	dir := t.TempDir()
	for i := range crashlog.MaxKept + 3 {
		name := filepath.Join(dir, fmt.Sprintf("crash-202001%02dT000000.000Z.log", i+1))
		if err := os.WriteFile(name, []byte("panic: old "+name+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	r, err := crashlog.Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	m, _ := filepath.Glob(filepath.Join(dir, "crash-*.log"))
	if len(m) != crashlog.MaxKept {
		t.Fatalf("%d reports kept, want %d: %v", len(m), crashlog.MaxKept, m)
	}
	if _, err := os.Stat(filepath.Join(dir, "crash-20200101T000000.000Z.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the oldest report was kept")
	}
	if c, _ := crashlog.Latest(dir); !strings.Contains(c.Summary, fmt.Sprintf("crash-202001%02dT000000.000Z.log", crashlog.MaxKept+3)) {
		t.Fatalf("the newest report is %q", c.Summary)
	}
}

// TestRecord: a report the runtime does not write (the web process ending) is filed as
// the newest crash, and the running process's current.log is left alone.
func TestRecord(t *testing.T) {
	dir := t.TempDir()
	r, err := crashlog.Install(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	path, err := crashlog.Record(dir, "webview: the window's web process crashed\n\ndetails\n")
	if err != nil {
		t.Fatal(err)
	}
	c, ok := crashlog.Latest(dir)
	if !ok || c.Path != path || c.Summary != "webview: the window's web process crashed" {
		t.Fatalf("the newest crash is %+v (%v), want %s", c, ok, path)
	}
	if _, err := os.Stat(filepath.Join(dir, "current.log")); err != nil {
		t.Fatalf("Record removed this process's current.log: %v", err)
	}
	if _, err := crashlog.Record(dir, "again\n"); err != nil {
		t.Fatalf("a second report in the same millisecond: %v", err)
	}
}
