//go:build unix

package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/sandbox"
)

func TestRunBasics(t *testing.T) {
	dir := t.TempDir()
	res := Run(context.Background(), Command{Command: "pwd; echo out; echo err >&2; exit 3", Dir: dir})
	real, _ := filepath.EvalSymlinks(dir)
	if res.ExitCode != 3 || res.Error != "" || res.TimedOut || res.Output != real+"\nout\nerr\n" && res.Output != dir+"\nout\nerr\n" {
		t.Fatalf("%+v", res)
	}
	// stdin is closed: cat ends at once instead of waiting (a cat that waited would be
	// killed at the timeout, the tests' deadline, without printing done).
	res = Run(context.Background(), Command{Command: "cat; echo done", Dir: dir, Timeout: testwait.Timeout})
	if res.Output != "done\n" || res.ExitCode != 0 || res.TimedOut {
		t.Fatalf("stdin: %+v", res)
	}
	// The command gets a minimal environment plus what it is given, nothing else of the
	// sidecar's.
	t.Setenv("TALARIA_TEST_VAR", "parent")
	res = Run(context.Background(), Command{Command: `echo "[$TALARIA_TEST_VAR] $OTHER $HOME"`, Dir: dir, Env: []string{"OTHER=x"}})
	if res.Output != "[] x "+os.Getenv("HOME")+"\n" || res.Sandbox != "workspace-write, no network" {
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

// procsWith returns the host pids of live processes whose command line contains
// marker (the sandbox's PID namespace hides them from the command, not from the host).
func procsWith(marker string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil || !strings.Contains(string(b), marker) {
			continue
		}
		if st, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if f := strings.Fields(string(st)); len(f) > 2 && f[2] == "Z" {
				continue
			}
		}
		out = append(out, pid)
	}
	return out
}

// waitGone waits (testwait's deadline) until no process carries marker.
func waitGone(t *testing.T, marker string) {
	t.Helper()
	if !testwait.Until(func() bool { return len(procsWith(marker)) == 0 }) {
		for _, p := range procsWith(marker) {
			syscall.Kill(p, syscall.SIGKILL)
		}
		t.Fatalf("processes with %q survived", marker)
	}
}

// waitStarted waits (testwait's deadline) until a process carries marker.
func waitStarted(t *testing.T, marker string) {
	t.Helper()
	testwait.For(t, "a process with "+marker, func() bool { return len(procsWith(marker)) > 0 })
}

// sleeper leaves a child that ignores the shell's death and would run for an hour, plus
// a grandchild through a subshell, and a job that writes a file once assertNoLateWrite
// lets it (lateJob); each sleep carries a unique duration so the host can find it
// (markers sleeperMarkers).
func sleeper(tag string) string {
	return fmt.Sprintf(`sleep 3600.%[1]s1 & (sleep 3601.%[1]s2 & wait) & %[2]s & wait`, tag, lateJob)
}

// sleeperMarkers are the command-line markers of sleeper(tag)'s two sleeps.
func sleeperMarkers(tag string) []string { return []string{"3600." + tag, "3601." + tag} }

// lateJob writes late.txt once the file "go" exists: assertNoLateWrite creates it after
// the kill, so a job that survived writes, and one that was killed, however slowly the
// kill came, never does (a job that wrote after a fixed second could do so before a
// kill that a loaded machine delayed).
const lateJob = `(until test -e go; do sleep 0.05; done; echo late > late.txt)`

func assertNoLateWrite(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Fatal("a background job wrote before it was let")
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A negative over time, so a slow machine can only make it pass; the callers'
	// waitGone (every process of the command gone) is the check that decides.
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Fatal("a background job wrote after the command was killed")
	}
}

func forEachPolicy(t *testing.T, f func(t *testing.T, mode sandbox.Mode)) {
	for _, m := range []sandbox.Mode{sandbox.ModeWorkspaceWrite, sandbox.ModeFullAccess} {
		t.Run(string(m), func(t *testing.T) { f(t, m) })
	}
}

func TestRunTimeoutKillsTheGroup(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, mode sandbox.Mode) {
		dir := t.TempDir()
		tag := strconv.Itoa(os.Getpid()) + "1" + strconv.Itoa(len(mode))
		start := time.Now()
		res := Run(context.Background(), Command{Command: sleeper(tag), Dir: dir, Timeout: 300 * time.Millisecond, Policy: sandbox.Policy{Mode: mode}})
		took := time.Since(start)
		// Ended by the timeout (never before it), not by its sleeps (an hour).
		if !res.TimedOut || res.ExitCode != -1 || !strings.Contains(res.Error, "timed out") || took < 300*time.Millisecond || took >= time.Hour {
			t.Fatalf("%+v after %v", res, took)
		}
		for _, m := range sleeperMarkers(tag) {
			waitGone(t, m)
		}
		assertNoLateWrite(t, dir)
	})
}

func TestRunCancelKillsTheGroup(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, mode sandbox.Mode) {
		dir := t.TempDir()
		tag := strconv.Itoa(os.Getpid()) + "2" + strconv.Itoa(len(mode))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan CommandResult, 1)
		go func() { done <- Run(ctx, Command{Command: sleeper(tag), Dir: dir, Policy: sandbox.Policy{Mode: mode}}) }()
		waitStarted(t, sleeperMarkers(tag)[1])
		start := time.Now()
		cancel()
		// Its sleeps last an hour: a result at all was the cancel's.
		if res := testwait.Recv(t, done, "the cancelled command's result"); res.ExitCode != -1 || res.Error != interruptedMessage {
			t.Fatalf("%+v", res)
		}
		t.Logf("cancel took %v", time.Since(start))
		for _, m := range sleeperMarkers(tag) {
			waitGone(t, m)
		}
		assertNoLateWrite(t, dir)
	})
}

// TestRunKillsLeftoverBackgroundJobs: a command that exits at once but leaves a job
// running in the background (even in a new session) does not hold the call, and the job
// does not survive.
func TestRunKillsLeftoverBackgroundJobs(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, mode sandbox.Mode) {
		dir := t.TempDir()
		tag := strconv.Itoa(os.Getpid()) + "3" + strconv.Itoa(len(mode))
		// The job waits for the file go, written only after Run returned: a Run that
		// waited for it would never return (testwait's deadline).
		done := make(chan CommandResult, 1)
		go func() {
			done <- Run(context.Background(), Command{Command: "sleep 3600." + tag + " & " + lateJob + " & echo started", Dir: dir, Policy: sandbox.Policy{Mode: mode}})
		}()
		if res := testwait.Recv(t, done, "the command's result while its job runs"); res.ExitCode != 0 || res.Output != "started\n" {
			t.Fatalf("%+v", res)
		}
		waitGone(t, "3600."+tag)
		assertNoLateWrite(t, dir)
	})
}
