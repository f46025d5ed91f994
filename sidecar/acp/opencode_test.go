package acp_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// openCode starts the real sidecar driving a real OpenCode whose model is a scripted
// provider. It returns the sidecar, the provider and the workspace.
func openCode(t *testing.T, permission map[string]string) (*sidecarProc, *providertest.Server, string) {
	t.Helper()
	p := providertest.Start()
	t.Cleanup(p.Close)
	aux := providertest.Start()
	t.Cleanup(aux.Close)
	oc, err := acptest.NewOpenCode(t.TempDir(), p.BaseURL(), aux.BaseURL(), permission)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := startSidecar(t, oc.Env, append([]string{oc.Binary}, oc.Args()...)...)
	return s, p, ws
}

func TestOpenCodeTurnWithApprovals(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, map[string]string{"edit": "ask", "bash": "ask"})
	notes := filepath.Join(ws, "notes.txt")
	write := providertest.CallTurn("Writing notes.", providertest.Call("call_w1", "write", map[string]any{"filePath": notes, "content": "one\ntwo\n"}))
	write.Chunks = append([]providertest.Chunk{{Reasoning: "I will write the notes."}}, write.Chunks...)
	p.Enqueue(
		write,
		providertest.CallTurn("Now the second line.", providertest.Call("call_e1", "edit", map[string]any{"filePath": notes, "oldString": "two", "newString": "three"})),
		providertest.CallTurn("", providertest.Call("call_t1", "todowrite", map[string]any{"todos": []map[string]any{
			{"content": "write notes", "status": "completed", "priority": "high"}, {"content": "clean up", "status": "in_progress", "priority": "low"}}})),
		providertest.CallTurn("", providertest.Call("call_b1", "bash", map[string]any{"command": "echo hi > gone.txt", "description": "write gone"})),
		providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "Done thinking."}, {Text: "All "}, {Text: "done."}},
			Usage: &providertest.Usage{PromptTokens: 100, CompletionTokens: 20}},
	)

	var hello protocol.HelloResult
	s.call(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}, &hello)
	if hello.Runtime != "acp" {
		t.Fatalf("runtime = %q", hello.Runtime)
	}
	// OpenCode runs its bash itself: the window must not show the chat as confined.
	if sb := hello.Sandbox; sb == nil || sb.Available || !strings.Contains(sb.Reason, "OpenCode runs the commands of its own tools itself") || sb.Hint == "" {
		t.Fatalf("hello's sandbox = %+v", hello.Sandbox)
	}
	var info protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &info)
	if info.Name != "OpenCode" || info.Version != acptest.OpenCodeVersion || !info.Capabilities.LoadSession {
		t.Fatalf("agent.info = %+v", info)
	}

	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "make notes"})
	ap := s.waitFrame(id, event(protocol.EvApproval))
	var ad protocol.ApprovalData
	json.Unmarshal(ap.Data, &ad)
	t.Logf("approval 1: %s", ap.Data)
	if len(ad.Options) == 0 || ad.Diff == "" {
		t.Fatalf("approval without the agent's options or the diff: %s", ap.Data)
	}
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "once"}, nil)
	apE := s.waitFrame(id, func(f frame) bool {
		return f.Event == protocol.EvApproval && !strings.Contains(string(f.Data), ad.ApprovalID)
	})
	var adE protocol.ApprovalData
	json.Unmarshal(apE.Data, &adE)
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: adE.ApprovalID, Choice: "once", OptionID: "once"}, nil)
	ap2 := s.waitFrame(id, func(f frame) bool {
		return f.Event == protocol.EvApproval && !strings.Contains(string(f.Data), ad.ApprovalID) && !strings.Contains(string(f.Data), adE.ApprovalID)
	})
	var ad2 protocol.ApprovalData
	json.Unmarshal(ap2.Data, &ad2)
	t.Logf("approval 2: %s", ap2.Data)
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad2.ApprovalID, Choice: "deny"}, nil)
	res, rerr := s.wait(id)
	if rerr != nil {
		t.Fatalf("chat.start: %v\nframes:\n%s", rerr, s.describe(id))
	}
	t.Logf("result: %s", res)
	t.Logf("frames:\n%s", s.describe(id))
	if b, err := os.ReadFile(notes); err != nil || string(b) != "one\nthree\n" {
		t.Errorf("notes.txt = %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "gone.txt")); err == nil {
		t.Errorf("the rejected command ran")
	}
	// It asked for everything: nothing says it acts without asking.
	for _, f := range s.frames(id) {
		if f.Event == protocol.EvAgentState && strings.Contains(string(f.Data), "self_approves") || f.Event == protocol.EvApprovalAuto {
			t.Errorf("%s claims OpenCode acts without asking: %s", f.Event, f.Data)
		}
	}
}

