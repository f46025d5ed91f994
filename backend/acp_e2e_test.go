package backend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The end-to-end suite of record for the ACP runtime: the real backend.Service, the
// real sidecar process (this test binary) running its agent under the real guard, the
// real SQLite store, and each real ACP agent (OpenCode 1.18.33 from npm, Hermes Agent
// 0.19.0's own ACP server from the Python index), with only the model scripted. One
// rig per agent; its subtests run in order on one chat (an agent start costs seconds).

// acpAgentSetup is what differs between the agents.
type acpAgentSetup struct {
	name    string // the ACPAgent's name, hence its id
	version string // what the agent says in initialize
	agent   backend.ACPAgent
	// editTurns scripts a turn that edits notes.txt (asking permission) and then runs
	// a command that must be denied (asking permission), in workspace ws.
	editTurns func(ws string) []providertest.Turn
	// todoTurns scripts a turn that updates the todo list.
	todoTurns func() []providertest.Turn
}

// acpRig is one Service (reopened by restart) on one data folder.
type acpRig struct {
	*backendtest.Harness
	t       *testing.T
	dataDir string
	keyring vault.Keyring
	setup   acpAgentSetup
	ws      string
	rt      string // the agent's runtime id
	agentID string
}

func openACPService(t *testing.T, dataDir string, keyring vault.Keyring, p *providertest.Server) *backendtest.Harness {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := backend.Open(context.Background(), backend.Options{
		DataDir: dataDir, Version: "test", SidecarCommand: exe, SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"},
		Keyring: keyring, ApprovalTimeout: testwait.Timeout, LogToStderr: os.Getenv("TALARIA_E2E_LOG") != "",
		Supervisor: backendtest.SupervisorConfig,
	})
	if err != nil {
		t.Fatal(err)
	}
	h := backendtest.Attach(t, svc, p)
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

func newACPRig(t *testing.T, p *providertest.Server, setup acpAgentSetup) *acpRig {
	t.Helper()
	r := &acpRig{t: t, dataDir: t.TempDir(), keyring: vault.NewMemoryKeyring(), setup: setup}
	r.Harness = openACPService(t, r.dataDir, r.keyring, p)
	t.Cleanup(r.close)
	r.ws = r.WithWorkspace()
	ctx := context.Background()
	a, err := r.Svc.ACP().SaveACPAgent(ctx, setup.agent)
	if err != nil {
		t.Fatalf("SaveACPAgent: %v", err)
	}
	r.agentID, r.rt = a.ID, protocol.RuntimeACP+":"+a.ID
	if err := r.Svc.Agents().SetDefaultRuntime(ctx, r.rt); err != nil {
		t.Fatalf("SetDefaultRuntime(%s): %v", r.rt, err)
	}
	return r
}

func (r *acpRig) close() {
	if r.Svc == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if err := r.Svc.Close(ctx); err != nil {
		r.t.Errorf("close: %v", err)
	}
	r.Svc = nil
}

// restart quits the app (Service.Close: every sidecar and agent stops) and opens it
// again on the same data folder and keychain.
func (r *acpRig) restart() {
	r.t.Helper()
	r.close()
	r.Harness = openACPService(r.t, r.dataDir, r.keyring, r.Provider)
}

func (r *acpRig) waitEndLong(stream string) []turn.Frame {
	r.t.Helper()
	ch := r.EndedCh(stream)
	if !backendtest.WaitClosed(ch) {
		r.t.Fatalf("stream %s did not end within %v; frames so far:\n%s", stream, testwait.Timeout, r.Describe(stream))
	}
	return r.Snapshot(stream)
}

// waitFrame waits for the n-th (from 1) frame of event on stream and returns its data.
func (r *acpRig) waitFrame(stream, event string, n int) map[string]any {
	r.t.Helper()
	var m map[string]any
	if !testwait.Until(func() bool {
		seen := 0
		for _, f := range r.Snapshot(stream) {
			if f.Event == event {
				if seen++; seen == n {
					json.Unmarshal(f.Data, &m) //nolint:errcheck
					return true
				}
			}
		}
		return false
	}) {
		r.t.Fatalf("no frame %d of %s on %s:\n%s", n, event, stream, r.Describe(stream))
	}
	return m
}

// agentPID is the agent process of the chat's runtime (agent.info of its sidecar).
func (r *acpRig) agentPID() int {
	r.t.Helper()
	info, err := r.Svc.ACP().ACPAgentInfo(context.Background(), r.rt)
	if err != nil || info.PID == 0 {
		r.t.Fatalf("ACPAgentInfo: %+v %v", info, err)
	}
	return info.PID
}

// processGone waits until pid no longer runs (a zombie counts as gone).
func processGone(t *testing.T, pid int) {
	t.Helper()
	testwait.For(t, fmt.Sprintf("agent process %d to end", pid), func() bool {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return true
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
	})
}

func optionID(t *testing.T, ap map[string]any, kind string) string {
	t.Helper()
	opts, _ := ap["options"].([]any)
	for _, o := range opts {
		m, _ := o.(map[string]any)
		if m["kind"] == kind {
			return m["option_id"].(string)
		}
	}
	t.Fatalf("no %s option in %v", kind, ap["options"])
	return ""
}

func TestACPEndToEndOpenCode(t *testing.T) {
	// Independent of every other test (its own provider, data folder and agent) and
	// mostly waiting on the agent: it runs beside the package's other parallel tests.
	t.Parallel()
	p := providertest.Start()
	defer p.Close()
	aux := providertest.Start()
	defer aux.Close()
	const keyEnv, key = "TALARIA_TEST_PROVIDER_KEY", "sk-acp-e2e-secret-4921"
	oc, err := acptest.NewOpenCodeWith(t.TempDir(), acptest.OpenCodeOptions{BaseURL: p.BaseURL(), AuxBaseURL: aux.BaseURL(),
		Permission: map[string]string{"edit": "ask", "bash": "ask"}, APIKeyEnv: keyEnv})
	if err != nil {
		t.Fatal(err)
	}
	runACPSuite(t, p, acpAgentSetup{
		name: "OpenCode", version: acptest.OpenCodeVersion,
		agent: openCodeAgent(oc, backend.ACPEnvVar{Name: keyEnv, Value: key, Secret: true}),
		editTurns: func(ws string) []providertest.Turn {
			w := providertest.CallTurn("Writing the notes.", providertest.Call("w1", "write", map[string]any{"filePath": filepath.Join(ws, "notes.txt"), "content": "one\ntwo\n"}))
			// OpenCode ends its turn when a permission is rejected: no model call follows.
			return []providertest.Turn{w,
				providertest.CallTurn("", providertest.Call("b1", "bash", map[string]any{"command": "rm -rf " + filepath.Join(ws, "keep"), "description": "delete keep"})),
			}
		},
		todoTurns: func() []providertest.Turn {
			return []providertest.Turn{
				providertest.CallTurn("", providertest.Call("t1", "todowrite", map[string]any{"todos": []map[string]any{
					{"content": "write notes", "status": "completed", "priority": "high"}, {"content": "review", "status": "in_progress", "priority": "low"}}})),
				providertest.TextTurn("Planned."),
			}
		},
	}, func(t *testing.T, r *acpRig) {
		// The secret variable reached the agent (its API key) and nothing else.
		found := false
		for _, req := range p.Requests() {
			if req.Authorization == "Bearer "+key {
				found = true
			}
		}
		if !found {
			t.Errorf("the agent's secret variable did not reach the provider as its key")
		}
		agents, _ := r.Svc.ACP().ACPAgents(context.Background())
		if b, _ := json.Marshal(agents); strings.Contains(string(b), key) {
			t.Errorf("the secret is listed: %s", b)
		}
	})
}

func TestACPEndToEndHermes(t *testing.T) {
	t.Parallel() // as TestACPEndToEndOpenCode
	in := hermestest.Require(t, hermestest.NameA)
	if in.Hermes == "" {
		t.Fatalf("the Hermes %s install has no hermes launcher", in.Version)
	}
	p := providertest.Start()
	defer p.Close()
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: p.BaseURL()})
	var env []backend.ACPEnvVar
	for _, kv := range append(home.Env, "HOME="+filepath.Dir(home.Dir)) {
		k, v, _ := strings.Cut(kv, "=")
		env = append(env, backend.ACPEnvVar{Name: k, Value: v})
	}
	runACPSuite(t, p, acpAgentSetup{
		name: "hermes-agent", version: in.Version,
		agent: backend.ACPAgent{Name: "Hermes ACP", Command: in.Hermes, Args: []string{"acp"}, Env: env, Preset: "hermes"},
		editTurns: func(ws string) []providertest.Turn {
			return []providertest.Turn{
				providertest.CallTurn("Writing the notes.", providertest.Call("w1", "write_file", map[string]any{"path": "notes.txt", "content": "one\ntwo\n"})),
				providertest.CallTurn("", providertest.Call("b1", "terminal", map[string]any{"command": "rm -rf " + filepath.Join(ws, "keep")})),
				providertest.TextTurn("I will leave it."),
			}
		},
		todoTurns: func() []providertest.Turn {
			return []providertest.Turn{
				providertest.CallTurn("", providertest.Call("t1", "todo", map[string]any{"todos": []map[string]any{
					{"id": "1", "content": "write notes", "status": "completed"}, {"id": "2", "content": "review", "status": "in_progress"}}})),
				providertest.TextTurn("Planned."),
			}
		},
	}, nil)
}

