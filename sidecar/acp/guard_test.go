//go:build linux

package acp_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"talaria/internal/testwait"
)

// The sidecar is SIGKILLed while its agent runs with a background child and a child
// that left the agent's process group (setsid): none of them may survive.
func TestGuardKillsTheAgentTreeWhenTheSidecarIsKilled(t *testing.T) {
	dir := t.TempDir()
	script := "echo \"$TMPDIR\" > " + filepath.Join(dir, "tmp") + "; echo snapshot > \"$TMPDIR/agent-snap.sh\"; " +
		"sleep 300 & echo $! > " + filepath.Join(dir, "bg") + "; setsid sleep 300 & echo $! > " + filepath.Join(dir, "sid") + "; exec sleep 300"
	holder := exec.Command(os.Args[0])
	holder.Env = append(os.Environ(), "TALARIA_ACP_TEST_HOLDER="+script)
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	holder.Stderr = os.Stderr
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	agent, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "pid "))
	if err != nil {
		holder.Process.Kill()
		t.Fatalf("holder said %q", line)
	}
	readPID := func(name string) int {
		var n int
		testwait.For(t, "the "+name+" pid", func() bool {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			var err error
			n, err = strconv.Atoi(strings.TrimSpace(string(b)))
			return err == nil
		})
		return n
	}
	bg, sid := readPID("bg"), readPID("sid")
	for _, pid := range []int{agent, bg, sid} {
		if !alive(pid) {
			t.Fatalf("process %d is not running before the kill", pid)
		}
	}
	// The agent's TMPDIR is a private folder of the guard's, holding what it wrote.
	b, _ := os.ReadFile(filepath.Join(dir, "tmp"))
	tmp := strings.TrimSpace(string(b))
	if st, err := os.Stat(tmp); !strings.HasPrefix(filepath.Base(tmp), "talaria-acp-") || err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the agent's TMPDIR is %q (%v, %v), not a private talaria-acp-* folder", tmp, st, err)
	}
	if _, err := os.Stat(filepath.Join(tmp, "agent-snap.sh")); err != nil {
		t.Fatalf("the agent's file in its TMPDIR: %v", err)
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	for _, pid := range []int{agent, bg, sid} {
		waitGone(t, pid)
	}
	// And the folder goes with the agent's tree.
	testwait.For(t, "the agent's TMPDIR "+tmp+" to go after the sidecar was killed", func() bool {
		_, err := os.Lstat(tmp)
		return os.IsNotExist(err)
	})
}
