package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
)

// The client side of ACP as an agent calls it: fs/* and terminal/* with a running
// turn, its approvals, against real files and real processes.

type frameLog struct {
	mu     sync.Mutex
	frames []sentFrame
	ch     chan sentFrame
}

func (l *frameLog) emit(ev string, data any) error {
	b, _ := json.Marshal(data)
	f := sentFrame{ev, b}
	l.mu.Lock()
	l.frames = append(l.frames, f)
	l.mu.Unlock()
	select {
	case l.ch <- f:
	default:
	}
	return nil
}

// count is the number of frames emitted so far.
func (l *frameLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.frames)
}

// next waits (testwait's deadline) for the next frame of event ev.
func (l *frameLog) next(t *testing.T, ev string) sentFrame {
	t.Helper()
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	for {
		select {
		case f := <-l.ch:
			if f.Event == ev {
				return f
			}
		case <-deadline.C:
			t.Fatalf("no %s frame within %v", ev, testwait.Timeout)
		}
	}
}

// clientWithTurn builds a runtime with one chat whose turn runs in workspace ws.
func clientWithTurn(t *testing.T, ws string, allow ...string) (*client, *turn, *frameLog) {
	t.Helper()
	r := New(Options{Agent: Command{Path: "unused"}})
	a := &agentConn{gen: 1, dead: make(chan struct{})}
	log := &frameLog{ch: make(chan sentFrame, 64)}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	t.Cleanup(r.terms.closeAll)
	tr := &turn{r: r, a: a, p: protocol.ChatStartParams{SessionID: "s1", Workspace: ws}, ctx: ctx, emit: log.emit,
		// No approval expires while a test (slowed by a loaded machine) answers it.
		allow: map[string]bool{}, approvalTimeout: testwait.Timeout, policy: sandbox.Policy{Workspace: ws}}
	for _, k := range allow {
		tr.allow[k] = true
	}
	tr.m = newMapper(func(ev string, data any) { log.emit(ev, data) }, ws)
	c := &chat{id: "s1", agentSID: "acp-1", gen: 1, cwd: ws, turn: tr}
	tr.c = c
	r.chats["s1"], r.byACP["acp-1"] = c, c
	return &client{r: r, a: a}, tr, log
}

func TestClientFilesStayInTheWorkspace(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret\n"), 0o600)
	os.Symlink(outside, filepath.Join(ws, "link"))
	c, _, _ := clientWithTurn(t, ws)
	ctx := context.Background()

	if _, err := c.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: "acp-1", Path: filepath.Join(ws, "a", "b.txt"), Content: "l1\nl2\nl3\n"}); err != nil {
		t.Fatal(err)
	}
	got, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: "acp-1", Path: filepath.Join(ws, "a", "b.txt"), Line: sdk.Ptr(2), Limit: sdk.Ptr(1)})
	if err != nil || got.Content != "l2\n" {
		t.Fatalf("read line 2: %q, %v", got.Content, err)
	}
	for _, p := range []string{filepath.Join(outside, "secret.txt"), filepath.Join(ws, "..", filepath.Base(outside), "secret.txt"), filepath.Join(ws, "link", "secret.txt")} {
		if r, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: "acp-1", Path: p}); err == nil {
			t.Errorf("read %s outside the workspace: %q", p, r.Content)
		}
		if _, err := c.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: "acp-1", Path: p, Content: "x"}); err == nil {
			t.Errorf("wrote %s outside the workspace", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "top secret\n" {
		t.Errorf("the outside file changed: %q", b)
	}
	if _, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: "unknown", Path: filepath.Join(ws, "a", "b.txt")}); err == nil {
		t.Error("a read for an unknown session was served")
	}
}

func TestClientWriteShowsItsDiffOnTheToolCall(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	path := filepath.Join(ws, "x.txt")
	os.WriteFile(path, []byte("old\n"), 0o644)
	c, tr, _ := clientWithTurn(t, ws)
	kind := sdk.ToolKind("edit")
	tr.m.handle(sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: "w", Title: "write x.txt", Kind: kind, Status: "in_progress",
		Locations: []sdk.ToolCallLocation{{Path: path}}}})
	if _, err := c.WriteTextFile(context.Background(), sdk.WriteTextFileRequest{SessionId: "acp-1", Path: path, Content: "new\n"}); err != nil {
		t.Fatal(err)
	}
	if d := tr.m.tools["w"].diff(); !strings.Contains(d, "-old") || !strings.Contains(d, "+new") {
		t.Fatalf("diff = %q", d)
	}
}

