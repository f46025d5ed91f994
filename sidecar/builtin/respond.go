package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"talaria/sidecar/protocol"
	"talaria/sidecar/server"
)

// The answer methods: approval.respond, approval.yolo, clarify.respond, chat.evict.
// They never block and never fail for an unknown, settled or other-session id (ok:
// false); a malformed answer to a parked question is invalid_params and leaves the
// question parked.

// maxClarifyAnswer bounds one answer text of clarify.respond, in bytes.
const maxClarifyAnswer = 16 << 10

// ApprovalRespond answers a parked approval. session and always also allow the pattern
// for the rest of the session (the host persists always in its allowlist); for an MCP
// tool, always_server allows every tool of its server the same way.
func (r *Runtime) ApprovalRespond(p protocol.ApprovalRespondParams) (protocol.OKResult, error) {
	switch p.Choice {
	case protocol.ChoiceOnce, protocol.ChoiceSession, protocol.ChoiceAlways, protocol.ChoiceDeny, protocol.ChoiceAlwaysServer:
	default:
		return protocol.OKResult{}, invalid(fmt.Sprintf("choice must be once, session, always, always_server or deny, not %q", trimForMessage(p.Choice)))
	}
	ok, err := r.settle(p.SessionID, p.ApprovalID, []waiterKind{kindApproval}, func(w *waiter) (answer, error) {
		if p.Choice == protocol.ChoiceAlwaysServer {
			if w.serverKey == "" {
				return answer{}, invalid("always_server answers only an MCP tool's approval")
			}
			r.sessionLocked(w.sessionID).grants[w.serverKey] = true
		}
		if (p.Choice == protocol.ChoiceSession || p.Choice == protocol.ChoiceAlways) && !w.onceOnly {
			r.sessionLocked(w.sessionID).grants[w.key] = true
		}
		return answer{reason: protocol.ResolvedAnswered, choice: p.Choice}, nil
	})
	return protocol.OKResult{OK: ok}, err
}

// ApprovalYolo sets a session's YOLO flag (enabled: dangerous commands run without
// approval, hardline ones are still refused) and, when enabling it, lets every parked
// approval of the session through once.
func (r *Runtime) ApprovalYolo(p protocol.ApprovalYoloParams) (protocol.ApprovalYoloResult, error) {
	if p.SessionID == "" {
		return protocol.ApprovalYoloResult{}, invalid("session_id is required")
	}
	released := r.setYolo(p.SessionID, p.Enabled)
	return protocol.ApprovalYoloResult{YoloEnabled: p.Enabled, Released: released}, nil
}

// ClarifyRespond answers a parked clarify or vault prompt.
//
// For a clarify: a JSON array with one answer per question (a string, or an array of
// strings), a plain string when there is one question, or null when the user dismissed
// it. For an elicitation's card (ClarifyData.Elicitation) also {"action": "decline"}
// or {"action": "cancel"}: the MCP answer without content. For a vault prompt:
// {"value": "<non-empty secret>"}, or null to decline.
func (r *Runtime) ClarifyRespond(p protocol.ClarifyRespondParams) (protocol.OKResult, error) {
	ok, err := r.settle(p.SessionID, p.ClarifyID, []waiterKind{kindClarify, kindVault}, func(w *waiter) (answer, error) {
		if w.kind == kindVault {
			v, err := vaultValue(p.Response)
			if err != nil {
				return answer{}, err
			}
			return answer{reason: protocol.ResolvedAnswered, value: v}, nil
		}
		if w.elicit {
			if action, ok := elicitAction(p.Response); ok {
				return answer{reason: protocol.ResolvedAnswered, action: action}, nil
			}
		}
		resp, err := clarifyAnswers(p.Response, w.questions)
		if err != nil {
			return answer{}, err
		}
		return answer{reason: protocol.ResolvedAnswered, response: resp}, nil
	})
	return protocol.OKResult{OK: ok}, err
}

