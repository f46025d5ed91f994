package hermes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
)

// Translator tests that replay the gateway traffic recorded from the end-to-end suite
// against the real Hermes (testdata/e2e-<install>.trace, written by
// `HERMES_FIXTURES=$PWD/sidecar/hermes/testdata go test ./backend -run TestHermesEndToEnd`):
// "> " lines are what the runtime wrote, "< " what the gateway did. Each prompt is
// replayed into a fresh turn and its frames and result are checked, for both dialects,
// with unknown events and malformed lines mixed in.

type traceLine struct {
	out  bool
	line []byte
}

func readTrace(t *testing.T, name string) []traceLine {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatalf("fixture: %v (record it: see the comment at the top of replay_test.go)", err)
	}
	var out []traceLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		l := sc.Bytes()
		if len(l) < 2 {
			continue
		}
		out = append(out, traceLine{out: l[0] == '>', line: append([]byte(nil), l[2:]...)})
	}
	return out
}

// recordedTurn is one prompt and what followed for its session.
type recordedTurn struct {
	dialect string
	sid     string
	text    string
	lines   []traceLine // inbound events and requests of sid, and our answers, in order
}

func splitTurns(t *testing.T, dialect string, lines []traceLine) []recordedTurn {
	var turns []recordedTurn
	open := map[string]int{} // runtime sid -> index of its current turn
	for _, tl := range lines {
		var m gwMessage
		if json.Unmarshal(tl.line, &m) != nil {
			continue
		}
		var p struct {
			SessionID string `json:"session_id"`
			Text      string `json:"text"`
		}
		json.Unmarshal(m.Params, &p) //nolint:errcheck
		if tl.out {
			switch m.Method {
			case "prompt.submit":
				if strings.HasPrefix(p.SessionID, "talaria-probe") {
					continue // the method probe at connect time
				}
				turns = append(turns, recordedTurn{dialect: dialect, sid: p.SessionID, text: p.Text})
				open[p.SessionID] = len(turns) - 1
			case "approval.respond", "clarify.respond", "secret.respond", "sudo.respond", "session.steer", "session.interrupt":
				if i, ok := open[p.SessionID]; ok {
					turns[i].lines = append(turns[i].lines, tl)
				} else if m.Method != "approval.respond" && m.Method != "session.steer" && m.Method != "session.interrupt" {
					// by request_id: the latest open turn
					if len(turns) > 0 {
						turns[len(turns)-1].lines = append(turns[len(turns)-1].lines, tl)
					}
				}
			case "":
				// a response to a server request: it belongs to the turn that got it
				for i := len(turns) - 1; i >= 0; i-- {
					if slices.ContainsFunc(turns[i].lines, func(x traceLine) bool {
						var r gwMessage
						return !x.out && json.Unmarshal(x.line, &r) == nil && r.Method != "" && string(r.ID) == string(m.ID)
					}) {
						turns[i].lines = append(turns[i].lines, tl)
						break
					}
				}
			}
			continue
		}
		sid := p.SessionID
		if m.Method == "event" {
			var ev gwEvent
			json.Unmarshal(m.Params, &ev) //nolint:errcheck
			sid = ev.SessionID
		}
		if i, ok := open[sid]; ok && m.Method != "" {
			turns[i].lines = append(turns[i].lines, tl)
		}
	}
	// A prompt cut off by the gateway's death (the crash test) has no message.complete.
	return slices.DeleteFunc(turns, func(rt recordedTurn) bool {
		return !slices.ContainsFunc(rt.lines, func(x traceLine) bool { return !x.out && bytes.Contains(x.line, []byte(`"message.complete"`)) })
	})
}

type replayed struct {
	frames []struct {
		event string
		data  map[string]any
	}
	res *protocol.ChatResult
	err error
	t   *turn
}

func (r *replayed) events() []string {
	var out []string
	for _, f := range r.frames {
		out = append(out, f.event)
	}
	return out
}

func (r *replayed) of(event string) []map[string]any {
	var out []map[string]any
	for _, f := range r.frames {
		if f.event == event {
			out = append(out, f.data)
		}
	}
	return out
}

func (r *replayed) text(event string) string {
	var b strings.Builder
	for _, d := range r.of(event) {
		s, _ := d["text"].(string)
		b.WriteString(s)
	}
	return b.String()
}

