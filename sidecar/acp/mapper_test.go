package acp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// An agent's session/update notifications and its session/request_permission requests
// reach the client on different goroutines, so a permission request (or a
// fs/write_text_file) that shows a call's diff can be handled before the call itself
// is announced. The diff still ends on that call's card. (Hermes Agent's ACP server
// hit this one run in a few dozen: the write's card came without its diff.)
func TestADiffShownBeforeItsCallEndsOnTheCall(t *testing.T) {
	const ws = "/work/space"
	update := func(t *testing.T, js string) sdk.SessionUpdate {
		var u sdk.SessionUpdate
		if err := json.Unmarshal([]byte(js), &u); err != nil {
			t.Fatal(err)
		}
		return u
	}
	permission := func(t *testing.T, js string) sdk.ToolCallUpdate {
		var req sdk.RequestPermissionRequest
		if err := json.Unmarshal([]byte(js), &req); err != nil {
			t.Fatal(err)
		}
		return req.ToolCall
	}
	for _, tc := range []struct {
		name  string
		early func(m *mapper)
	}{
		{"a permission request naming another id", func(m *mapper) {
			m.notePermission(permission(t, `{"sessionId":"s","options":[{"optionId":"allow_once","name":"Allow","kind":"allow_once"}],
				"toolCall":{"toolCallId":"perm-1","kind":"edit","title":"Approve edit: notes.txt",
				"content":[{"type":"diff","path":"/work/space/notes.txt","oldText":null,"newText":"one\ntwo\n"}]}}`))
		}},
		{"a write through the client", func(m *mapper) {
			m.noteWrite("/work/space/notes.txt", "--- /dev/null\n+++ notes.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var done []protocol.ToolCompleteData
			m := newMapper(func(ev string, data any) {
				if ev == protocol.EvToolComplete {
					done = append(done, data.(protocol.ToolCompleteData))
				}
			}, ws)
			tc.early(m)
			// Another call first: the note is not its business.
			m.handle(update(t, `{"sessionUpdate":"tool_call","toolCallId":"tc-0","kind":"read","title":"read: other.txt","locations":[{"path":"/work/space/other.txt"}]}`))
			m.handle(update(t, `{"sessionUpdate":"tool_call_update","toolCallId":"tc-0","status":"completed"}`))
			m.handle(update(t, `{"sessionUpdate":"tool_call","toolCallId":"tc-1","kind":"edit","title":"write: notes.txt","locations":[{"path":"/work/space/notes.txt"}],
				"content":[{"type":"content","content":{"type":"text","text":"Preparing write to notes.txt. Approval prompt shows the diff."}}]}`))
			m.handle(update(t, `{"sessionUpdate":"tool_call_update","toolCallId":"tc-1","status":"completed"}`))
			if len(done) != 2 {
				t.Fatalf("tool_complete frames: %+v", done)
			}
			if done[0].ResultDiff != "" {
				t.Errorf("the read took the write's diff: %q", done[0].ResultDiff)
			}
			if !strings.Contains(done[1].ResultDiff, "+one") || !strings.Contains(done[1].ResultDiff, "+two") {
				t.Errorf("the write's card has no diff: %+v", done[1])
			}
			if len(m.early) != 0 {
				t.Errorf("notes left unclaimed: %d", len(m.early))
			}
		})
	}
}

// An embedded text resource in the agent's message is a block of its own, verbatim
// (a longer fence when it holds one), set apart from the words before and after it;
// links and text chunks still join as they come.
func TestEmbeddedResourceIsSetApart(t *testing.T) {
	var tokens strings.Builder
	m := newMapper(func(ev string, data any) {
		if ev == protocol.EvToken {
			tokens.WriteString(data.(protocol.TextData).Text)
		}
	}, "/ws")
	for _, js := range []string{
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"Here is the file:"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource","resource":{"uri":"file:///ws/a.md","text":"# A\n` + "```go\\nx\\n```" + `\n"}}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"and "}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource_link","uri":"https://example.com/b","name":"b"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":" too.\n"}}`,
		`{"sessionUpdate":"agent_message_chunk","content":{"type":"resource","resource":{"uri":"file:///ws/c.txt","text":"c"}}}`,
	} {
		var u sdk.SessionUpdate
		if err := json.Unmarshal([]byte(js), &u); err != nil {
			t.Fatal(err)
		}
		m.handle(u)
	}
	want := "Here is the file:\n\n````\n# A\n```go\nx\n```\n````\nand [b](https://example.com/b) too.\n\n```\nc\n```\n"
	if got := tokens.String(); got != want {
		t.Errorf("tokens = %q\nwant     %q", got, want)
	}
	if got := m.current().text.String(); got != want {
		t.Errorf("the row's text = %q", got)
	}
}