func TestClientTerminalRunsAndReports(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	c, _, log := clientWithTurn(t, ws)
	ctx := context.Background()
	resp, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "sh", Args: []string{"-c", "pwd; echo $GREETING; echo err >&2; exit 3"},
		Cwd: sdk.Ptr(filepath.Join(ws, "sub")), Env: []sdk.EnvVariable{{Name: "GREETING", Value: "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: resp.TerminalId})
	if err != nil || w.ExitCode == nil || *w.ExitCode != 3 {
		t.Fatalf("wait: %+v %v", w, err)
	}
	out, err := c.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: "acp-1", TerminalId: resp.TerminalId})
	if err != nil || out.Output != filepath.Join(ws, "sub")+"\nhello\nerr\n" || out.ExitStatus == nil {
		t.Fatalf("output: %+v %v", out, err)
	}
	if _, err := c.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: "acp-1", TerminalId: resp.TerminalId}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: "acp-1", TerminalId: resp.TerminalId}); err == nil {
		t.Error("a released terminal still answers")
	}
	if _, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "pwd", Cwd: sdk.Ptr("/")}); err == nil {
		t.Error("a terminal ran outside the workspace")
	}
	// Output beyond the limit keeps the end.
	resp, _ = c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "seq 1 1000", OutputByteLimit: sdk.Ptr(10)})
	c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: resp.TerminalId})
	out, _ = c.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: "acp-1", TerminalId: resp.TerminalId})
	if !out.Truncated || !strings.HasSuffix(out.Output, "999\n1000\n") || len(out.Output) > 10 {
		t.Errorf("capped output = %q truncated %v", out.Output, out.Truncated)
	}
	// Kill ends a long command; its exit says it was killed.
	resp, _ = c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "sleep 30"})
	c.KillTerminal(ctx, sdk.KillTerminalRequest{SessionId: "acp-1", TerminalId: resp.TerminalId})
	w, _ = c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: resp.TerminalId})
	if w.Signal == nil || *w.Signal != "SIGKILL" {
		t.Errorf("killed terminal exit = %+v", w)
	}
	if n := log.count(); n != 0 {
		t.Errorf("harmless commands asked for approval: %d frames", n)
	}
}

func TestClientTerminalDangerousCommandsNeedApproval(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	c, tr, log := clientWithTurn(t, ws)
	ctx := context.Background()

	// Hardline: refused without asking.
	if _, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "rm", Args: []string{"-rf", "/"}}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("rm -rf / : %v", err)
	}
	// Denied: not run.
	type res struct {
		id  string
		err error
	}
	run := func(cmd string, args ...string) chan res {
		ch := make(chan res, 1)
		go func() {
			r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: cmd, Args: args})
			ch <- res{r.TerminalId, err}
		}()
		return ch
	}
	ch := run("rm", "-rf", "build")
	var ad protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if ad.Pattern != "recursive_delete" || ad.Command != "rm -rf build" || len(ad.Options) != 0 {
		t.Fatalf("approval = %+v", ad)
	}
	if ok, err := tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny"}); err != nil || !ok.OK {
		t.Fatal(ok, err)
	}
	if r := <-ch; r.err == nil || !strings.Contains(r.err.Error(), "denied") {
		t.Fatalf("denied command: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Fatal("the denied command ran")
	}
	// Allowed for the session: runs, and the next one runs without asking.
	ch = run("bash", "-c", "rm -rf build")
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "session"})
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.id})
	if _, err := os.Stat(filepath.Join(ws, "build")); err == nil {
		t.Fatal("the allowed command did not run")
	}
	before := log.count()
	if r := <-run("rm -rf nothing-here"); r.err != nil {
		t.Fatal(r.err)
	}
	if log.count() != before {
		t.Error("a granted pattern asked again")
	}
	// Stopping the turn interrupts a waiting approval.
	ch = run("sudo", "true")
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	tr.r.mu.Lock()
	grants := len(tr.r.sessionLocked("s1").grants)
	tr.r.mu.Unlock()
	tr.stopped.Store(true)
	tr.r.releaseTurn(tr)
	if r := <-ch; r.err == nil || !strings.Contains(r.err.Error(), "interrupted") {
		t.Fatalf("stopped approval: %+v", r)
	}
	// A late "session" to it settles nothing and grants nothing.
	if ok, err := tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "session"}); err != nil || ok.OK {
		t.Fatalf("late answer: %v %v", ok, err)
	}
	tr.r.mu.Lock()
	after := len(tr.r.sessionLocked("s1").grants)
	tr.r.mu.Unlock()
	if after != grants {
		t.Fatalf("a late answer to an interrupted approval granted its pattern (%d grants, %d before)", after, grants)
	}
}

