package acp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/mcp/mcptest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The chat's MCP servers (chat.start's mcp_servers) reach the real OpenCode through
// ACP's session/new: OpenCode starts the real server-everything (npm) itself, offers
// its tools to the model, and a call of one comes back to the model with the server's
// answer. A chat whose servers change reopens its session with the new set.
func TestOpenCodeUsesTheChatsMCPServers(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	srv := mcptest.Find(t)
	s, p, ws := openCode(t, nil)
	everything := srv.EverythingServer("everything")
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("m1", "everything_echo", map[string]any{"message": "hello from the chat's server"})),
		providertest.TextTurn("Echoed."),
	)
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws,
		UserMessage: "echo something", MCPServers: []protocol.MCPServer{everything}})
	res, rerr := answerUntilDone(t, s, id)
	if rerr != nil {
		t.Fatalf("chat.start: %v\nframes:\n%s", rerr, s.describe(id))
	}
	var cr protocol.ChatResult
	json.Unmarshal(res, &cr)
	if cr.Status != protocol.StatusCompleted || cr.FinalResponse != "Echoed." {
		t.Fatalf("result = %s\nframes:\n%s", res, s.describe(id))
	}
	reqs := chatRequests(p.Requests())
	if len(reqs) < 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if !strings.Contains(string(reqs[0].Tools), `"everything_echo"`) {
		t.Fatalf("the model was not offered the server's echo tool: %s", reqs[0].Tools)
	}
	if !strings.Contains(string(reqs[1].Body), "Echo: hello from the chat's server") {
		t.Fatalf("the server's answer did not reach the model: %s", reqs[1].Body)
	}
	// The card of the call.
	found := false
	for _, f := range s.frames(id) {
		if f.Event == protocol.EvTool && strings.Contains(string(f.Data), "echo") {
			found = true
		}
	}
	if !found {
		t.Errorf("no tool card for the MCP call:\n%s", s.describe(id))
	}
	// The server ran as OpenCode's child, with the marker we gave it.
	if len(mcptest.PidsOf(mcptest.Marker(everything))) == 0 {
		t.Errorf("no server-everything process with our marker")
	}

	// The chat's server turned off. OpenCode keeps the MCP servers it was given for its
	// whole process (a session/resume with fewer does not stop them, seen with 1.18.33),
	// so the runtime starts a new OpenCode, which resumes the chat's session without
	// the server: the model is no longer offered its tool and the server is gone.
	var before protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &before)
	var firstSession string
	for _, f := range s.frames(id) {
		if f.Event == protocol.EvAgentSession {
			var d protocol.AgentSessionData
			json.Unmarshal(f.Data, &d)
			firstSession = d.AgentSessionID
		}
	}
	p.Enqueue(providertest.TextTurn("No servers now."))
	id2 := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st2", Workspace: ws,
		UserMessage: "and now?", AgentSessionID: firstSession})
	res, rerr = answerUntilDone(t, s, id2)
	if rerr != nil {
		t.Fatalf("second chat.start: %v\nframes:\n%s", rerr, s.describe(id2))
	}
	json.Unmarshal(res, &cr)
	if cr.FinalResponse != "No servers now." || cr.AgentSessionID != firstSession {
		t.Fatalf("second result = %s (first agent session %s)", res, firstSession)
	}
	reqs = chatRequests(p.Requests())
	if last := reqs[len(reqs)-1]; strings.Contains(string(last.Tools), "everything_echo") {
		t.Errorf("the turn without servers still offered the server's tool")
	}
	var after protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &after)
	if after.PID == before.PID {
		t.Errorf("the agent that ran the server was kept")
	}
	if left := mcptest.WaitGone(context.Background(), testwait.Timeout, mcptest.Marker(everything)); len(left) > 0 {
		t.Errorf("server-everything still runs: %v", left)
	}
}

// chatRequests are the model requests of the main provider that carry a conversation
// (OpenCode's title and summary requests go to its aux provider).
func chatRequests(all []providertest.Request) []providertest.Request {
	var out []providertest.Request
	for _, r := range all {
		if len(r.Messages) > 0 {
			out = append(out, r)
		}
	}
	return out
}

