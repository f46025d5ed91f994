package builtin

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"talaria/sidecar/protocol"
	"talaria/sidecar/server"
)

// FuzzAnswerHandlers sends arbitrary params to approval.respond, clarify.respond,
// approval.yolo and chat.evict while an approval and a clarify of session A and a vault
// prompt of session B are parked. Nothing may panic, and a waiter may only be settled
// by its own method, session and id, with an answer of the right shape.
func FuzzAnswerHandlers(f *testing.F) {
	seeds := []struct {
		method byte
		params string
	}{
		{0, `{"session_id":"A","approval_id":"ap1","choice":"once"}`},
		{0, `{"session_id":"B","approval_id":"ap1","choice":"once"}`},
		{0, `{"session_id":"A","approval_id":"cl1","choice":"deny"}`},
		{0, `{"session_id":"A","approval_id":"ap1","choice":"maybe"}`},
		{0, `{"SESSION_ID":"A","Approval_Id":"ap1","choice":"session"}`},
		{0, `{"session_id":"A","approval_id":"ap1","choice":null}`},
		{0, `{"session_id":1}`},
		{0, `null`},
		{0, `[]`},
		{1, `{"session_id":"A","clarify_id":"cl1","response":["x",["y","z"]]}`},
		{1, `{"session_id":"A","clarify_id":"cl1","response":["x"]}`},
		{1, `{"session_id":"A","clarify_id":"cl1","response":null}`},
		{1, `{"session_id":"A","clarify_id":"cl1","response":"x"}`},
		{1, `{"session_id":"A","clarify_id":"va1","response":{"value":"s"}}`},
		{1, `{"session_id":"B","clarify_id":"va1","response":{"value":"s"}}`},
		{1, `{"session_id":"B","clarify_id":"va1","response":{"value":""}}`},
		{1, `{"session_id":"B","clarify_id":"va1","response":null}`},
		{1, `{"session_id":"B","clarify_id":"va1"}`},
		{1, `{"session_id":"A","clarify_id":"ap1","response":"once"}`},
		{1, `{"session_id":"A","clarify_id":"cl1","response":[1,{"a":2}]}`},
		{2, `{"session_id":"A","enabled":true}`},
		{2, `{"session_id":"B","enabled":true}`},
		{2, `{"session_id":"A","enabled":false}`},
		{2, `{}`},
		{3, `{"session_id":"A"}`},
	}
	for _, s := range seeds {
		f.Add(s.method, []byte(s.params))
	}
	methods := []string{protocol.MethodApprovalRespond, protocol.MethodClarifyRespond, protocol.MethodApprovalYolo, protocol.MethodChatEvict}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	f.Fuzz(func(t *testing.T, m byte, params []byte) {
		rt := New(Options{})
		ap := &waiter{id: "ap1", sessionID: "A", kind: kindApproval, key: "recursive_delete", ch: make(chan answer, 1)}
		cl := &waiter{id: "cl1", sessionID: "A", kind: kindClarify, questions: 2, ch: make(chan answer, 1)}
		va := &waiter{id: "va1", sessionID: "B", kind: kindVault, ch: make(chan answer, 1)}
		for _, w := range []*waiter{ap, cl, va} {
			rt.park(w, "", nil)
		}
		method := methods[int(m)%len(methods)]
		call := &server.Call{ID: json.RawMessage("1"), Method: method, Params: params, Log: log}
		res, err := rt.Methods()[method](context.Background(), call)

		settled := map[string]*answer{}
		for _, w := range []*waiter{ap, cl, va} {
			select {
			case a := <-w.ch:
				settled[w.id] = &a
			default:
			}
		}
		// What the params say, decoded the way the handlers decode them.
		raw := params
		if len(raw) == 0 || string(raw) == "null" {
			raw = []byte("{}")
		}
		var ar protocol.ApprovalRespondParams
		var cr protocol.ClarifyRespondParams
		var yr protocol.ApprovalYoloParams
		arOK := json.Unmarshal(raw, &ar) == nil
		crOK := json.Unmarshal(raw, &cr) == nil
		yrOK := json.Unmarshal(raw, &yr) == nil

		ok := false
		switch r := res.(type) {
		case protocol.OKResult:
			ok = r.OK
		case protocol.ApprovalYoloResult:
			ok = r.Released > 0
		}
		if err != nil && len(settled) > 0 {
			t.Fatalf("%s %s: an error (%v) but %d settled", method, params, err, len(settled))
		}
		switch method {
		case protocol.MethodApprovalRespond:
			if settled["cl1"] != nil || settled["va1"] != nil {
				t.Fatalf("approval.respond settled a clarify: %s", params)
			}
			if a := settled["ap1"]; a != nil {
				if !arOK || ar.SessionID != "A" || ar.ApprovalID != "ap1" || a.choice != ar.Choice || a.reason != protocol.ResolvedAnswered || !ok {
					t.Fatalf("ap1 settled by %s (%+v)", params, a)
				}
			} else if ok {
				t.Fatalf("ok without a settled waiter: %s", params)
			}
		case protocol.MethodClarifyRespond:
			if settled["ap1"] != nil {
				t.Fatalf("clarify.respond settled an approval: %s", params)
			}
			if a := settled["cl1"]; a != nil {
				var answers []json.RawMessage
				if !crOK || cr.SessionID != "A" || cr.ClarifyID != "cl1" || (string(a.response) != "null" && (json.Unmarshal(a.response, &answers) != nil || len(answers) != 2)) {
					t.Fatalf("cl1 settled by %s (%s)", params, a.response)
				}
			}
			if a := settled["va1"]; a != nil {
				if !crOK || cr.SessionID != "B" || cr.ClarifyID != "va1" || (a.value != nil && *a.value == "") {
					t.Fatalf("va1 settled by %s", params)
				}
			}
			if ok != (len(settled) == 1) || len(settled) > 1 {
				t.Fatalf("ok %v with %d settled: %s", ok, len(settled), params)
			}
		case protocol.MethodApprovalYolo:
			if settled["cl1"] != nil || settled["va1"] != nil {
				t.Fatalf("approval.yolo settled a clarify: %s", params)
			}
			if a := settled["ap1"]; a != nil && (!yrOK || yr.SessionID != "A" || !yr.Enabled || a.reason != protocol.ResolvedYolo) {
				t.Fatalf("ap1 released by %s", params)
			}
		case protocol.MethodChatEvict:
			if len(settled) > 0 {
				t.Fatalf("chat.evict settled a waiter: %s", params)
			}
		}
		if want := 3 - len(settled); rt.pendingCount() != want {
			t.Fatalf("%d parked, want %d", rt.pendingCount(), want)
		}
	})
}
