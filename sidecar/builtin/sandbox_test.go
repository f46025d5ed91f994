//go:build linux

package builtin

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
	"talaria/sidecar/sandbox"
)

// The terminal tool under the session's sandbox policy: confined by default, asking to
// leave the sandbox, asking every command when no sandbox is available.

func TestTerminalRunsConfined(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := workspace(t, map[string]string{"f.txt": "x"})
	data := t.TempDir()
	os.WriteFile(filepath.Join(data, "talaria.db"), []byte("SECRET"), 0o600)
	outside := filepath.Join(data, "..", filepath.Base(data)+"-outside")
	os.MkdirAll(outside, 0o755)
	defer os.RemoveAll(outside)
	p.Enqueue(
		// The data folder's path spelled so the table does not see it: the sandbox hides it anyway.
		providertest.CallTurn("", providertest.Call("t1", "terminal", map[string]any{"command": "echo in > in.txt; echo out > " + outside + "/x; cat \"$(printf '\\057%s' " + data[1:] + ")/talaria.db\""})),
		providertest.TextTurn("ok"),
	)
	params := toolParams(p, "s1", dir)
	params.Sandbox = &protocol.SandboxPolicy{HiddenPaths: []string{data}}
	run := startChat(t, New(Options{}), params)
	run.mustResult()
	done := toolCompletes(t, run)
	raw := string(done[0].RawResult)
	if !exists(filepath.Join(dir, "in.txt")) || exists(filepath.Join(outside, "x")) || strings.Contains(raw, "SECRET") {
		t.Fatalf("confinement: %s", raw)
	}
	if s, _ := rawField(t, done[0].RawResult, "sandbox").(string); s != "workspace-write, no network" {
		t.Fatalf("sandbox field %q", s)
	}
	if note, _ := rawField(t, done[0].RawResult, "sandbox_note").(string); !strings.Contains(note, "escalate") {
		t.Fatalf("a failed confined command carries no sandbox note: %s", raw)
	}
	sys := p.Requests()[0].Messages[0].Content
	if !strings.Contains(sys, "Commands run in a sandbox (workspace-write, no network)") {
		t.Fatalf("system prompt: %s", sys)
	}
}

// TestEscalateNetwork: a command that asks for the network is approved first; denied,
// it does not run; allowed, it reaches the host.
func TestEscalateNetwork(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Every connection names the call that made it; the listener accepts them one by
	// one, in the order they were made (the kernel's accept queue).
	var mu sync.Mutex
	var hits []string
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(testwait.Timeout)) //nolint:errcheck
			line, _ := bufio.NewReader(c).ReadString('\n')
			c.Close()
			mu.Lock()
			hits = append(hits, strings.TrimSpace(line))
			mu.Unlock()
		}
	}()
	probe := func(call string) string {
		return fmt.Sprintf(`python3 -c "import socket; s = socket.create_connection(('127.0.0.1', %d), 2); s.sendall(b'%s\n'); print('CONNECTED')"`, ln.Addr().(*net.TCPAddr).Port, call)
	}
	p := providertest.Start()
	defer p.Close()
	dir := t.TempDir()
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("t1", "terminal", map[string]any{"command": probe("t1")})),
		providertest.CallTurn("", providertest.Call("t2", "terminal", map[string]any{"command": probe("t2"), "escalate": "network", "justification": "fetch the page"})),
		providertest.CallTurn("", providertest.Call("t3", "terminal", map[string]any{"command": probe("t3"), "escalate": "network"})),
		providertest.TextTurn("ok"),
	)
	rt := New(Options{})
	run := startChat(t, rt, toolParams(p, "s1", dir))
	ap := approve(t, rt, run, "s1", 1, protocol.ChoiceDeny)
	if ap.Pattern != protocol.PatternSandboxNetwork || ap.Justification != "fetch the page" || !strings.Contains(ap.Sandbox, "network on") {
		t.Fatalf("approval %+v", ap)
	}
	approve(t, rt, run, "s1", 2, protocol.ChoiceOnce)
	run.mustResult()
	done := toolCompletes(t, run)
	if strings.Contains(done[0].Preview, "CONNECTED") || !strings.Contains(terminalError(t, done[1]), "denied") || !strings.Contains(done[2].Preview, "CONNECTED") {
		t.Fatalf("previews: %q / %q / %q", done[0].Preview, done[1].Preview, done[2].Preview)
	}
	// The approved call's connection is accepted (the accept loop is another goroutine:
	// waited for); one of the earlier calls would have been accepted before it.
	var got []string
	testwait.For(t, "the approved call at the canary", func() bool {
		mu.Lock()
		defer mu.Unlock()
		got = append([]string(nil), hits...)
		return slices.Contains(got, "t3")
	})
	if !slices.Equal(got, []string{"t3"}) {
		t.Fatalf("the canary was reached by %q, want only the approved call", got)
	}
}