// vaultValue reads a vault answer: nil for a decline. The value never appears in an
// error message.
func vaultValue(raw json.RawMessage) (*string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, invalid("response is missing: send {\"value\": ...} or null to decline")
	}
	if string(raw) == "null" {
		return nil, nil
	}
	var v struct {
		Value *string `json:"value"`
	}
	if raw[0] != '{' || json.Unmarshal(raw, &v) != nil || v.Value == nil {
		return nil, invalid("a vault response is {\"value\": \"...\"} or null to decline")
	}
	switch {
	case *v.Value == "":
		return nil, invalid("the secret value is empty: send null to decline")
	case strings.ContainsRune(*v.Value, 0):
		return nil, invalid("the secret value contains a NUL byte")
	case len(*v.Value) > 64<<10:
		return nil, invalid("the secret value is longer than 64 KiB")
	}
	return v.Value, nil
}

// clarifyAnswers validates a clarify answer and returns it as a JSON array of n
// answers (or null when dismissed).
func clarifyAnswers(raw json.RawMessage, n int) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, invalid("response is missing: send one answer per question, or null")
	}
	if string(raw) == "null" {
		return json.RawMessage("null"), nil
	}
	var one string
	if raw[0] == '"' && json.Unmarshal(raw, &one) == nil {
		if n != 1 {
			return nil, invalid(fmt.Sprintf("the clarify has %d questions: send an array of %d answers", n, n))
		}
		if len(one) > maxClarifyAnswer {
			return nil, invalid("an answer is longer than 16 KiB")
		}
		b, _ := json.Marshal([]string{one})
		return b, nil
	}
	var list []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil || len(list) != n {
		return nil, invalid(fmt.Sprintf("send an array of %d answers (each a string or an array of strings), or null", n))
	}
	out := make([]any, n)
	for i, a := range list {
		var s string
		var ss []string
		switch {
		case json.Unmarshal(a, &s) == nil && len(bytes.TrimSpace(a)) > 0 && bytes.TrimSpace(a)[0] == '"':
			if len(s) > maxClarifyAnswer {
				return nil, invalid("an answer is longer than 16 KiB")
			}
			out[i] = s
		case json.Unmarshal(a, &ss) == nil && len(bytes.TrimSpace(a)) > 0 && bytes.TrimSpace(a)[0] == '[':
			total := 0
			for _, x := range ss {
				total += len(x)
			}
			if total > maxClarifyAnswer || len(ss) > 64 {
				return nil, invalid("an answer is longer than 16 KiB")
			}
			if ss == nil {
				ss = []string{}
			}
			out[i] = ss
		default:
			return nil, invalid(fmt.Sprintf("answer %d is not a string or an array of strings", i+1))
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, invalid("the answers could not be encoded")
	}
	return b, nil
}

func invalid(msg string) *protocol.Error {
	return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, msg)
}

// trimForMessage keeps user-sent text short in error messages.
func trimForMessage(s string) string {
	if len(s) <= 40 {
		return s
	}
	cut := 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// answerMethods are the method-table entries of the answer methods.
func (r *Runtime) answerMethods() map[string]server.Handler {
	return map[string]server.Handler{
		protocol.MethodApprovalRespond: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ApprovalRespondParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			res, err := r.ApprovalRespond(p)
			if err == nil {
				call.Log.Info("approval answered", "session_id", p.SessionID, "approval_id", p.ApprovalID, "choice", p.Choice, "ok", res.OK)
			}
			return res, err
		},
		protocol.MethodApprovalYolo: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ApprovalYoloParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			res, err := r.ApprovalYolo(p)
			if err == nil {
				call.Log.Info("yolo set", "session_id", p.SessionID, "enabled", p.Enabled, "released", res.Released)
			}
			return res, err
		},
		protocol.MethodClarifyRespond: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ClarifyRespondParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			res, err := r.ClarifyRespond(p)
			if err == nil {
				// Never the response: it may be a secret.
				call.Log.Info("clarify answered", "session_id", p.SessionID, "clarify_id", p.ClarifyID, "ok", res.OK)
			}
			return res, err
		},
		protocol.MethodChatEvict: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.EvictParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			return protocol.EvictResult{Evicted: r.evict(p.SessionID)}, nil
		},
	}
}

// elicitAction reads an elicitation card's answer without content: {"action":
// "decline"} or {"action": "cancel"} (protocol.ElicitDecline, ElicitCancel).
func elicitAction(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return "", false
	}
	var v struct {
		Action string `json:"action"`
	}
	if json.Unmarshal(raw, &v) != nil || (v.Action != protocol.ElicitDecline && v.Action != protocol.ElicitCancel) {
		return "", false
	}
	return v.Action, true
}
