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
	"time"
)

// The sidecar is SIGKILLed while its agent runs with a background child and a child
// that left the agent's process group (setsid): none of them may survive.
func TestGuardKillsTheAgentTreeWhenTheSidecarIsKilled(t *testing.T) {
	dir := t.TempDir()
	script := "sleep 300 & echo $! > " + filepath.Join(dir, "bg") + "; setsid sleep 300 & echo $! > " + filepath.Join(dir, "sid") + "; exec sleep 300"
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
		deadline := time.Now().Add(5 * time.Second)
		for {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
				return n
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s pid", name)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	bg, sid := readPID("bg"), readPID("sid")
	for _, pid := range []int{agent, bg, sid} {
		if !alive(pid) {
			t.Fatalf("process %d is not running before the kill", pid)
		}
	}
	holder.Process.Signal(syscall.SIGKILL)
	holder.Wait()
	for _, pid := range []int{agent, bg, sid} {
		waitGone(t, pid, 5*time.Second)
	}
}