// gate holds a scripted chunk until opened.
func gate() (chan struct{}, func()) {
	ch := make(chan struct{})
	var once bool
	return ch, func() {
		if !once {
			once = true
			close(ch)
		}
	}
}

func TestOpenCodeStopAndGoOn(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, nil)
	hold, open := gate()
	defer open()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Partial "}, {Text: "answer", Wait: hold}}})
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "talk"})
	s.waitFrame(id, event(protocol.EvToken))
	began := time.Now()
	s.cancel(id)
	res, rerr := s.wait(id)
	if rerr != nil {
		t.Fatalf("stopped chat.start: %v", rerr)
	}
	var cr protocol.ChatResult
	json.Unmarshal(res, &cr)
	if cr.Status != protocol.StatusCancelled || !strings.Contains(cr.FinalResponse, "Partial") {
		t.Fatalf("stopped result = %s", res)
	}
	t.Logf("stop took %s", time.Since(began))
	if !p.AwaitRequests(1, true, testwait.Timeout) || !p.Requests()[0].Abandoned {
		t.Errorf("the model request was not abandoned")
	}
	p.Enqueue(providertest.TextTurn("Second ", "answer."))
	id2 := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st2", Workspace: ws, UserMessage: "again"})
	res, rerr = s.wait(id2)
	if rerr != nil {
		t.Fatalf("second chat.start: %v", rerr)
	}
	json.Unmarshal(res, &cr)
	if cr.Status != protocol.StatusCompleted || cr.FinalResponse != "Second answer." {
		t.Fatalf("second result = %s\n%s", res, s.describe(id2))
	}
}

// TestOpenCodeSilentModelIsNoticed: OpenCode whose model sends nothing (a provider that
// holds its answer, as one OpenCode cannot reach) says nothing either; the chat gets one
// "silence" warning saying what to check, the turn goes on, and Stop ends it. The sidecar is told to notice after 300 ms; the test waits on frames.
func TestOpenCodeSilentModelIsNoticed(t *testing.T) {
	t.Parallel()
	p := providertest.Start()
	t.Cleanup(p.Close)
	aux := providertest.Start()
	t.Cleanup(aux.Close)
	oc, err := acptest.NewOpenCode(t.TempDir(), p.BaseURL(), aux.BaseURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s := startSidecar(t, append(oc.Env, "TALARIA_ACP_TEST_SILENCE=300ms"), append([]string{oc.Binary}, oc.Args()...)...)
	hold, open := gate()
	defer open()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Late.", Wait: hold}}})
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "talk"})
	f := s.waitFrame(id, func(f frame) bool {
		return f.Event == protocol.EvWarning && strings.Contains(string(f.Data), `"type":"silence"`)
	})
	if !strings.Contains(string(f.Data), "has sent nothing for") || !strings.Contains(string(f.Data), "Stop ends the turn") {
		t.Fatalf("silence warning: %s", f.Data)
	}
	s.cancel(id)
	res, rerr := s.wait(id)
	if rerr != nil {
		t.Fatalf("stopped chat.start: %v", rerr)
	}
	var cr protocol.ChatResult
	json.Unmarshal(res, &cr)
	if cr.Status != protocol.StatusCancelled {
		t.Fatalf("stopped result = %s", res)
	}
}

// alive reports whether a process exists (a zombie counts as gone).
func alive(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// waitGone waits (testwait's deadline) until process pid is gone.
func waitGone(t *testing.T, pid int) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("process %d to end", pid), func() bool { return !alive(pid) })
}

