package backend

import (
	"encoding/json"
	"strings"
	"testing"

	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

func TestTaskNoticeFor(t *testing.T) {
	frame := func(event string, data any) turn.Frame {
		b, _ := json.Marshal(data)
		return turn.Frame{SessionID: "hidden", StreamID: "st", Event: event, Data: b}
	}
	prompt := "Run the whole test suite and fix every flaky test you find in the parser package"
	for _, c := range []struct {
		name       string
		f          turn.Frame
		ok         bool
		wantTitle  string
		bodyHas    string
		bodyHasNot string
	}{
		{"done", frame(protocol.EvDone, map[string]any{}), true, "Background task finished", "“Run the whole test suite", "parser package"},
		{"failed", frame(protocol.EvAppError, turn.AppError{Label: "Rate limited", Message: "key sk-123 over quota"}), true,
			"Background task failed", ": Rate limited", "sk-123"},
		{"approval", frame(protocol.EvApproval, protocol.ApprovalData{ApprovalID: "a", Command: "rm -rf / TOKEN=x"}), true,
			"Talaria needs your approval", "of “Parser work” is waiting for you", "rm -rf"},
		{"vault", frame(protocol.EvClarify, protocol.ClarifyData{ClarifyID: "c", Kind: protocol.ClarifyKindVault, Name: "NPM_TOKEN"}), true,
			"Talaria needs a secret", "is waiting for you", "NPM_TOKEN"},
		{"cancel", frame(protocol.EvCancel, map[string]any{}), false, "", "", ""},
		{"token", frame(protocol.EvToken, protocol.TextData{Text: "x"}), false, "", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, ok := TaskNoticeFor(c.f, prompt, "Parser work", "parent")
			if ok != c.ok {
				t.Fatalf("ok = %v", ok)
			}
			if !ok {
				return
			}
			if n.Title != c.wantTitle || !strings.Contains(n.Body, c.bodyHas) || n.SessionID != "parent" || n.StreamID != "st" {
				t.Fatalf("notice = %+v", n)
			}
			if c.bodyHasNot != "" && strings.Contains(n.Title+n.Body, c.bodyHasNot) {
				t.Fatalf("notice leaks %q: %+v", c.bodyHasNot, n)
			}
		})
	}
}