func TestAskPermissionUsesTheAgentsOptions(t *testing.T) {
	ws := t.TempDir()
	c, tr, log := clientWithTurn(t, ws)
	kind := sdk.ToolKind("execute")
	req := sdk.RequestPermissionRequest{SessionId: "acp-1", ToolCall: sdk.ToolCallUpdate{ToolCallId: "t1", Title: sdk.Ptr("rm -rf build"), Kind: &kind,
		RawInput: map[string]any{"command": "rm -rf build"}},
		Options: []sdk.PermissionOption{
			{OptionId: "allow_once", Kind: "allow_once", Name: "Allow once"},
			{OptionId: "allow_session", Kind: "allow_always", Name: "Allow for session"},
			{OptionId: "allow_always", Kind: "allow_always", Name: "Allow always"},
			{OptionId: "deny", Kind: "reject_once", Name: "Deny"},
		}}
	ask := func() chan sdk.RequestPermissionResponse {
		ch := make(chan sdk.RequestPermissionResponse, 1)
		go func() {
			r, _ := c.RequestPermission(context.Background(), req)
			ch <- r
		}()
		return ch
	}
	ch := ask()
	var ad protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if len(ad.Options) != 4 || ad.Options[1].Name != "Allow for session" || ad.Command != "rm -rf build" {
		t.Fatalf("approval = %+v", ad)
	}
	// The second of two allow_always options, named by its id.
	if ok, err := tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "always", OptionID: "allow_always"}); err != nil || !ok.OK {
		t.Fatal(ok, err)
	}
	if r := <-ch; r.Outcome.Selected == nil || r.Outcome.Selected.OptionId != "allow_always" {
		t.Fatalf("outcome = %+v", r.Outcome)
	}
	// A choice the agent does not offer is refused and the card stays.
	ch = ask()
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if _, err := tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny", OptionID: "allow_once"}); err == nil {
		t.Fatal("a mismatched option was taken")
	}
	tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny"})
	if r := <-ch; r.Outcome.Selected == nil || r.Outcome.Selected.OptionId != "deny" {
		t.Fatalf("deny outcome = %+v", r.Outcome)
	}
	// A stopped turn answers cancelled.
	ch = ask()
	log.next(t, protocol.EvApproval)
	tr.stopped.Store(true)
	tr.r.releaseTurn(tr)
	if r := <-ch; r.Outcome.Cancelled == nil {
		t.Fatalf("stopped outcome = %+v", r.Outcome)
	}
	// YOLO allows at once, without a card.
	tr.stopped.Store(false)
	tr.r.setYolo("s1", true)
	before := log.count()
	if r := <-ask(); r.Outcome.Selected == nil || r.Outcome.Selected.OptionId != "allow_once" {
		t.Fatalf("yolo outcome = %+v", r.Outcome)
	}
	if log.count() != before {
		t.Error("YOLO still showed a card")
	}
}