func TestOpenCodeResumeAfterSidecarKill(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	p := providertest.Start()
	defer p.Close()
	aux := providertest.Start()
	defer aux.Close()
	oc, err := acptest.NewOpenCode(t.TempDir(), p.BaseURL(), aux.BaseURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	argv := append([]string{oc.Binary}, oc.Args()...)

	s1 := startSidecar(t, oc.Env, argv...)
	p.Enqueue(providertest.TextTurn("The secret word is ", "pelican."))
	id := s1.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "a", Workspace: ws, UserMessage: "remember a word"})
	res, rerr := s1.wait(id)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var cr protocol.ChatResult
	json.Unmarshal(res, &cr)
	if cr.AgentSessionID == "" {
		t.Fatalf("no agent_session_id in %s", res)
	}
	var info protocol.AgentInfoResult
	s1.call(protocol.MethodAgentInfo, nil, &info)
	if info.PID == 0 || !alive(info.PID) {
		t.Fatalf("agent pid %d", info.PID)
	}
	// SIGKILL the sidecar: its agent must not survive it.
	s1.cmd.Process.Kill()
	<-s1.exited
	waitGone(t, info.PID)

	s2 := startSidecar(t, oc.Env, argv...)
	p.Enqueue(providertest.TextTurn("It was pelican."))
	id = s2.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "b", Workspace: ws,
		UserMessage: "which word?", AgentSessionID: cr.AgentSessionID})
	res, rerr = s2.wait(id)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var cr2 protocol.ChatResult
	json.Unmarshal(res, &cr2)
	if cr2.AgentSessionID != cr.AgentSessionID {
		t.Errorf("agent session %q after the restart, want %q", cr2.AgentSessionID, cr.AgentSessionID)
	}
	for _, f := range s2.frames(id) {
		if f.Event == protocol.EvWarning {
			t.Errorf("warning: %s", f.Data)
		}
	}
	reqs := p.Requests()
	last := reqs[len(reqs)-1]
	var joined []string
	for _, m := range last.Messages {
		joined = append(joined, m.Role+": "+m.Content)
	}
	if !strings.Contains(strings.Join(joined, "\n"), "pelican") {
		t.Fatalf("the resumed session did not carry the first exchange to the model:\n%s", strings.Join(joined, "\n"))
	}
}

func TestOpenCodeCrashMidTurnThenNextTurn(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, nil)
	hold, open := gate()
	defer open()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Working on it"}, {Text: "...", Wait: hold}}})
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "go"})
	s.waitFrame(id, event(protocol.EvToken))
	var info protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &info)
	if p, err := os.FindProcess(info.PID); err == nil {
		p.Kill() // SIGKILL
	}
	_, rerr := s.wait(id)
	if rerr == nil || rerr.Condition() != protocol.CondAgentUnavailable {
		t.Fatalf("chat.start after the agent died: %v", rerr)
	}
	if !strings.Contains(rerr.Message, "killed by signal 9") || rerr.Data.Partial != "Working on it" {
		t.Errorf("error = %q partial %q", rerr.Message, rerr.Data.Partial)
	}
	t.Logf("error: %s", rerr.Message)
	open()
	p.Enqueue(providertest.TextTurn("Back again."))
	id2 := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st2", Workspace: ws, UserMessage: "still there?"})
	res, rerr := s.wait(id2)
	if rerr != nil {
		t.Fatalf("the next turn: %v", rerr)
	}
	var cr protocol.ChatResult
	json.Unmarshal(res, &cr)
	if cr.FinalResponse != "Back again." {
		t.Fatalf("next turn = %s", res)
	}
	var info2 protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &info2)
	if info2.PID == info.PID {
		t.Errorf("the agent was not started again")
	}
}

