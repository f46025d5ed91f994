package builtin

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

func clarifyTurn(id string, questions ...map[string]any) providertest.Turn {
	return providertest.CallTurn("", providertest.Call(id, "clarify", map[string]any{"questions": questions}))
}

func respond(rt *Runtime, session, id, response string) (bool, error) {
	res, err := rt.ClarifyRespond(protocol.ClarifyRespondParams{SessionID: session, ClarifyID: id, Response: json.RawMessage(response)})
	return res.OK, err
}

func TestClarifyRoundTrip(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	p.Enqueue(clarifyTurn("q",
		map[string]any{"question": "Which database?", "choices": []string{"SQLite", "Postgres"}},
		map[string]any{"question": "Which features?", "choices": []string{"auth", "search", "export"}, "multi_select": true},
		map[string]any{"question": "Anything else?"},
	), providertest.TextTurn("thanks"))
	run := startChat(t, rt, toolParams(p, "s1", t.TempDir()))
	var cl protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &cl)
	if cl.Kind != protocol.ClarifyKindClarify || cl.Question != "Which database?" || strings.Join(cl.Choices, ",") != "SQLite,Postgres" || cl.MultiSelect ||
		len(cl.Questions) != 3 || !cl.Questions[1].MultiSelect || cl.Questions[2].Choices == nil || cl.TimeoutS != 3600 || !strings.HasPrefix(cl.ClarifyID, "cl_") {
		t.Fatalf("clarify %+v", cl)
	}
	// Wrong shapes are refused and leave it parked; wrong sessions and ids are ok:false.
	for _, bad := range []string{`"SQLite"`, `["a","b"]`, `["a",["b"],3]`, `{"value":"x"}`, `[1,2,3]`, ``, `["a",["b",2],"c"]`} {
		if ok, err := respond(rt, "s1", cl.ClarifyID, bad); ok || err == nil {
			t.Fatalf("response %s: ok %v err %v", bad, ok, err)
		}
	}
	if ok, err := respond(rt, "s2", cl.ClarifyID, `["a",["b"],"c"]`); ok || err != nil {
		t.Fatalf("other session: %v %v", ok, err)
	}
	if res, _ := rt.ApprovalRespond(protocol.ApprovalRespondParams{SessionID: "s1", ApprovalID: cl.ClarifyID, Choice: "once"}); res.OK {
		t.Fatal("approval.respond settled a clarify")
	}
	if ok, err := respond(rt, "s1", cl.ClarifyID, `["Postgres", ["auth","export"], "no"]`); !ok || err != nil {
		t.Fatalf("answer: %v %v", ok, err)
	}
	res := run.mustResult()
	var r protocol.ResolvedData
	run.waitFor(protocol.EvClarifyResolved, 1, &r)
	if r.ClarifyID != cl.ClarifyID || r.Reason != protocol.ResolvedAnswered {
		t.Fatalf("resolved %+v", r)
	}
	want := `{"answered":true,"answers":[{"question":"Which database?","answer":"Postgres"},{"question":"Which features?","answer":["auth","export"]},{"question":"Anything else?","answer":"no"}]}`
	if got := res.Messages[1].Content; got != want {
		t.Fatalf("tool row %s", got)
	}
	if ok, _ := respond(rt, "s1", cl.ClarifyID, `["a",["b"],"c"]`); ok {
		t.Fatal("a settled clarify took an answer")
	}
}

