package acp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// Form elicitations as an agent sends them (elicitation/create, form mode) shown as the
// turn's clarify card and answered through clarify.respond. Neither real agent of the
// suites (OpenCode 1.18.33, Hermes 0.19.0) sends elicitations, so the client is driven
// directly here, with the JSON an agent sends.
func elicitRequest(t *testing.T, js string) sdk.UnstableCreateElicitationRequest {
	t.Helper()
	var req sdk.UnstableCreateElicitationRequest
	if err := json.Unmarshal([]byte(js), &req); err != nil {
		t.Fatal(err)
	}
	return req
}

func TestElicitationIsAClarifyCard(t *testing.T) {
	ws := t.TempDir()
	c, tr, log := clientWithTurn(t, ws)
	req := elicitRequest(t, `{"mode":"form","message":"Which branch should I deploy?","requestedSchema":{"type":"object","required":["branch"],"properties":{
		"branch":{"type":"string","title":"Branch","enum":["main","dev"]},
		"count":{"type":"integer","description":"How many replicas"},
		"confirm":{"type":"boolean","title":"Run the migrations"},
		"labels":{"type":"array","items":{"type":"string","enum":["blue","green"]}}}}}`)
	got := make(chan sdk.UnstableCreateElicitationResponse, 1)
	go func() {
		resp, err := c.UnstableCreateElicitation(context.Background(), req)
		if err != nil {
			t.Error(err)
		}
		got <- resp
	}()
	var cd protocol.ClarifyData
	json.Unmarshal(log.next(t, protocol.EvClarify).Data, &cd)
	if cd.Kind != protocol.ClarifyKindClarify || len(cd.Questions) != 4 {
		t.Fatalf("clarify = %+v", cd)
	}
	q := cd.Questions
	if !strings.HasPrefix(q[0].Question, "Which branch should I deploy?") || !strings.Contains(q[0].Question, "Branch") ||
		strings.Join(q[0].Choices, ",") != "main,dev" || strings.Join(q[1].Choices, ",") != "yes,no" ||
		len(q[2].Choices) != 0 || !strings.Contains(q[2].Question, "How many replicas") || !q[3].MultiSelect || strings.Join(q[3].Choices, ",") != "blue,green" {
		t.Fatalf("questions = %+v", q)
	}
	// An approval answer, or YOLO, does not settle it.
	if ok, _ := tr.r.respondApproval(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: cd.ClarifyID, Choice: "once"}); ok.OK {
		t.Fatal("approval.respond answered a clarify")
	}
	if n := tr.r.setYolo("s1", true); n != 0 {
		t.Fatal("YOLO answered a clarify")
	}
	tr.r.setYolo("s1", false)
	// A value that does not fit its field is refused and the card stays.
	if _, err := tr.r.respondClarify(protocol.ClarifyRespondParams{SessionID: "s1", ClarifyID: cd.ClarifyID, Response: json.RawMessage(`["dev","yes","three",["blue"]]`)}); err == nil || !strings.Contains(err.Error(), "whole number") {
		t.Fatalf("a word for an integer: %v", err)
	}
	ok, err := tr.r.respondClarify(protocol.ClarifyRespondParams{SessionID: "s1", ClarifyID: cd.ClarifyID, Response: json.RawMessage(`["dev","yes","3",["blue","green"]]`)})
	if err != nil || !ok.OK {
		t.Fatalf("answer: %v %v", ok, err)
	}
	resp := <-got
	if resp.Accept == nil {
		t.Fatalf("response = %+v", resp)
	}
	b, _ := json.Marshal(resp.Accept.Content)
	if string(b) != `{"branch":"dev","confirm":true,"count":3,"labels":["blue","green"]}` {
		t.Fatalf("content = %s", b)
	}
	var rd protocol.ResolvedData
	json.Unmarshal(log.next(t, protocol.EvClarifyResolved).Data, &rd)
	if rd.ClarifyID != cd.ClarifyID || rd.Reason != protocol.ResolvedAnswered {
		t.Fatalf("resolved = %+v", rd)
	}
}