// OpenCode with a line of garbage put on its stdout after its first text chunk (once):
// the turn ends with a clear error, and the next turn starts a new agent that resumes
// the session.
func TestOpenCodeMalformedOutputEndsTheTurn(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	p := providertest.Start()
	defer p.Close()
	aux := providertest.Start()
	defer aux.Close()
	oc, err := acptest.NewOpenCode(t.TempDir(), p.BaseURL(), aux.BaseURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	wrapper := filepath.Join(dir, "garbled-opencode")
	script := `#!/bin/sh
"$OPENCODE_BIN" acp | while IFS= read -r line; do
  printf '%s\n' "$line"
  case "$line" in *agent_message_chunk*)
    if [ ! -e "$GARBLE_MARK" ]; then : > "$GARBLE_MARK"; echo 'Error: provider crashed <html>'; fi;;
  esac
done
`
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(oc.Env, "OPENCODE_BIN="+oc.Binary, "GARBLE_MARK="+filepath.Join(dir, "mark"))
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	s := startSidecar(t, env, wrapper)
	hold, open := gate()
	defer open()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "First words"}, {Text: " and more", Wait: hold}}})
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "go"})
	_, rerr := s.wait(id)
	open()
	if rerr == nil || rerr.Condition() != protocol.CondAgentUnavailable || !strings.Contains(rerr.Message, "not JSON") || !strings.Contains(rerr.Message, "provider crashed") {
		t.Fatalf("chat.start with a garbled agent: %v", rerr)
	}
	t.Logf("error: %s", rerr.Message)
	p.Enqueue(providertest.TextTurn("Clean now."))
	id2 := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st2", Workspace: ws, UserMessage: "again"})
	res, rerr := s.wait(id2)
	if rerr != nil {
		t.Fatalf("the next turn: %v", rerr)
	}
	var cr protocol.ChatResult
	json.Unmarshal(res, &cr)
	if cr.FinalResponse != "Clean now." {
		t.Fatalf("next turn = %s", res)
	}
}

// An attached image reaches OpenCode (it advertises images) and its model.
func TestOpenCodeGetsTheAttachedImage(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, nil)
	// A 1x1 PNG.
	png, _ := base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")
	img := filepath.Join(t.TempDir(), "dot.png")
	if err := os.WriteFile(img, png, 0o600); err != nil {
		t.Fatal(err)
	}
	p.Enqueue(providertest.TextTurn("A dot."))
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "what is this?",
		UserParts: []protocol.ContentPart{protocol.TextPart("what is this?"),
			{Type: protocol.PartImageFile, ImageFile: &protocol.ImageFile{Path: img, MIMEType: "image/png", Name: "dot.png"}}}})
	if _, rerr := s.wait(id); rerr != nil {
		t.Fatal(rerr)
	}
	reqs := p.Requests()
	if body := string(reqs[len(reqs)-1].Body); !strings.Contains(body, base64.StdEncoding.EncodeToString(png)[:40]) {
		i := strings.LastIndex(body, "what is this")
		t.Fatalf("the image did not reach the model: %s", body[max(0, i-200):min(len(body), i+1500)])
	}
}

// TestOpenCodeActingWithoutAskingIsShown: OpenCode allowed to edit by its own
// permissions writes a file with no permission request; the chat's state then says
// that the agent acts without asking in its current mode (the header and the mode
// picker show it), while in a mode where it asked nothing is claimed.
func TestOpenCodeActingWithoutAskingIsShown(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, map[string]string{"edit": "allow", "bash": "ask"})
	notes := filepath.Join(ws, "notes.txt")
	p.Enqueue(
		providertest.CallTurn("Writing notes.", providertest.Call("call_w1", "write", map[string]any{"filePath": notes, "content": "one\n"})),
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "Done."}}},
	)
	var hello protocol.HelloResult
	s.call(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}, &hello)
	if sb := hello.Sandbox; sb == nil || sb.Agent != "OpenCode" {
		t.Fatalf("hello's sandbox = %+v, want the agent named", hello.Sandbox)
	}
	var before protocol.AgentState
	s.call(protocol.MethodSessionState, protocol.SessionRefParams{SessionID: "s1", Workspace: ws}, &before)
	if before.SelfApproves != "" || before.Modes == nil {
		t.Fatalf("state before any action = %+v", before)
	}
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "make notes"})
	res, rerr := s.wait(id)
	if rerr != nil {
		t.Fatalf("chat.start: %v\nframes:\n%s", rerr, s.describe(id))
	}
	t.Logf("result: %s", res)
	if b, err := os.ReadFile(notes); err != nil || string(b) != "one\n" {
		t.Fatalf("notes.txt = %q, %v", b, err)
	}
	for _, f := range s.frames(id) {
		if f.Event == protocol.EvApproval {
			t.Fatalf("an approval card although OpenCode was allowed to edit: %s", f.Data)
		}
	}
	var last protocol.AgentState
	var autos []protocol.ApprovalAutoData
	for _, f := range s.frames(id) {
		switch f.Event {
		case protocol.EvAgentState:
			json.Unmarshal(f.Data, &last)
		case protocol.EvApprovalAuto:
			var a protocol.ApprovalAutoData
			json.Unmarshal(f.Data, &a)
			autos = append(autos, a)
		}
	}
	// The audit log gets the edit as decided by the agent.
	if len(autos) != 1 || autos[0].Pattern != protocol.PatternAgentOwn || autos[0].DecidedBy != "agent" || autos[0].Decision != protocol.AutoAllowed ||
		autos[0].Kind != "edit" || autos[0].TID == "" || !strings.Contains(autos[0].Command, "notes.txt") {
		t.Errorf("approval_auto frames = %+v, want the edit of notes.txt decided by the agent", autos)
	}
	if !strings.Contains(last.SelfApproves, "OpenCode edited") || !strings.Contains(last.SelfApproves, "without asking") {
		t.Fatalf("last agent_state's self_approves = %q, want the edit named\nframes:\n%s", last.SelfApproves, s.describe(id))
	}
	var cur protocol.PickerChoice
	for _, c := range last.Modes.Choices {
		if c.ID == last.Modes.Current {
			cur = c
		} else if c.SelfApproves != "" {
			t.Errorf("mode %q marked too: %q", c.ID, c.SelfApproves)
		}
	}
	if cur.SelfApproves != last.SelfApproves {
		t.Errorf("the current mode's choice says %q, the state %q", cur.SelfApproves, last.SelfApproves)
	}
	// A later read of the state (another chat of the same agent, too) says the same.
	var other protocol.AgentState
	s.call(protocol.MethodSessionState, protocol.SessionRefParams{SessionID: "s2", Workspace: ws}, &other)
	if other.SelfApproves != last.SelfApproves {
		t.Errorf("another chat's state = %q", other.SelfApproves)
	}
}

