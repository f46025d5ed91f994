package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestOpenCodeDeletedChatClosesItsSession: deleting a chat bound to a real OpenCode
// session closes that session at the agent (OpenCode advertises session/close), and
// sends no session/delete, which OpenCode does not advertise (no agent installed here
// does; the spec says a client MUST NOT call it then).
func TestOpenCodeDeletedChatClosesItsSession(t *testing.T) {
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
	deleteChat(t, s, ws, transcript, true)
}

// TestHermesDeletedChatSendsNothing: Hermes's ACP server advertises neither
// session/close nor session/delete, so deleting a chat bound to its session sends it
// neither.
func TestHermesDeletedChatSendsNothing(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	in := hermestest.Require(t, hermestest.NameA)
	p := providertest.Start()
	t.Cleanup(p.Close)
	home := hermestest.NewHome(t, in, hermestest.Config{BaseURL: p.BaseURL()})
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	transcript := filepath.Join(t.TempDir(), "lines.acp")
	s := startSidecar(t, append(home.Env, "HOME="+filepath.Dir(home.Dir), "TALARIA_ACP_TRANSCRIPT="+transcript), in.Hermes, "acp")
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Hello."}}})
	deleteChat(t, s, ws, transcript, false)
}

// deleteChat runs one turn in chat s1, deletes the chat (chat.evict with delete) and
// checks the ACP transcript: session/close of the chat's agent session sent iff
// wantClose, session/delete never (no agent here advertises it).
func deleteChat(t *testing.T, s *sidecarProc, ws, transcript string, wantClose bool) {
	t.Helper()
	var hello protocol.HelloResult
	s.call(protocol.MethodHello, protocol.HelloParams{Protocol: protocol.Version}, &hello)
	turnID := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi"})
	if _, rerr := s.wait(turnID); rerr != nil {
		t.Fatalf("chat.start: %v\nframes:\n%s", rerr, s.describe(turnID))
	}
	var sess protocol.AgentSessionData
	for _, f := range s.frames(turnID) {
		if f.Event == protocol.EvAgentSession {
			json.Unmarshal(f.Data, &sess)
		}
	}
	if sess.AgentSessionID == "" {
		t.Fatalf("the turn named no agent session; frames:\n%s", s.describe(turnID))
	}
	var ev protocol.EvictResult
	s.call(protocol.MethodChatEvict, protocol.EvictParams{SessionID: "s1", Delete: true, AgentSessionID: sess.AgentSessionID}, &ev)
	if !ev.Evicted || ev.AgentError != "" {
		t.Errorf("chat.evict = %+v, want evicted without an agent error", ev)
	}
	b, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	var closed, deleted bool
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "> ") {
			continue
		}
		var req struct {
			Method string `json:"method"`
			Params struct {
				SessionID string `json:"sessionId"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line[2:]), &req) != nil {
			continue
		}
		switch req.Method {
		case "session/close":
			closed = closed || req.Params.SessionID == sess.AgentSessionID
		case "session/delete":
			deleted = true
		}
	}
	if closed != wantClose {
		t.Errorf("session/close of %s sent: %v, want %v; transcript:\n%s", sess.AgentSessionID, closed, wantClose, b)
	}
	if deleted {
		t.Errorf("session/delete was sent to an agent that does not advertise it; transcript:\n%s", b)
	}
}
