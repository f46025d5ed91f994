package hermes

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

func ptr[T any](v T) *T { return &v }

// TestDecodeEventShapes: every event kind the runtime maps decodes into its typed body,
// from the payloads the real Hermes sent (testdata/e2e-*.trace: 0.19.0 for dialect A,
// 0.22.2.post1 for B; long paths shortened) and the documented shapes of the kinds the
// suite does not provoke; members of the wrong type read as zero, malformed objects as
// nil, and a payload that is not an object is the event's Err.
func TestDecodeEventShapes(t *testing.T) {
	for _, c := range []struct {
		name, params string
		want         any
		err          bool
	}{
		{"tool.start A", `{"type": "tool.start", "session_id": "af8ee836", "payload": {"tool_id": "a1", "name": "terminal", "context": "Running rm -rf /tmp/x/allowed-dir + 1 command"}}`,
			&evToolStart{ToolID: "a1", Name: "terminal", Context: "Running rm -rf /tmp/x/allowed-dir + 1 command"}, false},
		{"tool.complete B", `{"type": "tool.complete", "session_id": "9f96242c", "payload": {"tool_id": "a1", "name": "terminal", "args": {"command": "rm -rf /tmp/x && echo gone"}, "duration_s": 0.3652303218841553, "result": {"output": "gone", "exit_code": 0, "error": null}}, "seq": 20}`,
			&evToolComplete{evToolStart: evToolStart{ToolID: "a1", Name: "terminal", Args: map[string]any{"command": "rm -rf /tmp/x && echo gone"}},
				Result: json.RawMessage(`{"output": "gone", "exit_code": 0, "error": null}`), DurationS: 0.3652303218841553}, false},
		{"tool.complete todos", `{"type": "tool.complete", "session_id": "s", "payload": {"tool_id": "t", "name": "todo", "todos": [{"id": "1", "content": "a"}, {"id": "2", "content": "b", "status": "completed"}], "inline_diff": "--- a\n+++ b", "summary": "2 items"}}`,
			&evToolComplete{evToolStart: evToolStart{ToolID: "t", Name: "todo"}, Result: json.RawMessage("null"), Summary: "2 items", InlineDiff: "--- a\n+++ b",
				Todos: &protocol.TodoList{Todos: []protocol.TodoItem{{ID: "1", Content: "a", Status: "pending"}, {ID: "2", Content: "b", Status: "completed"}}}}, false},
		{"tool.complete malformed todos and args", `{"type": "tool.complete", "session_id": "s", "payload": {"tool_id": "t", "args": "rm", "todos": "none", "duration_s": "slow"}}`,
			&evToolComplete{evToolStart: evToolStart{ToolID: "t"}, Result: json.RawMessage("null")}, false},
		{"approval.request A", `{"type": "approval.request", "session_id": "af8ee836", "payload": {"command": "rm -rf /tmp/x && echo gone", "pattern_key": "delete in root path", "pattern_keys": ["delete in root path"], "description": "delete in root path", "allow_permanent": true, "choices": ["once", "session", "always", "deny"]}}`,
			&evApproval{Command: "rm -rf /tmp/x && echo gone", Description: "delete in root path", PatternKey: "delete in root path", PatternKeys: []string{"delete in root path"},
				Choices: []string{"once", "session", "always", "deny"}, AllowPermanent: ptr(true)}, false},
		{"approval.request without choices", `{"type": "approval.request", "session_id": "s", "payload": {"command": "sudo rm", "allow_permanent": false, "smart_denied": true}}`,
			&evApproval{Command: "sudo rm", SmartDenied: true, AllowPermanent: ptr(false)}, false},
		{"clarify.request A", `{"type": "clarify.request", "session_id": "af8ee836", "payload": {"question": "Which colour?", "choices": ["red", "blue"], "request_id": "a481c8ba"}}`,
			&evClarify{RequestID: "a481c8ba", Questions: []gwQuestion{{Question: "Which colour?", Choices: []string{"red", "blue"}}}}, false},
		{"secret.request A", `{"type": "secret.request", "session_id": "af8ee836", "payload": {"prompt": "Paste the canary token", "env_var": "CANARY_TOKEN", "metadata": {"skill_name": "canary-skill"}, "request_id": "6c47249b"}}`,
			&evSecret{RequestID: "6c47249b", EnvVar: "CANARY_TOKEN", Prompt: "Paste the canary token"}, false},
		{"sudo.request A", `{"type": "sudo.request", "session_id": "s", "payload": {"request_id": "r1"}}`, &evSudo{RequestID: "r1"}, false},
		{"sudo.expire", `{"type": "sudo.expire", "session_id": "s", "payload": {"request_id": "r1"}}`, &evPromptExpired{RequestID: "r1"}, false},
		{"request.cancel B", `{"type": "request.cancel", "session_id": "9f96242c", "payload": {"id": "srq-63299048a3e8", "method": "approval", "reason": "timeout"}, "seq": 49}`,
			&evRequestCancel{ID: "srq-63299048a3e8", Method: "approval", Reason: "timeout"}, false},
		{"message.complete A", `{"type": "message.complete", "session_id": "af8ee836", "payload": {"text": "Hello from Hermes.", "usage": {"model": "scripted-model", "input": 200, "output": 11, "reasoning": 0, "prompt": 200, "completion": 11, "total": 211, "calls": 1, "context_used": 200, "context_max": 131072, "context_percent": 0, "compressions": 0, "active_subagents": 0}, "status": "complete", "reasoning": "Weighing it."}}`,
			&evMessageComplete{Text: "Hello from Hermes.", Status: "complete", Reasoning: "Weighing it.",
				Usage: &gwUsage{Model: "scripted-model", Input: 200, Output: 11, CtxUsed: 200, CtxMax: 131072}}, false},
		{"message.complete malformed usage", `{"type": "message.complete", "session_id": "s", "payload": {"text": 5, "status": "error", "usage": {"input": "many"}}}`,
			&evMessageComplete{Status: "error", Usage: &gwUsage{}}, false},
		{"message.complete usage with a member of a newer shape", `{"type": "message.complete", "session_id": "s", "payload": {"text": "ok", "usage": {"model": {"id": "m", "provider": "p"}, "input": 7, "output": 3, "context_used": 10, "context_max": 100, "cost_usd": "n/a"}}}`,
			&evMessageComplete{Text: "ok", Usage: &gwUsage{Input: 7, Output: 3, CtxUsed: 10, CtxMax: 100}}, false},
		{"message.complete usage not an object", `{"type": "message.complete", "session_id": "s", "payload": {"text": "ok", "usage": [1, 2]}}`,
			&evMessageComplete{Text: "ok"}, false},
		{"session.usage B", `{"type": "session.usage", "session_id": "9f96242c", "payload": {"usage": {"model": "scripted-model", "input": 200, "output": 11, "reasoning": 0, "total": 211, "calls": 6, "context_used": 200, "context_max": 131072, "context_source": "provider_usage", "context_estimated": false, "avg_tps": 7.5, "cost_usd": 0.25}}, "seq": 48}`,
			&evSessionUsage{Usage: &gwUsage{Model: "scripted-model", Input: 200, Output: 11, CtxUsed: 200, CtxMax: 131072, CostUSD: ptr(0.25)}}, false},
		{"session.info A", `{"type": "session.info", "session_id": "af8ee836", "payload": {"model": "scripted-model", "provider": "custom", "yolo": false, "tools": {"todo": ["todo"]}, "project": null, "running": true, "title": "", "stored_session_id": "20261201_093933_a8a821", "version": "0.19.0", "usage": {"model": "scripted-model", "input": 0, "output": 0}}}`,
			&evSessionInfo{Info: &gwSessionInfo{Stored: "20261201_093933_a8a821", Running: ptr(true)}, Usage: &gwUsage{Model: "scripted-model"}}, false},
		{"session.info malformed", `{"type": "session.info", "session_id": "s", "payload": {"stored_session_id": 12, "title": "t", "running": "yes"}}`,
			&evSessionInfo{}, false},
		{"session.title", `{"type": "session.title", "session_id": "s", "payload": {"title": "Painting"}}`, &evSessionTitle{Title: "Painting"}, false},
		{"message.delta", `{"type": "message.delta", "session_id": "s", "payload": {"text": "Hello"}}`, &evMessageDelta{Text: "Hello"}, false},
		{"message.delta text not a string", `{"type": "message.delta", "session_id": "s", "payload": {"text": ["x"]}}`, &evMessageDelta{}, false},
		{"reasoning.delta", `{"type": "reasoning.delta", "session_id": "s", "payload": {"text": "Weighing it. "}}`, &evReasoningDelta{Text: "Weighing it. "}, false},
		{"message.interim", `{"type": "message.interim", "session_id": "s", "payload": {"text": "Let me look.", "already_streamed": true}}`,
			&evMessageInterim{Text: "Let me look.", AlreadyStreamed: true}, false},
		{"message.start", `{"type": "message.start", "session_id": "s"}`, &evMessageStart{}, false},
		{"tool.generating", `{"type": "tool.generating", "session_id": "s", "payload": {"name": "terminal"}}`, &evToolGenerating{Name: "terminal"}, false},
		{"status.update", `{"type": "status.update", "session_id": "s", "payload": {"kind": "compressing", "text": "Compressing the context"}}`,
			&evStatusUpdate{Kind: "compressing", Text: "Compressing the context"}, false},
		{"notification.show", `{"type": "notification.show", "session_id": "s", "payload": {"text": "Saved", "level": "info", "kind": "toast", "ttl_ms": 4000, "id": "n1"}}`,
			&evNotificationShow{ID: "n1", Text: "Saved", Level: "info", TTLMillis: 4000}, false},
		{"notification.clear", `{"type": "notification.clear", "session_id": "s", "payload": {"key": "k"}}`, &evNotificationClear{Key: "k"}, false},
		{"error", `{"type": "error", "session_id": "s", "payload": {"message": "Error code: 401"}}`, &evError{Message: "Error code: 401"}, false},
		{"gateway.ready", `{"type": "gateway.ready", "payload": {"skin": {}}}`, &evGatewayReady{}, false},
		{"decoration", `{"type": "thinking.delta", "session_id": "s", "payload": {"text": "hmm"}}`, evDecoration{}, false},
		{"subagent", `{"type": "subagent.start", "session_id": "s", "payload": {}}`, evDecoration{}, false},
		{"unknown kind", `{"type": "brand.new", "session_id": "s", "payload": {"text": "x"}}`, nil, false},
		{"payload not an object", `{"type": "message.delta", "session_id": "s", "payload": ["not", "an", "object"]}`, &evMessageDelta{}, true},
		{"payload a string", `{"type": "session.info", "session_id": "s", "payload": "x"}`, &evSessionInfo{Info: &gwSessionInfo{}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ev, err := decodeEvent(json.RawMessage(c.params))
			if err != nil {
				t.Fatalf("decodeEvent: %v", err)
			}
			var pe *eventPayloadError
			if c.err != errors.As(ev.Err, &pe) {
				t.Errorf("Err %v, want an error: %v", ev.Err, c.err)
			}
			if c.want == nil {
				if ev.Body != nil {
					t.Errorf("body %#v, want nil", ev.Body)
				}
				return
			}
			if tc, ok := c.want.(*evToolComplete); ok {
				got, _ := ev.Body.(*evToolComplete)
				if got == nil {
					t.Fatalf("body %#v", ev.Body)
				}
				if !jsonEqual(got.Result, tc.Result) {
					t.Errorf("result %s, want %s", got.Result, tc.Result)
				}
				tc.Result, got.Result = nil, nil
			}
			if !reflect.DeepEqual(ev.Body, c.want) {
				t.Errorf("body\n %#v\nwant\n %#v", ev.Body, c.want)
			}
		})
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestDecodeEventRefusesWhatCannotBeRouted: params that are not an object, or have no
// type, are errEventWithoutType.
func TestDecodeEventRefusesWhatCannotBeRouted(t *testing.T) {
	for _, params := range []string{``, `"nope"`, `[1]`, `{"session_id": "s1"}`, `{"type": 5}`, `{"type": ""}`} {
		if ev, err := decodeEvent(json.RawMessage(params)); !errors.Is(err, errEventWithoutType) || ev != nil {
			t.Errorf("%s: %v %v", params, ev, err)
		}
	}
}

// TestDecodeServerRequestShapes: dialect B's server requests as the real Hermes sent
// them, and params that are not an object (defaults, so the request is still answered).
func TestDecodeServerRequestShapes(t *testing.T) {
	for _, c := range []struct {
		name, method, params string
		sid                  string
		want                 any
	}{
		{"approval", "approval", `{"session_id": "9f96242c", "command": "rm -rf /tmp/x && echo gone", "pattern_key": "delete in root path", "pattern_keys": ["delete in root path"], "description": "delete in root path", "allow_permanent": true, "allow_session": true, "request_id": "7da6e655", "choices": ["once", "session", "always", "deny"]}`,
			"9f96242c", &evApproval{Command: "rm -rf /tmp/x && echo gone", Description: "delete in root path", PatternKey: "delete in root path",
				PatternKeys: []string{"delete in root path"}, Choices: []string{"once", "session", "always", "deny"}, AllowPermanent: ptr(true)}},
		{"clarify", "clarify", `{"session_id": "9f96242c", "questions": [{"qid": "q0", "question": "Which colours?", "choices": ["red (Recommended)", "green", "blue"], "multi_select": true}, {"qid": "q1", "question": "How many coats?", "choices": null, "multi_select": false}]}`,
			"9f96242c", &evClarify{Questions: []gwQuestion{{QID: "q0", Question: "Which colours?", Choices: []string{"red (Recommended)", "green", "blue"}, MultiSelect: true},
				{QID: "q1", Question: "How many coats?"}}}},
		{"clarify no questions", "clarify", `{"session_id": "s1", "questions": []}`, "s1", &evClarify{Questions: []gwQuestion{}}},
		{"secret", "secret", `{"session_id": "9f96242c", "prompt": "Paste the canary token", "env_var": "CANARY_TOKEN", "metadata": {"skill_name": "canary-skill"}}`,
			"9f96242c", &evSecret{EnvVar: "CANARY_TOKEN", Prompt: "Paste the canary token"}},
		{"sudo", "sudo", `{"session_id": "s1", "command": "sudo apt install x"}`, "s1", &evSudo{Command: "sudo apt install x"}},
		{"clarify params not an object", "clarify", `"x"`, "", &evClarify{Questions: []gwQuestion{{}}}},
		{"unknown method", "theme.pick", `{"session_id": "s1"}`, "s1", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := newRequest(json.RawMessage(`"srq-1"`), c.method, json.RawMessage(c.params))
			if req.SessionID != c.sid || string(req.ID) != `"srq-1"` || req.Method != c.method {
				t.Errorf("request %+v", req)
			}
			if c.want == nil && req.Body != nil || c.want != nil && !reflect.DeepEqual(req.Body, c.want) {
				t.Errorf("body\n %#v\nwant\n %#v", req.Body, c.want)
			}
		})
	}
}

// TestRecordedTrafficDecodes: every event and server request the real Hermes sent in
// the recorded suites (both dialects) decodes without an error, and each event kind
// the runtime maps has its typed body.
func TestRecordedTrafficDecodes(t *testing.T) {
	for _, file := range []string{"e2e-0.19.0.trace", "e2e-newest.trace"} {
		kinds := map[string]bool{}
		for _, tl := range readTrace(t, file) {
			var m gwMessage
			if tl.out || json.Unmarshal(tl.line, &m) != nil {
				continue
			}
			switch {
			case m.Method == "event":
				ev, err := decodeEvent(m.Params)
				if err != nil || ev.Err != nil {
					t.Fatalf("%s: %v %v: %s", file, err, ev.Err, tl.line)
				}
				if ev.Body == nil {
					t.Errorf("%s: event %q has no body", file, ev.Type)
				}
				kinds[ev.Type] = true
			case m.Method != "":
				if req := newRequest(m.ID, m.Method, m.Params); req.Body == nil || req.SessionID == "" {
					t.Errorf("%s: request %s undecoded: %+v", file, m.Method, req)
				}
				kinds[m.Method] = true
			}
		}
		for _, k := range []string{"message.start", "message.delta", "message.complete", "tool.start", "tool.complete", "session.info"} {
			if !kinds[k] {
				t.Errorf("%s has no %s: %v", file, k, kinds)
			}
		}
		if strings.Contains(file, "newest") && (!kinds["approval"] || !kinds["clarify"] || !kinds["request.cancel"]) {
			t.Errorf("%s: no dialect-B requests: %v", file, kinds)
		}
	}
}

// TestSessionEventsAreRedacted: a chat's state sent between turns (a title Hermes made)
// is redacted of the secrets given to Hermes, as a turn's frames are.
func TestSessionEventsAreRedacted(t *testing.T) {
	r := New(Options{})
	r.addSecret("vault-secret-value-4242")
	var got []string
	r.SetNotify(func(method string, params any) error {
		b, _ := json.Marshal(params)
		got = append(got, string(b))
		return nil
	})
	r.sendSessionEvent("s1", protocol.EvAgentTitle, protocol.AgentTitleData{Title: "Deploy with vault-secret-value-4242"})
	if len(got) != 1 || strings.Contains(got[0], "vault-secret-value-4242") || !strings.Contains(got[0], "Deploy with [REDACTED]") {
		t.Fatalf("session events: %q", got)
	}
}