// TestOpenCodeFirstTurnUsesOneSession: the window reads a new chat's state while its
// first turn starts; the two calls open one agent session between them (ACP lines
// recorded with TALARIA_ACP_TRANSCRIPT): one session/new, no reopening, and the turn
// runs in the session the state read reported.
func TestOpenCodeFirstTurnUsesOneSession(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	p := providertest.Start()
	t.Cleanup(p.Close)
	aux := providertest.Start()
	t.Cleanup(aux.Close)
	oc, err := acptest.NewOpenCode(t.TempDir(), p.BaseURL(), aux.BaseURL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(t.TempDir(), "lines.acp")
	s := startSidecar(t, append(oc.Env, "TALARIA_ACP_TRANSCRIPT="+transcript), append([]string{oc.Binary}, oc.Args()...)...)
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Hello."}}})
	var hello protocol.HelloResult
	s.call(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}, &hello)

	stateID := s.start(protocol.MethodSessionState, protocol.SessionRefParams{SessionID: "s1", Workspace: ws})
	turnID := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi"})
	stRaw, serr := s.wait(stateID)
	if serr != nil {
		t.Fatalf("session.state: %v", serr)
	}
	if _, rerr := s.wait(turnID); rerr != nil {
		t.Fatalf("chat.start: %v\nframes:\n%s", rerr, s.describe(turnID))
	}
	var st protocol.AgentState
	json.Unmarshal(stRaw, &st)
	var sess protocol.AgentSessionData
	for _, f := range s.frames(turnID) {
		if f.Event == protocol.EvAgentSession {
			json.Unmarshal(f.Data, &sess)
		}
	}
	if st.AgentSessionID == "" || sess.AgentSessionID != st.AgentSessionID {
		t.Errorf("the state read's session %q, the turn's %q", st.AgentSessionID, sess.AgentSessionID)
	}
	b, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	count := func(method string) int { return strings.Count(string(b), `"method":"`+method+`"`) }
	if n := count("session/new"); n != 1 {
		t.Errorf("%d session/new requests, want 1", n)
	}
	if n := count("session/resume") + count("session/load"); n != 0 {
		t.Errorf("%d reopenings of the session, want 0", n)
	}
}