func TestElicitationDeclinedStoppedOrTooBig(t *testing.T) {
	ws := t.TempDir()
	c, tr, log := clientWithTurn(t, ws)
	ask := func(js string) chan sdk.UnstableCreateElicitationResponse {
		got := make(chan sdk.UnstableCreateElicitationResponse, 1)
		go func() {
			resp, _ := c.UnstableCreateElicitation(context.Background(), elicitRequest(t, js))
			got <- resp
		}()
		return got
	}
	one := `{"mode":"form","message":"Name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}`
	// Declined: the card answered with null.
	got := ask(one)
	var cd protocol.ClarifyData
	json.Unmarshal(log.next(t, protocol.EvClarify).Data, &cd)
	tr.r.respondClarify(protocol.ClarifyRespondParams{SessionID: "s1", ClarifyID: cd.ClarifyID, Response: json.RawMessage(`null`)})
	if r := <-got; r.Decline == nil {
		t.Fatalf("declined = %+v", r)
	}
	// The card's Decline and Cancel buttons: {"action": ...}.
	for _, action := range []string{protocol.ElicitDecline, protocol.ElicitCancel} {
		got = ask(one)
		json.Unmarshal(log.next(t, protocol.EvClarify).Data, &cd)
		if !cd.Elicitation {
			t.Fatalf("the card is not marked an elicitation: %+v", cd)
		}
		tr.r.respondClarify(protocol.ClarifyRespondParams{SessionID: "s1", ClarifyID: cd.ClarifyID, Response: json.RawMessage(`{"action": "` + action + `"}`)})
		if r := <-got; (action == protocol.ElicitDecline) != (r.Decline != nil) || (action == protocol.ElicitCancel) != (r.Cancel != nil) {
			t.Fatalf("%s = %+v", action, r)
		}
	}
	// A form of more fields than a card holds: cancelled, with a warning saying why.
	got = ask(`{"mode":"form","message":"Lots","requestedSchema":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},"d":{"type":"string"},"e":{"type":"string"},"f":{"type":"string"}}}}`)
	if r := <-got; r.Cancel == nil {
		t.Fatalf("too big = %+v", r)
	}
	var wd protocol.WarningData
	json.Unmarshal(log.next(t, protocol.EvWarning).Data, &wd)
	if !strings.Contains(wd.Message, "6 fields") {
		t.Fatalf("warning = %+v", wd)
	}
	// A URL elicitation (not advertised): cancelled.
	got = ask(`{"mode":"url","message":"Sign in","elicitationId":"e1","url":"https://example.com"}`)
	if r := <-got; r.Cancel == nil {
		t.Fatalf("url = %+v", r)
	}
	// The turn stopped while the card is open: cancelled, the card resolved interrupted.
	got = ask(one)
	json.Unmarshal(log.next(t, protocol.EvClarify).Data, &cd)
	tr.r.releaseTurn(tr)
	if r := <-got; r.Cancel == nil {
		t.Fatalf("stopped = %+v", r)
	}
	var rd protocol.ResolvedData
	json.Unmarshal(log.next(t, protocol.EvClarifyResolved).Data, &rd)
	if rd.Reason != protocol.ResolvedInterrupted {
		t.Fatalf("resolved = %+v", rd)
	}
	// Outside a turn: cancelled at once.
	tr.c.turn = nil
	if r := <-ask(one); r.Cancel == nil {
		t.Fatalf("outside a turn = %+v", r)
	}
}

// TestElicitationOfASecretIsRefused: a form that asks for a secret (a password or
// writeOnly field, a field named like an API key) is never shown on a question card,
// whose answer the chat's transcript keeps: the agent is told it was cancelled and a
// warning names the field and where a key goes instead.
func TestElicitationOfASecretIsRefused(t *testing.T) {
	ws := t.TempDir()
	c, _, log := clientWithTurn(t, ws)
	for _, field := range []string{
		`"key":{"type":"string","title":"API key"}`,
		`"pw":{"type":"string","title":"Vault","format":"password"}`,
		`"x":{"type":"string","title":"Value","writeOnly":true}`,
		`"value":{"type":"string","description":"Paste your OpenAI API key"}`,
	} {
		req := elicitRequest(t, `{"mode":"form","message":"Sign in","requestedSchema":{"type":"object","properties":{"user":{"type":"string"},`+field+`}}}`)
		got := make(chan sdk.UnstableCreateElicitationResponse, 1)
		go func() {
			resp, _ := c.UnstableCreateElicitation(context.Background(), req)
			got <- resp
		}()
		var wd protocol.WarningData
		json.Unmarshal(log.next(t, protocol.EvWarning).Data, &wd)
		if !strings.Contains(wd.Message, "asks for a secret") || !strings.Contains(wd.Message, "Settings, Agents") {
			t.Fatalf("%s: warning = %+v", field, wd)
		}
		if resp := <-got; resp.Cancel == nil {
			t.Fatalf("%s: response %+v; want cancel", field, resp)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	for _, f := range log.frames {
		if f.Event == protocol.EvClarify {
			t.Fatalf("a clarify card for a secret field: %s", f.Data)
		}
	}
}