// answerUntilDone allows every permission the agent asks for (once) until chat.start
// ends (testwait's deadline), and returns its reply.
func answerUntilDone(t *testing.T, s *sidecarProc, id string) (json.RawMessage, *protocol.Error) {
	t.Helper()
	answered := map[string]bool{}
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	for {
		for _, f := range s.frames(id) {
			if f.Event != protocol.EvApproval {
				continue
			}
			var ad protocol.ApprovalData
			json.Unmarshal(f.Data, &ad)
			if !answered[ad.ApprovalID] {
				answered[ad.ApprovalID] = true
				s.call(protocol.MethodApprovalRespond, protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: ad.ApprovalID, Choice: protocol.ChoiceOnce}, nil)
			}
		}
		s.mu.Lock()
		c := s.calls[id]
		s.mu.Unlock()
		select {
		case env := <-c.done:
			return env.Result, env.Error
		case <-c.notify:
		case <-deadline.C:
			t.Fatalf("call %s did not end within %v; frames:\n%s", id, testwait.Timeout, s.describe(id))
			return nil, nil
		}
	}
}

// The real OpenCode with its initialize answer rewritten to claim another ACP version:
// rpc.hello and the turn fail with agent_incompatible, naming both versions and saying
// what to do, and no agent is left running.
func TestAgentOfAnotherACPVersionIsRefused(t *testing.T) {
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
	wrapper := filepath.Join(dir, "opencode-v99")
	// The mark is in the agent's environment only (not the sidecar's or the guard's).
	mark := "TALARIA_ACP_TEST_MARK=" + dir
	script := "#!/bin/sh\nexport " + mark + "\n\"$OPENCODE_BIN\" acp | sed -u 's/\"protocolVersion\":1,/\"protocolVersion\":99,/'\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	s := startSidecar(t, append(oc.Env, "OPENCODE_BIN="+oc.Binary), wrapper)
	_, rerr := s.wait(s.start(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}))
	check := func(what string, rerr *protocol.Error) {
		t.Helper()
		if rerr == nil || rerr.Condition() != protocol.CondAgentIncompatible {
			t.Fatalf("%s: %v, want agent_incompatible", what, rerr)
		}
		if !strings.Contains(rerr.Message, "ACP version 99") || !strings.Contains(rerr.Message, "version 1") || !strings.Contains(rerr.Data.Hint, "Update the agent") {
			t.Fatalf("%s: %q (hint %q) does not say which versions or what to do", what, rerr.Message, rerr.Data.Hint)
		}
	}
	check("rpc.hello", rerr)
	t.Logf("rpc.hello: %s (%s)", rerr.Message, rerr.Data.Hint)
	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi"})
	_, rerr = s.wait(id)
	check("chat.start", rerr)
	if n := len(chatRequests(p.Requests())); n != 0 {
		t.Errorf("the refused agent still reached the model %d times", n)
	}
	// Every agent started was stopped (the guard kills its whole process group).
	if !testwait.Until(func() bool { return len(pidsWithEnv(mark)) == 0 }) {
		t.Fatalf("an agent of the refused version still runs: %v", pidsWithEnv(mark))
	}
}

// pidsWithEnv returns the live processes (not the test's own) whose environment holds
// the variable kv ("NAME=value"), read from /proc.
func pidsWithEnv(kv string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !alive(pid) {
			continue
		}
		if slices.Contains(strings.Split(string(b), "\x00"), kv) {
			out = append(out, pid)
		}
	}
	return out
}

