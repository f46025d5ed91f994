//go:build unix

package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestRunBasics(t *testing.T) {
	dir := t.TempDir()
	res := Run(context.Background(), Command{Command: "pwd; echo out; echo err >&2; exit 3", Dir: dir})
	real, _ := filepath.EvalSymlinks(dir)
	if res.ExitCode != 3 || res.Error != "" || res.TimedOut || res.Output != real+"\nout\nerr\n" && res.Output != dir+"\nout\nerr\n" {
		t.Fatalf("%+v", res)
	}
	// stdin is closed: cat ends at once instead of waiting.
	start := time.Now()
	res = Run(context.Background(), Command{Command: "cat; echo done", Dir: dir, Timeout: 5 * time.Second})
	if res.Output != "done\n" || res.ExitCode != 0 || time.Since(start) > 3*time.Second {
		t.Fatalf("stdin: %+v", res)
	}
	// Extra environment overrides the sidecar's.
	t.Setenv("TALARIA_TEST_VAR", "parent")
	res = Run(context.Background(), Command{Command: `echo "$TALARIA_TEST_VAR $OTHER"`, Dir: dir, Env: []string{"TALARIA_TEST_VAR=child", "OTHER=x"}})
	if res.Output != "child x\n" {
		t.Fatalf("env: %+v", res)
	}
	res = Run(context.Background(), Command{Command: "true", Dir: filepath.Join(dir, "missing")})
	if res.ExitCode != -1 || res.Error == "" {
		t.Fatalf("bad dir: %+v", res)
	}
}

func TestRunOutputCapAndRedaction(t *testing.T) {
	res := Run(context.Background(), Command{
		Command: `printf 'HEAD-%s-' tok_ABCDEFGH; head -c 100000 /dev/zero | tr '\0' x; printf -- '-tok_ABCDEFGH-TAIL'`,
		Dir:     t.TempDir(), OutputLimit: 1000, Redact: NewRedactor("tok_ABCDEFGH"),
	})
	if !res.Truncated || len(res.Output) > 1100 || !strings.HasPrefix(res.Output, "HEAD-[REDACTED]-xxx") || !strings.HasSuffix(res.Output, "xxx-[REDACTED]-TAIL") ||
		!strings.Contains(res.Output, "bytes of output omitted") || strings.Contains(res.Output, "tok_") {
		t.Fatalf("%d bytes: %.200q ... %.200q", len(res.Output), res.Output, res.Output[max(0, len(res.Output)-200):])
	}
}

// pidAlive reports whether pid is a live process (a zombie waiting for its reaper counts
// as dead).
func pidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return err != nil && !os.IsNotExist(err) // no /proc (macOS): trust kill(0)
	}
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

// waitDead waits up to 2 s for pid to die.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for pidAlive(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("process %d survived", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		b, err := os.ReadFile(path)
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil && pid > 0 {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no pid in %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A child that ignores the shell's death and would run for a minute: sleep in the
// background (its pid written to a file), plus a grandchild through a subshell.
const sleeper = `sleep 60 & echo $! > child.pid; (sleep 61 & echo $! > grandchild.pid; wait) & wait`

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	res := Run(context.Background(), Command{Command: sleeper, Dir: dir, Timeout: 300 * time.Millisecond})
	took := time.Since(start)
	if !res.TimedOut || res.ExitCode != -1 || !strings.Contains(res.Error, "timed out") || took > 3*time.Second {
		t.Fatalf("%+v after %v", res, took)
	}
	waitDead(t, readPid(t, filepath.Join(dir, "child.pid")))
	waitDead(t, readPid(t, filepath.Join(dir, "grandchild.pid")))
}

func TestRunCancelKillsTheGroup(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan CommandResult, 1)
	go func() { done <- Run(ctx, Command{Command: sleeper, Dir: dir}) }()
	child := readPid(t, filepath.Join(dir, "child.pid"))
	grandchild := readPid(t, filepath.Join(dir, "grandchild.pid"))
	start := time.Now()
	cancel()
	select {
	case res := <-done:
		if res.ExitCode != -1 || res.Error != interruptedMessage {
			t.Fatalf("%+v", res)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("cancel did not end the command")
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("cancel took %v", took)
	}
	waitDead(t, child)
	waitDead(t, grandchild)
}

// TestRunKillsLeftoverBackgroundJobs: a command that exits at once but leaves a job
// running in the background does not hold the call, and the job does not survive.
func TestRunKillsLeftoverBackgroundJobs(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	res := Run(context.Background(), Command{Command: "sleep 60 & echo $! > child.pid; echo started", Dir: dir})
	if res.ExitCode != 0 || res.Output != "started\n" || time.Since(start) > 2*time.Second {
		t.Fatalf("%+v after %v", res, time.Since(start))
	}
	waitDead(t, readPid(t, filepath.Join(dir, "child.pid")))
}

func TestMergeEnv(t *testing.T) {
	got := mergeEnv([]string{"A=1", "B=2", "=C:=x"}, []string{"B=3", "D=4"})
	if strings.Join(got, " ") != "A=1 =C:=x B=3 D=4" {
		t.Fatal(got)
	}
}