func TestClarifySimpleFormAndDismiss(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("a", "clarify", map[string]any{"question": "Go on?", "choices": []string{"yes", "no"}})),
		clarifyTurn("b", map[string]any{"question": "Name?"}),
		clarifyTurn("c", map[string]any{"question": "Too many?", "choices": []string{"1", "2", "3", "4", "5"}}),
		providertest.TextTurn("ok"))
	run := startChat(t, rt, toolParams(p, "s1", t.TempDir()))
	var cl protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &cl)
	if ok, err := respond(rt, "s1", cl.ClarifyID, `"yes"`); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	run.waitFor(protocol.EvClarify, 2, &cl)
	if ok, err := respond(rt, "s1", cl.ClarifyID, `null`); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	res := run.mustResult()
	if !strings.Contains(res.Messages[1].Content, `"answer":"yes"`) || !strings.Contains(res.Messages[3].Content, "dismissed") ||
		!strings.Contains(res.Messages[5].Content, "at most 4") || len(run.of(protocol.EvClarify)) != 2 {
		t.Fatalf("rows %+v", res.Messages)
	}
}

func TestClarifyTimeout(t *testing.T) {
	t.Parallel()
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	p.Enqueue(clarifyTurn("q", map[string]any{"question": "Which?"}), providertest.TextTurn("ok"))
	params := toolParams(p, "s1", t.TempDir())
	params.ClarifyTimeoutS = 1
	// Timed from before the turn, which holds the 1 s wait; the default (an hour) would
	// outlast the tests' deadline.
	start := time.Now()
	run := startChat(t, rt, params)
	res := run.mustResult()
	if took := time.Since(start); took < 900*time.Millisecond || took >= DefaultClarifyTimeout {
		t.Fatalf("took %v", took)
	}
	var r protocol.ResolvedData
	run.waitFor(protocol.EvClarifyResolved, 1, &r)
	if r.Reason != protocol.ResolvedTimeout || !strings.Contains(res.Messages[1].Content, "did not answer within 1 seconds") || rt.pendingCount() != 0 {
		t.Fatalf("resolved %+v rows %+v", r, res.Messages)
	}
}

func TestVaultDeclineAndBadNames(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("a", "request_secret", map[string]any{"name": "API_KEY", "reason": "x"})),
		providertest.CallTurn("",
			providertest.Call("b", "request_secret", map[string]any{"name": "lower", "reason": "x"}),
			providertest.Call("c", "request_secret", map[string]any{"name": "PATH", "reason": "x"}),
			providertest.Call("d", "request_secret", map[string]any{"name": "LD_PRELOAD", "reason": "x"})),
		providertest.TextTurn("ok"))
	run := startChat(t, rt, toolParams(p, "s1", t.TempDir()))
	var cl protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &cl)
	if ok, err := respond(rt, "s1", cl.ClarifyID, `null`); !ok || err != nil {
		t.Fatalf("%v %v", ok, err)
	}
	res := run.mustResult()
	if !strings.Contains(res.Messages[1].Content, "declined") || len(rt.secretEnv("s1")) != 0 {
		t.Fatalf("decline %+v", res.Messages[1])
	}
	for i, want := range []string{"not an environment variable name", "changes how every command runs", "changes how every command runs"} {
		if c := res.Messages[3+i].Content; !strings.Contains(c, want) {
			t.Errorf("row %d %s", 3+i, c)
		}
	}
	if len(run.of(protocol.EvClarify)) != 1 {
		t.Fatal("a bad name raised a prompt")
	}
}

// TestVaultInterrupted: stopping the turn while the vault prompt waits resolves it as
// interrupted.
func TestVaultInterrupted(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	p.Enqueue(providertest.CallTurn("", providertest.Call("a", "request_secret", map[string]any{"name": "API_KEY", "reason": "x"})))
	run := startChat(t, rt, toolParams(p, "s1", t.TempDir()))
	var cl protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &cl)
	run.cancel()
	res := run.mustResult()
	var r protocol.ResolvedData
	run.waitFor(protocol.EvClarifyResolved, 1, &r)
	if r.Reason != protocol.ResolvedInterrupted || res.Status != protocol.StatusCancelled || rt.pendingCount() != 0 {
		t.Fatalf("%+v %+v", r, res)
	}
	if ok, _ := respond(rt, "s1", cl.ClarifyID, `{"value":"late"}`); ok {
		t.Fatal("a late answer was taken")
	}
}
