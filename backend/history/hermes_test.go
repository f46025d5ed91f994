package history_test

import (
	"context"
	"encoding/json"
	"testing"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/history"
	"talaria/sidecar/protocol"
)

// fakeHermes answers like the Hermes runtime: h-bad's transcript has a shape the
// runtime refused (agent_incompatible, as sidecar/hermes historyRows answers it).
type fakeHermes struct{}

func (fakeHermes) HermesSessions(context.Context, string) ([]backend.HermesSession, error) {
	return []backend.HermesSession{
		{AgentSessionInfo: protocol.AgentSessionInfo{AgentSessionID: "h-bad", Title: "Odd one", StartedAt: 1_700_000_000_000}},
		{AgentSessionInfo: protocol.AgentSessionInfo{AgentSessionID: "h-ok", Title: "Fine one", StartedAt: 1_700_000_100_000}},
	}, nil
}

func (fakeHermes) HermesHistory(_ context.Context, _, id string) (protocol.AgentHistoryResult, error) {
	if id == "h-bad" {
		e := protocol.NewError(0, protocol.CondAgentIncompatible,
			`Hermes 9.9 sent a session transcript of a shape Talaria does not know (messages[1].role: unknown role "critic"); nothing was read from it`)
		e.Data.Hint = "Update Talaria, or use a Hermes version it was checked with (docs/hermes.md lists them)."
		return protocol.AgentHistoryResult{}, e
	}
	return protocol.AgentHistoryResult{AgentSessionID: id, Title: "Fine one", Messages: []protocol.AgentHistoryMessage{
		{Role: "user", Content: "list the burrows"},
		{Role: "tool", Name: "terminal", Content: "ls burrows", ToolCallID: "c9", Args: json.RawMessage(`{"command":"ls burrows"}`)},
		{Role: "tool", Name: "read_file", Content: "burrow-3.txt"},
		{Role: "assistant", Content: "Three burrows."},
	}}, nil
}

// A Hermes transcript of an unknown shape is reported with the runtime's message and
// hint, and the other sessions are imported; a run of tool rows is one batch of calls.
func TestHermesImportReportsARefusedTranscript(t *testing.T) {
	st := openStore(t)
	im := history.New(st, bus.New(), fakeHermes{})
	p, err := im.RunHermes(t.Context(), history.HermesRequest{RuntimeID: "hermes:work", All: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.State != history.StateDone || p.Total != 2 || p.Imported != 1 || p.Failed != 1 || len(p.Problems) != 1 {
		t.Fatalf("progress %+v", p)
	}
	pr := p.Problems[0]
	if pr.Item != "h-bad (Odd one)" || pr.Outcome != "failed" || pr.Message == "" || pr.Hint == "" {
		t.Errorf("problem %+v", pr)
	}
	sess, err := st.GetSession(t.Context(), p.SessionIDs[0])
	if err != nil || sess.Runtime != "hermes:work" || sess.AgentSessionID != "h-ok" || sess.CreatedAt != 1_700_000_100_000 {
		t.Fatalf("session %+v, %v", sess, err)
	}
	rows, _ := st.Messages(t.Context(), sess.ID)
	if len(rows) != 5 || rows[1].Role != "assistant" || len(rows[1].ToolCalls) != 2 ||
		rows[1].ToolCalls[0].ID != "c9" || rows[1].ToolCalls[0].Function.Arguments != `{"command":"ls burrows"}` ||
		rows[1].ToolCalls[1].ID != "hermes-2" || rows[1].ToolCalls[1].Function.Arguments != "{}" ||
		rows[2].ToolCallID != "c9" || rows[3].ToolCallID != "hermes-2" || rows[3].Content != "burrow-3.txt" {
		b, _ := json.Marshal(rows)
		t.Errorf("rows %s", b)
	}
	if _, err := im.RunHermes(t.Context(), history.HermesRequest{RuntimeID: "hermes:work"}); err == nil {
		t.Error("an import of no sessions was accepted")
	}
}