func runACPSuite(t *testing.T, p *providertest.Server, setup acpAgentSetup, extra func(*testing.T, *acpRig)) {
	start := time.Now()
	r := newACPRig(t, p, setup)
	ctx := context.Background()
	defer func() {
		t.Logf("%s %s: suite took %s", setup.name, setup.version, time.Since(start).Round(time.Millisecond))
	}()
	sid := r.NewSession()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	// Each subtest's failures are its own: the rig's helpers report to it.
	parent := t
	tRun := func(name string, fn func(t *testing.T)) {
		parent.Run(name, func(t *testing.T) {
			r.t, r.Harness.T = t, t
			defer func() { r.t, r.Harness.T = parent, parent }()
			fn(t)
		})
	}

	tRun("Test runs initialize", func(t *testing.T) {
		agents, err := r.Svc.ACP().ACPAgents(ctx)
		must(err)
		res, err := r.Svc.ACP().TestACPAgent(ctx, agents[0])
		must(err)
		if !res.OK || res.Info.Name != setup.name || res.Info.Version != setup.version || !res.Info.Capabilities.LoadSession {
			t.Fatalf("Test = %+v", res)
		}
		rts, err := r.Svc.Agents().ListRuntimes(ctx)
		must(err)
		var opt core.RuntimeOption
		for _, o := range rts {
			if o.ID == r.rt {
				opt = o
			}
		}
		if !opt.Available || !opt.Default || !strings.Contains(opt.Detail, setup.version) {
			t.Errorf("runtime option %+v", opt)
		}
		bad, err := r.Svc.ACP().TestACPAgent(ctx, backend.ACPAgent{Name: "nope", Command: "no-such-acp-agent"})
		must(err)
		if bad.OK || !strings.Contains(bad.Message, "no-such-acp-agent") || bad.Hint == "" {
			t.Errorf("Test of a missing command = %+v", bad)
		}
	})

	tRun("agent state: modes, models, commands", func(t *testing.T) {
		st, err := r.Svc.ACP().ACPState(ctx, sid)
		must(err)
		if st.AgentSessionID == "" || st.Modes == nil || len(st.Modes.Choices) < 2 {
			t.Fatalf("state = %+v", st)
		}
		sess, _ := r.Svc.Chats().GetSession(ctx, sid)
		if sess.Session.AgentSessionID != st.AgentSessionID {
			t.Errorf("agent session %q not stored (%q)", st.AgentSessionID, sess.Session.AgentSessionID)
		}
		other := st.Modes.Choices[1].ID
		st2, err := r.Svc.ACP().SetACPChoice(ctx, sid, "mode", "", other)
		must(err)
		if st2.Modes.Current != other {
			t.Errorf("mode %q after choosing %q", st2.Modes.Current, other)
		}
		if _, err := r.Svc.ACP().SetACPChoice(ctx, sid, "mode", "", "no-such-mode"); err == nil {
			t.Error("a mode the agent does not offer was taken")
		}
		st3, err := r.Svc.ACP().SetACPChoice(ctx, sid, "mode", "", st.Modes.Choices[0].ID)
		must(err)
		if st3.Modes.Current != st.Modes.Choices[0].ID {
			t.Errorf("mode %q, want it back", st3.Modes.Current)
		}
	})

	tRun("streamed text and thoughts", func(t *testing.T) {
		p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "Weighing it. "}, {Text: "The word "}, {Text: "is pelican."}},
			Usage: &providertest.Usage{PromptTokens: 120, CompletionTokens: 9}})
		stream := r.Start(sid, "remember a word")
		frames := r.waitEndLong(stream)
		r.CheckFrames(stream, frames, protocol.EvDone)
		if got := backendtest.TextOf(frames, "token"); !strings.HasSuffix(got, "The word is pelican.") {
			t.Errorf("tokens %q", got)
		}
		if got := backendtest.TextOf(frames, "reasoning"); !strings.Contains(got, "Weighing it.") {
			t.Errorf("reasoning %q", got)
		}
		if len(backendtest.FramesOf(frames, protocol.EvAgentState)) == 0 {
			t.Error("no agent_state frame")
		}
		msgs := r.Messages(sid)
		last := msgs[len(msgs)-1]
		if last.Role != "assistant" || !strings.HasSuffix(last.Content, "The word is pelican.") || !strings.Contains(last.Reasoning, "Weighing it.") {
			t.Errorf("saved answer %+v", last)
		}
		sess, _ := r.Svc.Chats().GetSession(ctx, sid)
		if sess.Session.Runtime != r.rt || sess.Session.AgentSessionID == "" {
			t.Errorf("session %+v", sess.Session)
		}
	})

	tRun("a tool call with a diff; permissions allowed and rejected", func(t *testing.T) {
		os.MkdirAll(filepath.Join(r.ws, "keep"), 0o755) //nolint:errcheck
		p.Enqueue(setup.editTurns(r.ws)...)
		stream := r.Start(sid, "write notes, then delete keep")
		ap := r.waitFrame(stream, "approval", 1)
		if ap["diff"] == nil || !strings.Contains(ap["diff"].(string), "+one") {
			t.Errorf("the edit's approval shows no diff: %v", ap)
		}
		must(r.Svc.Approvals().RespondApprovalOption(ctx, sid, ap["approval_id"].(string), optionID(t, ap, protocol.OptionAllowOnce)))
		ap2 := r.waitFrame(stream, "approval", 2)
		if !strings.Contains(ap2["command"].(string), "rm -rf") {
			t.Errorf("command approval %v", ap2)
		}
		if err := r.Svc.Approvals().RespondApproval(ctx, sid, ap2["approval_id"].(string), "session"); err == nil {
			t.Error("a choice the agent did not offer was taken")
		}
		must(r.Svc.Approvals().RespondApproval(ctx, sid, ap2["approval_id"].(string), "deny"))
		frames := r.waitEndLong(stream)
		r.CheckFrames(stream, frames, protocol.EvDone)
		if n := p.Pending(); n != 0 {
			t.Errorf("%d scripted turns left over", n)
		}
		if b, err := os.ReadFile(filepath.Join(r.ws, "notes.txt")); err != nil || string(b) != "one\ntwo\n" {
			t.Errorf("notes.txt = %q %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(r.ws, "keep")); err != nil {
			t.Errorf("the rejected command ran")
		}
		var edited, failed bool
		for _, tc := range backendtest.FramesOf(frames, protocol.EvToolComplete) {
			if ed, _ := tc["edit_diff"].(map[string]any); ed != nil && ed["added"] == float64(2) {
				edited = true
			}
			if tc["is_error"] == true {
				failed = true
			}
		}
		if !edited || !failed {
			t.Errorf("tool_complete frames (edited %v, failed %v):\n%s", edited, failed, r.Describe(stream))
		}
		var tools int
		for _, m := range r.Messages(sid) {
			if m.Role == "tool" {
				tools++
			}
		}
		if tools < 2 {
			t.Errorf("%d tool rows saved", tools)
		}
	})

	tRun("the todo list", func(t *testing.T) {
		p.Enqueue(setup.todoTurns()...)
		stream := r.Start(sid, "plan it")
		frames := r.waitEndLong(stream)
		r.CheckFrames(stream, frames, protocol.EvDone)
		ts := backendtest.FramesOf(frames, protocol.EvTodoState)
		if len(ts) == 0 {
			t.Fatalf("no todo_state:\n%s", r.Describe(stream))
		}
		todos, _ := ts[len(ts)-1]["todos"].([]any)
		if len(todos) != 2 || todos[1].(map[string]any)["status"] != "in_progress" {
			t.Errorf("todos %v", todos)
		}
	})

	tRun("Stop keeps the partial text", func(t *testing.T) {
		hold := make(chan struct{})
		// Longer than any secret the vault knows: the host holds back a tail that could
		// be the start of one until more text comes.
		p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Half an answer, streamed slowly and at some length before it pauses: "}, {Text: "the rest", Wait: hold}}})
		stream := r.Start(sid, "talk slowly")
		r.waitFrame(stream, "token", 1)
		must(r.Svc.Turns().Cancel(stream))
		frames := r.waitEndLong(stream)
		close(hold)
		r.CheckFrames(stream, frames, protocol.EvCancel)
		msgs := r.Messages(sid)
		var kept bool
		for _, m := range msgs {
			if m.Role == "assistant" && strings.Contains(m.Content, "Half an") {
				kept = true
			}
		}
		if !kept {
			t.Errorf("the partial text was not kept")
		}
	})

	tRun("the agent crashes mid-turn; the next turn starts it again", func(t *testing.T) {
		hold := make(chan struct{})
		p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Working on it, and this sentence is long enough to pass the redaction tail: "}, {Text: "more", Wait: hold}}})
		stream := r.Start(sid, "work")
		r.waitFrame(stream, "token", 1)
		pid := r.agentPID()
		must(backendtest.KillProcess(pid))
		frames := r.waitEndLong(stream)
		close(hold)
		r.CheckFrames(stream, frames, protocol.EvAppError)
		ae := backendtest.FramesOf(frames, protocol.EvAppError)[0]
		if ae["label"] != "Agent stopped" || !strings.Contains(ae["message"].(string), "killed by signal 9") || ae["hint"] == "" {
			t.Errorf("apperror %v", ae)
		}
		p.Enqueue(providertest.TextTurn("Back."))
		stream = r.Start(sid, "again")
		frames = r.waitEndLong(stream)
		r.CheckFrames(stream, frames, protocol.EvDone)
		if got := backendtest.TextOf(frames, "token"); !strings.HasSuffix(got, "Back.") {
			t.Errorf("tokens after the crash %q", got)
		}
		if r.agentPID() == pid {
			t.Error("the agent was not started again")
		}
	})

	tRun("the sidecar SIGKILLed leaves no agent", func(t *testing.T) {
		pid := r.agentPID()
		st, ok := statusOf(r.Svc, r.rt)
		if !ok || st.PID == 0 {
			t.Fatalf("no running sidecar: %+v", st)
		}
		must(backendtest.KillProcess(st.PID))
		processGone(t, pid)
	})

	tRun("after an app restart the chat resumes its agent session", func(t *testing.T) {
		before, _ := r.Svc.Chats().GetSession(ctx, sid)
		r.restart()
		p.Enqueue(providertest.TextTurn("It was pelican."))
		stream := r.Start(sid, "which word was it?")
		frames := r.waitEndLong(stream)
		r.CheckFrames(stream, frames, protocol.EvDone)
		for _, w := range backendtest.FramesOf(frames, protocol.EvWarning) {
			t.Errorf("warning: %v", w)
		}
		after, _ := r.Svc.Chats().GetSession(ctx, sid)
		if after.Session.AgentSessionID != before.Session.AgentSessionID {
			t.Errorf("agent session %q after the restart, want %q", after.Session.AgentSessionID, before.Session.AgentSessionID)
		}
		reqs := p.Requests()
		var sent []string
		for _, m := range reqs[len(reqs)-1].Messages {
			sent = append(sent, m.Role+": "+m.Content)
		}
		all := strings.Join(sent, "\n")
		if !strings.Contains(all, "pelican") || strings.Contains(all, "This conversation started before this session") {
			t.Errorf("the resumed agent session did not carry the chat:\n%s", all)
		}
	})

	if extra != nil {
		tRun("more", func(t *testing.T) { extra(t, r) })
	}
}