func TestClientTerminalAndFilesFollowTheSandbox(t *testing.T) {
	if st := sandbox.Check(); !st.Available {
		t.Fatalf("no sandbox here (%s): %s", st.Reason, st.Hint)
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	hidden := filepath.Join(ws, "data")
	os.Mkdir(hidden, 0o755)
	os.WriteFile(filepath.Join(hidden, "talaria.db"), []byte("private"), 0o600)
	c, tr, log := clientWithTurn(t, ws)
	tr.policy = sandbox.Policy{Mode: sandbox.ModeWorkspaceWrite, Workspace: ws, Hidden: []string{hidden}}
	tr.c.hidden = []string{hidden}
	ctx := context.Background()
	run := func(cmd string) (int, string) {
		t.Helper()
		r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: cmd})
		if err != nil {
			t.Fatal(err)
		}
		w, _ := c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
		out, _ := c.TerminalOutput(ctx, sdk.TerminalOutputRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
		return *w.ExitCode, out.Output
	}
	if code, _ := run("echo x > " + filepath.Join(outside, "escaped")); code == 0 {
		t.Error("a command wrote outside the workspace")
	}
	if _, err := os.Stat(filepath.Join(outside, "escaped")); err == nil {
		t.Error("the file outside the workspace exists")
	}
	// Naming a hidden path is refused before anything runs (the built-in runtime's
	// protected paths); spelled so the check does not see it, the sandbox hides it.
	if _, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "cat " + filepath.Join(hidden, "talaria.db")}); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("a command naming a hidden file: %v, want refused", err)
	}
	if code, out := run("cat \"$(printf '\\057%s' " + hidden[1:] + ")/talaria.db\""); code == 0 || strings.Contains(out, "private") {
		t.Errorf("a command read a hidden file: %d %q", code, out)
	}
	if code, _ := run("echo ok > inside.txt"); code != 0 {
		t.Error("a command could not write the workspace")
	}
	if _, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: "acp-1", Path: filepath.Join(hidden, "talaria.db")}); err == nil {
		t.Error("fs/read_text_file read a hidden file")
	}
	// A read-only chat asks before fs/write_text_file writes.
	tr.policy.Mode = sandbox.ModeReadOnly
	done := make(chan error, 1)
	go func() {
		_, err := c.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: "acp-1", Path: filepath.Join(ws, "ro.txt"), Content: "x"})
		done <- err
	}()
	var ad protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if ad.Pattern != protocol.PatternSandboxWrite {
		t.Fatalf("approval = %+v", ad)
	}
	tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny"})
	if err := <-done; err == nil || !strings.Contains(err.Error(), "denied") {
		t.Fatalf("read-only write: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "ro.txt")); err == nil {
		t.Error("the denied write happened")
	}
}

func TestClientTerminalAsksBeforeRunningUnconfined(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	c, tr, log := clientWithTurn(t, ws)
	tr.r.opts.SandboxStatus = func() sandbox.Status { return sandbox.Status{Reason: "bubblewrap is not installed"} }
	ch := make(chan error, 1)
	go func() {
		_, err := c.CreateTerminal(context.Background(), sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "echo hi"})
		ch <- err
	}()
	var ad protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if ad.Pattern != protocol.PatternUnsandboxed || strings.Join(ad.Choices, ",") != "once,deny" || ad.Sandbox != "outside the sandbox" {
		t.Fatalf("approval = %+v", ad)
	}
	if _, err := tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "always"}); err == nil {
		t.Fatal("a once-only approval took always")
	}
	tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "once"})
	if err := <-ch; err != nil {
		t.Fatal(err)
	}
}

// A terminal's cwd is a folder inside the workspace by what it is, not by its name: a
// link inside the workspace that leads out of it is refused.
func TestClientTerminalCwdThroughALinkIsRefused(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	if err := os.Symlink(outside, filepath.Join(ws, "out")); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(ws, "in"), 0o755)
	c, _, _ := clientWithTurn(t, ws)
	ctx := context.Background()
	if r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "pwd", Cwd: sdk.Ptr(filepath.Join(ws, "out"))}); err == nil {
		t.Errorf("a terminal ran in %s, a link out of the workspace (terminal %s)", outside, r.TerminalId)
	}
	resp, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "pwd", Cwd: sdk.Ptr(filepath.Join(ws, "in"))})
	if err != nil {
		t.Fatalf("a folder inside the workspace was refused: %v", err)
	}
	c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: resp.TerminalId})
}

// fs/* requests close the workspace they open: a loop of reads leaves no descriptor.
func TestClientFileRequestsLeaveNoOpenFolder(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
	c, _, _ := clientWithTurn(t, ws)
	ctx := context.Background()
	fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
	before := fds()
	for i := 0; i < 200; i++ {
		if _, err := c.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: "acp-1", Path: filepath.Join(ws, "a.txt")}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: "acp-1", Path: filepath.Join(ws, "a.txt"), Content: "b\n"}); err != nil {
			t.Fatal(err)
		}
	}
	if after := fds(); after-before > 20 {
		t.Errorf("400 file requests left %d more open descriptors", after-before)
	}
}