// TestNoSandboxAsksEveryCommand: without a sandbox every command asks, once only: a
// "session" answer does not let the next one through.
func TestNoSandboxAsksEveryCommand(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := t.TempDir()
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("t1", "terminal", map[string]any{"command": "echo one > one.txt"})),
		providertest.CallTurn("", providertest.Call("t2", "terminal", map[string]any{"command": "echo two > two.txt"})),
		providertest.TextTurn("ok"),
	)
	rt := New(Options{SandboxStatus: func() sandbox.Status {
		return sandbox.Status{Reason: "bubblewrap (bwrap) is not installed", Hint: "install it"}
	}})
	run := startChat(t, rt, toolParams(p, "s1", dir))
	ap := approve(t, rt, run, "s1", 1, protocol.ChoiceSession)
	if ap.Pattern != protocol.PatternUnsandboxed || strings.Join(ap.Choices, ",") != "once,deny" || !strings.Contains(ap.Description, "not installed") || ap.Sandbox != "outside the sandbox" {
		t.Fatalf("approval %+v", ap)
	}
	approve(t, rt, run, "s1", 2, protocol.ChoiceDeny)
	run.mustResult()
	if !exists(filepath.Join(dir, "one.txt")) || exists(filepath.Join(dir, "two.txt")) {
		t.Fatal("the first command should have run, the denied second one not")
	}
	// The allowlist does not let it through either; YOLO does.
	p.Enqueue(providertest.CallTurn("", providertest.Call("t3", "terminal", map[string]any{"command": "echo three > three.txt"})), providertest.TextTurn("ok"))
	params := toolParams(p, "s1", dir)
	params.ApprovalAllowlist = []string{protocol.PatternUnsandboxed}
	params.Yolo = true
	run = startChat(t, rt, params)
	run.mustResult()
	if !exists(filepath.Join(dir, "three.txt")) || len(run.of(protocol.EvApproval)) != 0 {
		t.Fatal("YOLO should run it without a card")
	}
}

// TestReadOnlyPolicy: commands cannot write the workspace; write_file asks.
func TestReadOnlyPolicy(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	dir := workspace(t, map[string]string{"f.txt": "v1\n"})
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("t1", "terminal", map[string]any{"command": "echo v2 > f.txt"})),
		providertest.CallTurn("", providertest.Call("t2", "write_file", map[string]any{"path": "f.txt", "content": "v3\n"})),
		providertest.CallTurn("", providertest.Call("t3", "write_file", map[string]any{"path": "f.txt", "content": "v4\n"})),
		providertest.TextTurn("ok"),
	)
	rt := New(Options{})
	params := toolParams(p, "s1", dir)
	params.Sandbox = &protocol.SandboxPolicy{Mode: protocol.SandboxReadOnly}
	run := startChat(t, rt, params)
	ap := approve(t, rt, run, "s1", 1, protocol.ChoiceDeny)
	if ap.Pattern != protocol.PatternSandboxWrite || ap.Command != "write_file f.txt" || ap.Command[ap.SpanStart:ap.SpanEnd] != "f.txt" {
		t.Fatalf("approval %+v", ap)
	}
	approve(t, rt, run, "s1", 2, protocol.ChoiceOnce)
	run.mustResult()
	if b, _ := os.ReadFile(filepath.Join(dir, "f.txt")); string(b) != "v4\n" {
		t.Fatalf("content %q", b)
	}
	if done := toolCompletes(t, run); !strings.Contains(done[0].Preview, "Read-only file system") {
		t.Fatalf("read-only command: %s", done[0].Preview)
	}
	// An unknown mode is refused before anything runs.
	params.Sandbox = &protocol.SandboxPolicy{Mode: "anything"}
	if _, err := startChat(t, rt, params).result(); err == nil || !strings.Contains(err.Error(), "sandbox.mode") {
		t.Fatalf("unknown mode: %v", err)
	}
}
