package hermes

import (
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"talaria/internal/testwait"
)

// The sweep at a runtime's start also ends what a gateway killed with its sidecar left
// running: processes in sessions of their own (as Hermes starts its terminal's
// commands) whose TMPDIR is a stale folder. Processes whose TMPDIR is a live
// sidecar's folder, or only begins like a stale one, keep running.
func TestSweepKillsWhatADeadGatewayLeftRunning(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-2 * staleGrace)
	mk := func(name string, aged bool) string {
		t.Helper()
		p := filepath.Join(root, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if aged {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	stale := mk("talaria-hermes-"+strconv.Itoa(deadPid(t))+"-5150", true)
	live := mk("talaria-hermes-"+strconv.Itoa(os.Getpid())+"-5151", true)
	start := func(tmpdir string) *exec.Cmd {
		t.Helper()
		cmd := exec.Command("sleep", "600")
		cmd.Env = append(os.Environ(), "TMPDIR="+tmpdir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() }) //nolint:errcheck
		return cmd
	}
	left := start(stale)
	keep := []*exec.Cmd{start(live), start(stale + "0"), start(filepath.Dir(stale))}
	// exec.Command's Start returns before the child's exec: wait until its environment
	// is the sleep's.
	for _, c := range append([]*exec.Cmd{left}, keep...) {
		testwait.For(t, "the sleep's exec", func() bool {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(c.Process.Pid) + "/cmdline")
			return string(b) == "sleep\x00600\x00"
		})
	}
	removed := sweepStaleTempDirs(root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(removed) != 1 || removed[0] != stale {
		t.Fatalf("removed %v, want only %s", removed, stale)
	}
	exited := make(chan error, 1)
	go func() { exited <- left.Wait() }()
	err := testwait.Recv(t, exited, "the end of the process whose TMPDIR is the stale folder, after the sweep")
	if ws, ok := left.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Errorf("the stale folder's process ended with %v, not SIGKILL", err)
	}
	for _, c := range keep {
		if err := syscall.Kill(c.Process.Pid, 0); err != nil {
			t.Errorf("a process with TMPDIR=%s was killed: %v", c.Env[len(c.Env)-1], err)
		}
	}
}