// Issue 26 #13: terminal/create refuses loader and shell-startup variables with an
// error that names the variable, and runs nothing; an ordinary variable still works.
func TestClientTerminalRefusesLoaderAndStartupEnv(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(ws, "x.sh"), []byte("touch "+filepath.Join(ws, "ran")+"\n"), 0o755)
	c, _, _ := clientWithTurn(t, ws)
	ctx := context.Background()
	for _, name := range []string{"BASH_ENV", "ENV", "LD_PRELOAD", "DYLD_INSERT_LIBRARIES", "PROMPT_COMMAND", "PYTHONSTARTUP", "NODE_OPTIONS", "GIT_SSH_COMMAND", "bash_env",
		"GIT_PROXY_COMMAND", "GIT_TEMPLATE_DIR", "OPENSSL_CONF", "GLIBC_TUNABLES", "GCONV_PATH", "PYTHONWARNINGS", "PATH"} {
		r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "ls", Env: []sdk.EnvVariable{{Name: name, Value: "./x.sh"}}})
		if err == nil {
			c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
			t.Errorf("a terminal with %s set was started", name)
		} else if !strings.Contains(err.Error(), name) {
			t.Errorf("the refusal of %s does not name it: %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "ran")); err == nil {
		t.Error("x.sh ran through a startup variable")
	}
	// An ordinary variable, and PATH passed unchanged (an agent sending its whole
	// environment), still work.
	for _, e := range []sdk.EnvVariable{{Name: "PAGER", Value: "cat"}, {Name: "PATH", Value: os.Getenv("PATH")}} {
		r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "ls", Env: []sdk.EnvVariable{e}})
		if err != nil {
			t.Fatalf("%s was refused: %v", e.Name, err)
		}
		c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
	}
}

// Issue 26 #13: the approval card shows the environment the agent sets with the command.
func TestClientTerminalApprovalShowsTheEnv(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	c, tr, log := clientWithTurn(t, ws)
	ch := make(chan error, 1)
	go func() {
		_, err := c.CreateTerminal(context.Background(), sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "rm", Args: []string{"-rf", "build"},
			Env: []sdk.EnvVariable{{Name: "GREETING", Value: "hello there"}}})
		ch <- err
	}()
	var ad protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if ad.Command != "env 'GREETING=hello there' rm -rf build" {
		t.Errorf("the approval card shows %q", ad.Command)
	}
	tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny"})
	if err := <-ch; err == nil {
		t.Error("the denied command started")
	}
}

// Issue 26 #4: a terminal's output keeps its last limit bytes, cut on a character
// boundary, and a write past the limit does not copy the whole buffer into a new one.
func TestTerminalOutputIsARingWithoutReallocation(t *testing.T) {
	term := &terminal{limit: 64 << 10, done: make(chan struct{})}
	chunk := []byte(strings.Repeat("é", 500)) // 1000 bytes, two per character
	for i := 0; i < 200; i++ {
		term.Write(chunk)
	}
	term.Write([]byte("end\n"))
	out, truncated, _, _, _ := term.snapshot()
	if !truncated || len(out) > term.limit || !strings.HasSuffix(out, "éé"+"end\n") || !strings.HasPrefix(out, "é") {
		t.Fatalf("kept %d bytes (truncated %v), start %q, end %q", len(out), truncated, out[:4], out[len(out)-6:])
	}
	if a := testing.AllocsPerRun(200, func() { term.Write(chunk) }); a > 0.1 {
		t.Errorf("a write past the limit allocates %.1f times (copies the buffer)", a)
	}
}

// Issue 26 #4: exited terminals that were never released count against the limit, so
// an agent cannot pile up their output; releasing one makes room.
func TestClientTerminalExitedOnesCountUntilReleased(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	c, _, _ := clientWithTurn(t, ws)
	ctx := context.Background()
	var ids []string
	for i := 0; i < maxTerminals; i++ {
		r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "true"})
		if err != nil {
			t.Fatalf("terminal %d: %v", i, err)
		}
		c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
		ids = append(ids, r.TerminalId)
	}
	if r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "true"}); err == nil || !strings.Contains(err.Error(), "release") {
		t.Fatalf("terminal %d past %d exited, un-released ones: %+v %v", maxTerminals+1, maxTerminals, r, err)
	}
	if _, err := c.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: "acp-1", TerminalId: ids[0]}); err != nil {
		t.Fatal(err)
	}
	r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "true"})
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
}