// TestOpenCodeRefusedEditShowsNoChange: an edit whose permission request is refused
// leaves the file as it was, and its card shows no diff (it showed "+1 −0" from the
// request's diff); the allowed one before it keeps its diff.
func TestOpenCodeRefusedEditShowsNoChange(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, map[string]string{"edit": "ask", "bash": "ask"})
	notes := filepath.Join(ws, "notes.txt")
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("call_w1", "write", map[string]any{"filePath": notes, "content": "one\n"})),
		providertest.CallTurn("", providertest.Call("call_w2", "write", map[string]any{"filePath": filepath.Join(ws, "refused.txt"), "content": "no\n"})),
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "Done."}}},
	)
	var hello protocol.HelloResult
	s.call(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}, &hello)
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "write"})
	var seen []string
	for _, choice := range []string{"once", "deny"} {
		f := s.waitFrame(id, func(f frame) bool {
			if f.Event != protocol.EvApproval {
				return false
			}
			for _, id := range seen {
				if strings.Contains(string(f.Data), id) {
					return false
				}
			}
			return true
		})
		var ad protocol.ApprovalData
		json.Unmarshal(f.Data, &ad)
		if ad.Diff == "" {
			t.Fatalf("approval without the edit's diff: %s", f.Data)
		}
		seen = append(seen, ad.ApprovalID)
		s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: choice}, nil)
	}
	res, rerr := s.wait(id)
	if rerr != nil {
		t.Fatalf("chat.start: %v\nframes:\n%s", rerr, s.describe(id))
	}
	if _, err := os.Stat(filepath.Join(ws, "refused.txt")); err == nil {
		t.Fatal("the refused edit was made")
	}
	var diffs []string
	for _, f := range s.frames(id) {
		if f.Event == protocol.EvToolComplete {
			var d protocol.ToolCompleteData
			json.Unmarshal(f.Data, &d)
			if d.Name == "edit" {
				diffs = append(diffs, d.ResultDiff)
			}
		}
	}
	if len(diffs) != 2 || !strings.Contains(diffs[0], "notes.txt") || diffs[1] != "" {
		t.Fatalf("the edits' result_diff = %q, want notes.txt's, then none\nframes:\n%s", diffs, s.describe(id))
	}
	var result protocol.ChatResult
	json.Unmarshal(res, &result)
	for _, m := range result.Messages {
		if m.Role == "tool" && strings.Contains(m.Content, "refused.txt") && strings.Contains(m.Content, "+no") {
			t.Errorf("the refused edit's row keeps its diff: %s", m.Content)
		}
	}
}

// TestOpenCodeRefusedWriteIsShown: OpenCode's write (asked, and allowed once) to a
// workspace path that leads outside through a symbolic link is refused by Talaria (fs/write_text_file), and the
// chat gets a "refused" warning naming the path and saying OpenCode is not sandboxed:
// the agent only reads the refusal, and may write the file by its own means (the
// new-user trial saw it do so, its card saying "Wrote file successfully"). What OpenCode
// does next is its own; the warning is ours.
func TestOpenCodeRefusedWriteIsShown(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, map[string]string{"edit": "ask", "bash": "ask"})
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(ws, "imp_link")); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(ws, "imp_link", "notes.txt")
	p.Enqueue(
		providertest.CallTurn("Writing.", providertest.Call("call_w1", "write", map[string]any{"filePath": target, "content": "PWNED\n"})),
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "Done."}}},
	)
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "write it"})
	// OpenCode asks (edit: ask), and once allowed writes through Talaria.
	ap := s.waitFrame(id, event(protocol.EvApproval))
	var ad protocol.ApprovalData
	json.Unmarshal(ap.Data, &ad)
	s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: "once"}, nil)
	f := s.waitFrame(id, func(f frame) bool {
		return f.Event == protocol.EvWarning && strings.Contains(string(f.Data), `"type":"refused"`)
	})
	if !strings.Contains(string(f.Data), "notes.txt") || !strings.Contains(string(f.Data), "symbolic link") || !strings.Contains(string(f.Data), "not sandboxed") {
		t.Fatalf("refusal warning: %s", f.Data)
	}
	if _, rerr := s.wait(id); rerr != nil {
		t.Fatalf("chat.start: %v\n%s", rerr, s.describe(id))
	}
	if _, err := os.Stat(filepath.Join(outside, "notes.txt")); err == nil {
		t.Logf("OpenCode wrote the file by its own means after Talaria's refusal (its own process is not confined)")
	}
}