// TestACPAgentsOwnActionIsAudited: OpenCode allowed to edit by its own permissions
// writes a file with no card; the approval audit log records that edit as decided by
// the agent (pattern agent_own), outside Talaria's sandbox, and the chat's agent state
// says the agent acts without asking in its mode.
func TestACPAgentsOwnActionIsAudited(t *testing.T) {
	t.Parallel() // its own provider, data folder and agent
	p := providertest.Start()
	defer p.Close()
	aux := providertest.Start()
	defer aux.Close()
	oc, err := acptest.NewOpenCodeWith(t.TempDir(), acptest.OpenCodeOptions{BaseURL: p.BaseURL(), AuxBaseURL: aux.BaseURL(),
		Permission: map[string]string{"edit": "allow", "bash": "ask"}})
	if err != nil {
		t.Fatal(err)
	}
	r := newACPRig(t, p, acpAgentSetup{name: "OpenCode", version: acptest.OpenCodeVersion, agent: openCodeAgent(oc)})
	ctx := context.Background()
	sid := r.NewSession()
	notes := filepath.Join(r.ws, "notes.txt")
	p.Enqueue(providertest.CallTurn("Writing.", providertest.Call("w1", "write", map[string]any{"filePath": notes, "content": "one\n"})),
		providertest.TextTurn("Written."))
	s := r.Start(sid, "write the notes")
	frames := r.waitEndLong(s)
	if n := len(backendtest.FramesOf(frames, protocol.EvApproval)); n != 0 {
		t.Fatalf("%d approval cards although OpenCode was allowed to edit", n)
	}
	if b, err := os.ReadFile(notes); err != nil || string(b) != "one\n" {
		t.Fatalf("notes.txt = %q, %v\n%s", b, err, r.Describe(s))
	}
	entries, err := r.Svc.Approvals().ListAudit(ctx, store.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var own []store.AuditEntry
	for _, e := range entries {
		if e.Pattern == protocol.PatternAgentOwn {
			own = append(own, e)
		}
	}
	if len(own) != 1 || own[0].DecidedBy != "agent" || own[0].Decision != store.DecisionAllowed || own[0].SessionID != sid ||
		!strings.Contains(own[0].Subject, "notes.txt") || !strings.Contains(own[0].Policy, "outside Talaria's sandbox") {
		t.Fatalf("audit entries of the agent's own action = %+v (all: %+v)", own, entries)
	}
	st, err := r.Svc.ACP().ACPState(ctx, sid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(st.SelfApproves, "without asking") {
		t.Errorf("agent state's self_approves = %q", st.SelfApproves)
	}
}