// Issue 26 #4: a cwd inside a path the chat's sandbox hides is refused, also through a
// link; a cwd other than the workspace is shown on the approval card.
func TestClientTerminalCwdHiddenRefusedAndShown(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(ws, "data", "build"), 0o755)
	os.Symlink(filepath.Join(ws, "data"), filepath.Join(ws, "d"))
	os.MkdirAll(filepath.Join(ws, "sub", "build"), 0o755)
	c, tr, log := clientWithTurn(t, ws)
	tr.policy.Hidden = []string{filepath.Join(ws, "data")}
	ctx := context.Background()
	for _, cwd := range []string{filepath.Join(ws, "data"), filepath.Join(ws, "d", "build")} {
		if r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "pwd", Cwd: sdk.Ptr(cwd)}); err == nil {
			t.Errorf("a terminal ran in the hidden %s (terminal %s)", cwd, r.TerminalId)
		}
	}
	ch := make(chan error, 1)
	go func() {
		_, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "rm -rf build", Cwd: sdk.Ptr(filepath.Join(ws, "sub"))})
		ch <- err
	}()
	var ad protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if ad.Command != "cd "+filepath.Join(ws, "sub")+" && rm -rf build" {
		t.Errorf("the approval card shows %q", ad.Command)
	}
	tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny"})
	if err := <-ch; err == nil {
		t.Error("the denied command started")
	}
}

// Issue 26 #4: the output the un-released terminals may keep is bounded in all: a
// terminal that would pass the bound is refused until one is released.
func TestClientTerminalRetainedOutputIsBounded(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	c, _, _ := clientWithTurn(t, ws)
	ctx := context.Background()
	n := maxTerminalsOutput / maxTerminalOutput
	var ids []string
	for i := 0; i < n; i++ {
		r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "true", OutputByteLimit: sdk.Ptr(maxTerminalOutput)})
		if err != nil {
			t.Fatalf("terminal %d: %v", i, err)
		}
		c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
		ids = append(ids, r.TerminalId)
	}
	if r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "true", OutputByteLimit: sdk.Ptr(maxTerminalOutput)}); err == nil || !strings.Contains(err.Error(), "release") {
		t.Fatalf("a terminal past %d bytes kept in all: %+v %v", maxTerminalsOutput, r, err)
	}
	c.ReleaseTerminal(ctx, sdk.ReleaseTerminalRequest{SessionId: "acp-1", TerminalId: ids[0]})
	r, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "true", OutputByteLimit: sdk.Ptr(maxTerminalOutput)})
	if err != nil {
		t.Fatalf("after a release: %v", err)
	}
	c.WaitForTerminalExit(ctx, sdk.WaitForTerminalExitRequest{SessionId: "acp-1", TerminalId: r.TerminalId})
}

// Concurrent terminal/create requests (the SDK answers each on its own goroutine)
// cannot all pass the bounds: the check and the reservation are one step.
func TestClientTerminalBoundsHoldForConcurrentCreates(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	c, _, _ := clientWithTurn(t, ws)
	ctx := context.Background()
	n := maxTerminalsOutput / maxTerminalOutput
	var wg sync.WaitGroup
	var ok atomic.Int32
	for range 3 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.CreateTerminal(ctx, sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "true", OutputByteLimit: sdk.Ptr(maxTerminalOutput)}); err == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if got := int(ok.Load()); got != n {
		t.Fatalf("%d of %d concurrent terminals started, want exactly %d (%d MiB in all)", got, 3*n, n, maxTerminalsOutput>>20)
	}
}

// A secret-looking variable's value, and a known secret anywhere in the command, is
// not on the approval card (which the transcript keeps); the command still gets it.
func TestClientTerminalApprovalHidesSecretEnv(t *testing.T) {
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(ws, "build"), 0o755)
	c, tr, log := clientWithTurn(t, ws)
	tr.r.opts.Secrets = []string{"agent-own-key-5512"}
	ch := make(chan error, 1)
	go func() {
		_, err := c.CreateTerminal(context.Background(), sdk.CreateTerminalRequest{SessionId: "acp-1", Command: "rm", Args: []string{"-rf", "build", "agent-own-key-5512"},
			Env: []sdk.EnvVariable{{Name: "GITHUB_TOKEN", Value: "ghp_card_secret_77"}, {Name: "MODE", Value: "fast"}}})
		ch <- err
	}()
	var ad protocol.ApprovalData
	json.Unmarshal(log.next(t, protocol.EvApproval).Data, &ad)
	if ad.Command != "env 'GITHUB_TOKEN=[REDACTED]' MODE=fast rm -rf build [REDACTED]" {
		t.Errorf("the approval card shows %q", ad.Command)
	}
	tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "deny"})
	if err := <-ch; err == nil {
		t.Error("the denied command started")
	}
}