// replay feeds one recorded turn to a fresh translator, mixing in an unknown event, an
// event whose payload is not an object and a request of a method Talaria has no card
// for after every recorded line; answers the runtime wrote resolve their cards as
// approvalRespond and clarifyRespond do after the gateway took them.
func replay(t *testing.T, rt recordedTurn, noise bool) *replayed {
	t.Helper()
	r := &Runtime{log: slog.New(slog.DiscardHandler)}
	s := &hsession{r: r, id: "talaria-session", wake: make(chan struct{}, 1), quit: make(chan struct{})}
	out := &replayed{}
	emit := func(event string, data any) {
		var m map[string]any
		switch v := data.(type) {
		case json.RawMessage:
			json.Unmarshal(v, &m) //nolint:errcheck
		default:
			b, _ := json.Marshal(v)
			json.Unmarshal(b, &m) //nolint:errcheck
		}
		out.frames = append(out.frames, struct {
			event string
			data  map[string]any
		}{event, m})
	}
	tr := newTurn(r, s, rt.dialect, "st_replay", 8*time.Second, emit)
	out.t = tr
	for _, tl := range rt.lines {
		var m gwMessage
		if err := json.Unmarshal(tl.line, &m); err != nil {
			t.Fatalf("bad fixture line: %s", tl.line)
		}
		if tl.out {
			tr.mu.Lock()
			switch m.Method {
			case "approval.respond":
				var p struct {
					Choice string `json:"choice"`
				}
				json.Unmarshal(m.Params, &p) //nolint:errcheck
				for _, a := range tr.approvals {
					if !a.resolved {
						a.answered = true
						tr.resolveApproval(a, protocol.ResolvedAnswered, p.Choice)
						break
					}
				}
			case "clarify.respond", "secret.respond", "sudo.respond":
				var p struct {
					RequestID string `json:"request_id"`
				}
				json.Unmarshal(m.Params, &p) //nolint:errcheck
				tr.resolveClarifyByRequestID(p.RequestID, protocol.ResolvedAnswered)
			case "":
				var res map[string]any
				json.Unmarshal(m.Result, &res) //nolint:errcheck
				for _, a := range tr.approvals {
					if reqIDString(a.reqID) == reqIDString(m.ID) {
						a.answered = true
						c, _ := res["choice"].(string)
						tr.resolveApproval(a, protocol.ResolvedAnswered, c)
					}
				}
				for _, c := range tr.clarifies {
					if reqIDString(c.reqID) == reqIDString(m.ID) {
						tr.resolveClarify(c, protocol.ResolvedAnswered)
					}
				}
			case "session.interrupt":
				tr.interrupting = true
			}
			tr.mu.Unlock()
			continue
		}
		in := inbound{At: time.Now()}
		if m.Method == "event" {
			ev, err := decodeEvent(m.Params)
			if err != nil {
				t.Fatalf("bad fixture event: %s", tl.line)
			}
			in.Event = ev
		} else {
			in.Request = newRequest(m.ID, m.Method, m.Params)
		}
		tr.handle(in)
		if noise && !tr.isEnded() {
			tr.handle(inbound{Event: newEvent("brand.new.event", rt.sid, json.RawMessage(`{"text":"never shown"}`))})
			tr.handle(inbound{Event: newEvent("message.delta", rt.sid, json.RawMessage(`["not","an","object"]`))})
			tr.handle(inbound{Event: newEvent("tool.complete", rt.sid, json.RawMessage(`{"tool_id":`))})
		}
	}
	select {
	case <-tr.done:
	default:
		t.Fatalf("turn %q did not end at its message.complete; frames %v", rt.text, out.events())
	}
	cancelled := slices.ContainsFunc(rt.lines, func(x traceLine) bool { return x.out && bytes.Contains(x.line, []byte(`"session.interrupt"`)) })
	out.res, out.err = tr.result(cancelled, nil)
	return out
}

func TestReplayRecordedGatewayTraffic(t *testing.T) {
	for _, fx := range []struct{ file, dialect string }{{"e2e-0.19.0.trace", "A"}, {"e2e-newest.trace", "B"}} {
		t.Run(fx.dialect, func(t *testing.T) {
			turns := splitTurns(t, fx.dialect, readTrace(t, fx.file))
			if len(turns) < 12 {
				t.Fatalf("only %d prompts in %s", len(turns), fx.file)
			}
			seen := map[string]bool{}
			for _, rt := range turns {
				for _, noise := range []bool{false, true} {
					r := replay(t, rt, noise)
					checkInvariants(t, rt, r)
					if noise {
						continue
					}
					seen[rt.text] = true
					checkSpecific(t, rt, r)
				}
			}
			for _, want := range []string{"hello", "delete the folder", "delete the other folder", "delete a third folder",
				"paint it", "check the canary", "take a nap", "write a long story"} {
				if !seen[want] {
					t.Errorf("the fixture has no %q prompt", want)
				}
			}
		})
	}
}

