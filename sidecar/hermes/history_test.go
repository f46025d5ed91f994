package hermes

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

// historyRows reads both dialects' display transcripts (the shapes of 0.19.0's and
// 0.22's _history_to_messages) and refuses any other shape with agent_incompatible.
// The real gateways' output is read end to end by backend/history's tests.
func TestHistoryRowsReadsBothDialects(t *testing.T) {
	a := `[{"role":"user","text":"list it"},
		{"role":"assistant","text":"Looking.","reasoning":"think"},
		{"role":"tool","name":"terminal","context":"ls -la"},
		{"role":"assistant","text":"Done.","reasoning_details":[{"x":1}]}]`
	rows, err := historyRows(json.RawMessage(a), "0.19.0")
	if err != nil {
		t.Fatal(err)
	}
	want := []protocol.AgentHistoryMessage{{Role: "user", Content: "list it"}, {Role: "assistant", Content: "Looking.", Reasoning: "think"},
		{Role: "tool", Name: "terminal", Content: "ls -la"}, {Role: "assistant", Content: "Done."}}
	if g, w := mustJSON(rows), mustJSON(want); g != w {
		t.Errorf("dialect A rows\n got %s\nwant %s", g, w)
	}
	b := `[{"role":"user","text":"edit it","timestamp":1700000000.25,"row_id":7},
		{"role":"tool","name":"patch","context":"a.txt","tool_call_id":"call_1","args":{"path":"a.txt"},"content":"--- a\n+++ b","timestamp":1700000001,"labels":["x"]},
		{"role":"tool","name":"read_file","context":"b.txt","tool_call_id":"call_2","content":{"ok":true}},
		{"role":"assistant","text":"Edited.","timestamp":1700000002,"display_kind":"x"}]`
	rows, err = historyRows(json.RawMessage(b), "0.22.2")
	if err != nil {
		t.Fatal(err)
	}
	want = []protocol.AgentHistoryMessage{{Role: "user", Content: "edit it", CreatedAt: 1700000000250},
		{Role: "tool", Name: "patch", Content: "a.txt", ToolCallID: "call_1", Args: json.RawMessage(`{"path":"a.txt"}`), Result: "--- a\n+++ b", CreatedAt: 1700000001000},
		{Role: "tool", Name: "read_file", Content: "b.txt", ToolCallID: "call_2", Result: `{"ok":true}`},
		{Role: "assistant", Content: "Edited.", CreatedAt: 1700000002000}}
	if g, w := mustJSON(rows), mustJSON(want); g != w {
		t.Errorf("dialect B rows\n got %s\nwant %s", g, w)
	}
	if rows, err := historyRows(json.RawMessage(`[]`), ""); err != nil || len(rows) != 0 {
		t.Errorf("empty transcript: %v %v", rows, err)
	}
}

func TestHistoryRowsRefusesUnknownShapes(t *testing.T) {
	for name, raw := range map[string]string{
		"missing":           ``,
		"not a list":        `{"role":"user"}`,
		"null":              `null`,
		"row not an object": `["hello"]`,
		"no role":           `[{"text":"hi"}]`,
		"unknown role":      `[{"role":"critic","text":"hm"}]`,
		"text not a string": `[{"role":"user","text":["a","b"]}]`,
		"no text":           `[{"role":"assistant","content":"moved"}]`,
		"tool without name": `[{"role":"tool","context":"ls"}]`,
		"args not object":   `[{"role":"tool","name":"t","args":"ls"}]`,
		"bad timestamp":     `[{"role":"user","text":"x","timestamp":"yesterday"}]`,
	} {
		_, err := historyRows(json.RawMessage(raw), "9.9.9")
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Data.Condition != protocol.CondAgentIncompatible || !strings.Contains(pe.Message, "9.9.9") ||
			!strings.Contains(pe.Message, "nothing was read") || pe.Data.Hint == "" {
			t.Errorf("%s: err = %v; want agent_incompatible naming the version, with a hint", name, err)
		}
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
