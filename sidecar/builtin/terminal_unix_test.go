//go:build unix

package builtin

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestTerminalTool: the command runs in the workspace and its result reaches the model.
func TestTerminalTool(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := workspace(t, map[string]string{"f.txt": "x"})
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("t1", "terminal", map[string]any{"command": "ls; echo oops >&2; exit 2"})),
		providertest.CallTurn("", providertest.Call("t2", "terminal", map[string]any{"command": "sleep 3600", "timeout": 1})),
		providertest.CallTurn("", providertest.Call("t3", "terminal", map[string]any{"command": "head -c 5000 /dev/zero | tr '\\0' y"})),
		providertest.TextTurn("ok"),
	)
	run := startChat(t, New(Options{OutputLimit: 1000}), toolParams(p, "s1", dir))
	run.mustResult()
	done := toolCompletes(t, run)
	var r1 struct {
		Output   string `json:"output"`
		ExitCode int    `json:"exit_code"`
		Error    string `json:"error"`
	}
	json.Unmarshal(done[0].RawResult, &r1)
	if r1.Output != "f.txt\noops\n" || r1.ExitCode != 2 || r1.Error != "" {
		t.Fatalf("terminal %s", done[0].RawResult)
	}
	// The hour's sleep ended by the 1 s timeout: never before it, and (however slow the
	// machine) long before the sleep's end.
	if !strings.Contains(string(done[1].RawResult), "timed out after 1s") || done[1].DurationS < 0.9 || done[1].DurationS >= 3600 {
		t.Fatalf("timeout %+v", done[1])
	}
	if !strings.Contains(string(done[2].RawResult), "bytes of output omitted") || len(done[2].Preview) > 1200 {
		t.Fatalf("cap %+v", done[2])
	}
	tr, _ := p.Requests()[1].ToolResult("t1")
	if !strings.Contains(tr.Content, `"exit_code":2`) {
		t.Fatalf("tool message %s", tr.Content)
	}
}

// TestStopDuringTerminal: cancelling the turn while a command runs kills everything it
// started and ends the turn cancelled with the rows so far.
func TestStopDuringTerminal(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := t.TempDir()
	marker := "60." + strconv.Itoa(os.Getpid()) + "77"
	p.Enqueue(providertest.CallTurn("Running.",
		providertest.Call("t1", "terminal", map[string]any{"command": "sleep " + marker + " & (until test -e go; do sleep 0.05; done; echo late > late.txt) & echo x > started.txt; wait"}),
		providertest.Call("t2", "terminal", map[string]any{"command": "touch ran.txt"})))
	run := startChat(t, New(Options{}), toolParams(p, "s1", dir))
	testwait.For(t, "the command's start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "started.txt"))
		return err == nil
	})
	// The command's sleep lasts a minute and its job waits for the file go: the result
	// coming at all shows the stop did not wait for them.
	begin := time.Now()
	run.cancel()
	res := run.mustResult()
	t.Logf("stop took %v", time.Since(begin))
	if res.Status != protocol.StatusCancelled || !res.Partial || res.FinalResponse != "Running." || len(res.Messages) != 3 {
		t.Fatalf("result %+v", res)
	}
	if !strings.Contains(res.Messages[1].Content, "interrupted") || !strings.Contains(res.Messages[2].Content, "not run") {
		t.Fatalf("rows %+v", res.Messages)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran.txt")); !os.IsNotExist(err) {
		t.Fatal("the call after the stop ran")
	}
	// Every process of the command (the sleep, and the job: a subshell, whose command
	// line is the command's) is gone.
	if !testwait.Until(func() bool { return len(hostProcsWith(marker)) == 0 }) {
		for _, pid := range hostProcsWith(marker) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatal("the command's child survived the stop")
	}
	// Belt and braces: the job writes once it is let (the file go); a job that survived
	// the stop would write. A negative over time, so a slow machine can only make it
	// pass: the processes' check above is the one that decides.
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond)
	if _, err := os.Stat(filepath.Join(dir, "late.txt")); err == nil {
		t.Fatal("a job of the stopped command wrote afterwards")
	}
}

// hostProcsWith returns the pids of live processes whose command line contains marker
// (seen from the host: the sandbox's PID namespace hides them only from the command).
func hostProcsWith(marker string) []int {
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