// checkInvariants holds for every replayed turn.
func checkInvariants(t *testing.T, rt recordedTurn, r *replayed) {
	t.Helper()
	if r.err != nil {
		var pe *protocol.Error
		if !asProto(r.err, &pe) {
			t.Fatalf("%q: error %v is not a protocol error", rt.text, r.err)
		}
		return
	}
	// Every tool_complete follows its tool frame; every card is resolved by the end.
	started := map[string]bool{}
	for _, f := range r.frames {
		switch f.event {
		case "tool":
			started[f.data["tid"].(string)] = true
		case "tool_complete":
			if !started[f.data["tid"].(string)] {
				t.Errorf("%q: tool_complete %v without its tool frame", rt.text, f.data["tid"])
			}
		case "brand.new.event":
			t.Errorf("%q: an unknown event was relayed", rt.text)
		}
	}
	if n, m := len(r.of("approval")), len(r.of("approval_resolved")); n != m {
		t.Errorf("%q: %d approvals, %d resolved", rt.text, n, m)
	}
	if n, m := len(r.of("clarify")), len(r.of("clarify_resolved")); n != m {
		t.Errorf("%q: %d clarifies, %d resolved", rt.text, n, m)
	}
	// Rows are a well-formed history: each tool row answers a call made before it.
	calls := map[string]bool{}
	for _, m := range r.res.Messages {
		for _, c := range m.ToolCalls {
			calls[c.ID] = true
		}
		if m.Role == "tool" && !calls[m.ToolCallID] {
			t.Errorf("%q: tool row %s answers no earlier call", rt.text, m.ToolCallID)
		}
	}
	if r.res.Status == protocol.StatusCompleted && !strings.Contains(r.text("token"), r.res.FinalResponse) {
		t.Errorf("%q: final %q not among the tokens %q", rt.text, r.res.FinalResponse, r.text("token"))
	}
}

func asProto(err error, pe **protocol.Error) bool {
	e, ok := err.(*protocol.Error)
	if ok {
		*pe = e
	}
	return ok
}

// checkSpecific checks what each scripted prompt of the suite must produce.
func checkSpecific(t *testing.T, rt recordedTurn, r *replayed) {
	t.Helper()
	res := r.res
	switch rt.text {
	case "hello":
		if res == nil || res.FinalResponse != "Hello from Hermes." || r.text("reasoning") != "Weighing it. " {
			t.Errorf("hello: %+v reasoning %q", res, r.text("reasoning"))
		}
		if len(r.of("usage")) == 0 || res.Usage.InputTokens != 200 || res.Usage.OutputTokens != 11 {
			t.Errorf("hello: usage %+v", res.Usage)
		}
	case "delete the folder":
		ap := r.of("approval")
		if len(ap) != 1 || !slices.Equal(anyStrings(ap[0]["choices"]), []string{"once", "session", "always", "deny"}) || ap[0]["timeout_s"] != float64(8) {
			t.Errorf("approval %v", ap)
		}
		if rs := r.of("approval_resolved"); len(rs) != 1 || rs[0]["reason"] != "answered" || rs[0]["choice"] != "once" {
			t.Errorf("resolved %v", rs)
		}
		if res.FinalResponse != "Deleted." || len(res.Messages) != 3 || res.Messages[0].ToolCalls[0].Function.Name != "terminal" ||
			!strings.Contains(res.Messages[0].ToolCalls[0].Function.Arguments, "rm -rf") {
			t.Errorf("rows %+v", res.Messages)
		}
	case "delete the other folder":
		if rs := r.of("approval_resolved"); len(rs) != 1 || rs[0]["choice"] != "deny" {
			t.Errorf("resolved %v", rs)
		}
	case "delete a third folder":
		if rs := r.of("approval_resolved"); len(rs) != 1 || rs[0]["reason"] != "timeout" {
			t.Errorf("expired approval resolved %v", rs)
		}
	case "paint it":
		cl := r.of("clarify")
		// Dialect B marks Hermes's own pick "(Recommended)" (tools/clarify_tool.py
		// mark_recommended) and strips it from the answer: the card shows its label.
		choices := anyStrings(cl[0]["choices"])
		for i := range choices {
			choices[i] = strings.TrimSuffix(choices[i], " (Recommended)")
		}
		if len(cl) != 1 || cl[0]["question"] != "Which colour?" || !slices.Equal(choices, []string{"red", "blue"}) {
			t.Errorf("clarify %v", cl)
		}
	case "paint it again":
		cl := r.of("clarify")
		qs, _ := cl[0]["questions"].([]any)
		if len(qs) != 2 || qs[0].(map[string]any)["multi_select"] != true {
			t.Errorf("multi clarify %v", cl)
		}
	case "check the canary":
		cl := r.of("clarify")
		if len(cl) != 1 || cl[0]["kind"] != "vault" || cl[0]["name"] != "CANARY_TOKEN" || cl[0]["saved_hint"] != "vault:CANARY_TOKEN" ||
			!strings.Contains(cl[0]["agent_notice"].(string), ".env") {
			t.Errorf("vault %v", cl)
		}
	case "take a nap":
		// The steer was given by the host (not in the trace): the turn is a tool and text.
		if len(r.of("tool")) != 1 || res.FinalResponse != "Done, with bananas." {
			t.Errorf("nap: %v %+v", r.events(), res)
		}
	case "write a long story":
		if res == nil || res.Status != protocol.StatusCancelled || !strings.Contains(res.FinalResponse, "Partial answer") {
			t.Errorf("stopped: %+v", res)
		}
		if last := res.Messages[len(res.Messages)-1]; !last.Partial || !strings.Contains(last.Content, "Partial answer") {
			t.Errorf("stopped rows %+v", res.Messages)
		}
	}
}

func anyStrings(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
