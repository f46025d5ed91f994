package acp_test

import (
	"path/filepath"
	"testing"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestOpenCodeListsItsSessions: agent.sessions lists OpenCode's own sessions through
// session/list: the one a chat's turn opened, with its folder and time, and only in that folder
// when one is given; a relative folder is refused.
func TestOpenCodeListsItsSessions(t *testing.T) {
	t.Parallel() // its own sidecar, agent, provider and folders
	s, p, ws := openCode(t, nil)
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Hello."}}})
	var st protocol.AgentState
	s.call(protocol.MethodSessionState, protocol.SessionRefParams{SessionID: "s1", Workspace: ws}, &st)
	if _, rerr := s.wait(s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi"})); rerr != nil {
		t.Fatalf("chat.start: %v", rerr)
	}
	var all protocol.AgentSessionsResult
	s.call(protocol.MethodAgentSessions, protocol.AgentSessionsParams{}, &all)
	var found *protocol.AgentSessionInfo
	for i, x := range all.Sessions {
		if x.AgentSessionID == st.AgentSessionID {
			found = &all.Sessions[i]
		}
	}
	if st.AgentSessionID == "" || found == nil || found.Workspace != ws || found.UpdatedAt == 0 {
		t.Fatalf("session %q not listed with its folder and time: %+v", st.AgentSessionID, all)
	}
	other, _ := filepath.EvalSymlinks(t.TempDir())
	var none protocol.AgentSessionsResult
	s.call(protocol.MethodAgentSessions, protocol.AgentSessionsParams{Workspace: other}, &none)
	if len(none.Sessions) != 0 {
		t.Fatalf("sessions of an unused folder: %+v", none)
	}
	_, rerr := s.wait(s.start(protocol.MethodAgentSessions, protocol.AgentSessionsParams{Workspace: "rel/dir"}))
	if rerr == nil || rerr.Condition() != protocol.CondInvalidParams {
		t.Fatalf("a relative folder: %+v", rerr)
	}
}