// An agent that dies at start (issue 26, item 2): the error names it by its Settings
// name (--agent-name) and quotes the line that says why (a Python exception under its
// traceback, the language of Hermes's ACP server), not its INFO log lines nor the
// traceback's frames.
func TestAgentStartFailureSaysWhy(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not on PATH (%v): scripts/setup.sh installs Python for the Hermes tests", err)
	}
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.py")
	src := `import logging
logging.basicConfig(level=logging.INFO, format="%(asctime)s INFO %(name)s: %(message)s")
log = logging.getLogger("acp")
log.info("starting the ACP server")
def load_config():
    raise FileNotFoundError(2, "No such file or directory", "/home/u/.my-agent/config.yaml")
load_config()
`
	if err := os.WriteFile(agent, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startSidecarWith(t, nil, []string{"--agent-name", "My Research Agent"}, py, agent)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	_, rerr := s.wait(s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi"}))
	if rerr == nil {
		t.Fatal("a turn on an agent that cannot start succeeded")
	}
	msg := rerr.Message
	if !strings.Contains(msg, "My Research Agent") {
		t.Errorf("the error does not name the agent by its Settings name: %q", msg)
	}
	if !strings.Contains(msg, "FileNotFoundError: [Errno 2] No such file or directory") {
		t.Errorf("the error does not quote the line that says why: %q", msg)
	}
	for _, noise := range []string{"INFO", "starting the ACP server", `File "`, "load_config()"} {
		if strings.Contains(msg, noise) {
			t.Errorf("the error quotes %q (log or traceback noise): %q", noise, msg)
		}
	}
	t.Logf("chat.start: %s (%s)", msg, rerr.Data.Hint)
}

// TestAgentSecretNeverReachesTheLog: an agent that prints its API key on stderr (a
// debug line, then the error it dies of) leaves the key in nothing the sidecar writes
// or answers: the value of each variable --secret-env names is [REDACTED] in the
// sidecar's log (which the host keeps as sidecar-acp_<id>.log) and in the start
// failure it quotes. The agent is a Python script: the property is our log path, and
// a real agent that prints its key on demand is not to be had.
func TestAgentSecretNeverReachesTheLog(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not on PATH (%v): scripts/setup.sh installs Python for the Hermes tests", err)
	}
	const key = "sk-live-7Hq2-secret-value-0042"
	agent := filepath.Join(t.TempDir(), "agent.py")
	src := `import os, sys
print("debug: using API key " + os.environ["MY_AGENT_KEY"], file=sys.stderr, flush=True)
sys.exit("fatal: the provider refused the key " + os.environ["MY_AGENT_KEY"] + " (401)")
`
	if err := os.WriteFile(agent, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startSidecarWith(t, []string{"MY_AGENT_KEY=" + key}, []string{"--agent-name", "Keyed Agent", "--secret-env", "MY_AGENT_KEY"}, py, agent)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	_, rerr := s.wait(s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi"}))
	if rerr == nil {
		t.Fatal("a turn on an agent that exits at once succeeded")
	}
	if !strings.Contains(rerr.Message, "the provider refused the key [REDACTED] (401)") || strings.Contains(rerr.Message+rerr.Data.Hint, key) {
		t.Errorf("the start failure: %q (%s)", rerr.Message, rerr.Data.Hint)
	}
	logged := s.stderr.String()
	if !strings.Contains(logged, "using API key [REDACTED]") {
		t.Errorf("the agent's stderr line is not in the sidecar's log, redacted:\n%s", logged)
	}
	if strings.Contains(logged, key) || strings.Contains(logged, key[:12]) {
		t.Errorf("the sidecar's log has the key:\n%s", logged)
	}
}

// TestMCPSecretsGivenToTheAgentNeverReachTheLog: the chat's MCP servers go to the agent
// in session/new with their secret headers and environment; an agent that logs the
// configuration it was given (a debug line on stderr) leaves none of those values in
// the sidecar's log or in the error it quotes. The agent is a Python script that
// speaks just enough ACP (initialize, then session/new, which it logs and refuses): the
// property is our log path, and no real agent prints its MCP headers on demand.
func TestMCPSecretsGivenToTheAgentNeverReachTheLog(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatalf("python3 is not on PATH (%v): scripts/setup.sh installs Python for the Hermes tests", err)
	}
	const bearer, token = "Bearer mcp-oauth-4bd1-access-token", "ghp_envsecret_93kq"
	agent := filepath.Join(t.TempDir(), "agent.py")
	src := `import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {"protocolVersion": 1,
            "agentCapabilities": {"mcpCapabilities": {"http": True, "sse": False}}}}), flush=True)
    elif m.get("method") == "session/new":
        print("debug: mcp servers " + json.dumps(m["params"]["mcpServers"]), file=sys.stderr, flush=True)
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32603, "message": "cannot start " + json.dumps(m["params"]["mcpServers"])}}), flush=True)
`
	if err := os.WriteFile(agent, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startSidecarWith(t, nil, []string{"--agent-name", "Logging Agent"}, py, agent)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	servers := []protocol.MCPServer{
		{Name: "remote", Transport: protocol.MCPTransportHTTP, URL: "https://mcp.example.com/mcp", Headers: map[string]string{"Authorization": bearer}},
		{Name: "gh", Transport: protocol.MCPTransportStdio, Command: "gh-mcp", Env: map[string]string{"GITHUB_TOKEN": token, "MODE": "plain-value"}, SecretKeys: []string{"GITHUB_TOKEN"}},
	}
	_, rerr := s.wait(s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi", MCPServers: servers}))
	// The agent's stderr line is read beside its answer: it may come after chat.start's.
	testwait.For(t, "the agent's debug line in the sidecar's log", func() bool {
		l := s.stderr.String()
		return strings.Contains(l, "debug: mcp servers") && strings.Contains(l, "plain-value")
	})
	logged := s.stderr.String()
	for _, v := range []string{bearer, "mcp-oauth-4bd1", token} {
		if strings.Contains(logged, v) {
			t.Errorf("the sidecar's log has %q:\n%s", v, logged)
		}
		if rerr != nil && strings.Contains(rerr.Message+rerr.Data.Hint, v) {
			t.Errorf("chat.start's error has %q: %s", v, rerr.Message)
		}
	}
}
