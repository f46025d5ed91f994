package hermes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type sinkRec struct {
	mu  sync.Mutex
	got []inbound
}

func (s *sinkRec) deliver(in inbound) {
	s.mu.Lock()
	s.got = append(s.got, in)
	s.mu.Unlock()
}

// testGateway is a gateway without a process: lines are fed to handleLine, what it
// writes lands in out.
func testGateway() (*gateway, *syncBuf) {
	out := &syncBuf{}
	g := &gateway{log: slog.New(slog.DiscardHandler), stdin: nopCloser{out}, calls: map[string]chan gwReply{},
		sinks: map[string]gwSink{}, ready: make(chan struct{}), done: make(chan struct{})}
	return g, out
}

// TestGatewayLinesBadInputNeverBreaksTheConnection: malformed lines, lines that are
// not JSON-RPC, events without a type, replies to no call and requests for sessions
// the runtime does not hold are dropped (the request is declined with -32601), and
// the messages around them still arrive.
func TestGatewayLinesBadInputNeverBreaksTheConnection(t *testing.T) {
	g, out := testGateway()
	rec := &sinkRec{}
	g.attach("s1", rec)
	ch := make(chan gwReply, 1)
	g.calls["7"] = ch
	for _, l := range []string{
		`not json at all`,
		`[1,2,3]`,
		`{"jsonrpc":"2.0","method":"event","params":{"session_id":"s1"}}`,
		`{"jsonrpc":"2.0","method":"event","params":"nope"}`,
		`{"jsonrpc":"2.0","id":999,"result":{}}`,
		`{"jsonrpc":"2.0","id":"srq-1","method":"approval","params":{"session_id":"someone-else"}}`,
		`{"jsonrpc":"2.0","method":"event","params":{"type":"message.delta","session_id":"s1","payload":{"text":"hi"}}}`,
		`{"jsonrpc":"2.0","method":"event","params":{"type":"brand.new","session_id":"s1","payload":{}}}`,
		`{"jsonrpc":"2.0","id":"srq-2","method":"clarify","params":{"session_id":"s1","questions":[]}}`,
		`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"method not found"}}`,
		`{"truncated`,
	} {
		g.handleLine([]byte(l))
	}
	if len(rec.got) != 3 || rec.got[0].Event.Type != "message.delta" || rec.got[1].Event.Type != "brand.new" || rec.got[2].Request.Method != "clarify" {
		t.Fatalf("delivered %+v", rec.got)
	}
	select {
	case r := <-ch:
		if !isMissing(r.err) {
			t.Errorf("reply %+v", r)
		}
	default:
		t.Fatal("the reply to call 7 was lost")
	}
	if !strings.Contains(out.String(), `"id":"srq-1"`) || !strings.Contains(out.String(), `-32601`) {
		t.Errorf("the request for another session was not declined: %s", out.String())
	}
}

// TestReadLineSkipsOverlongLines: a line longer than the limit is skipped whole and the
// next one is read.
func TestReadLineSkipsOverlongLines(t *testing.T) {
	in := strings.Repeat("x", 5000) + "\n" + `{"ok":1}` + "\n"
	br := bufio.NewReaderSize(strings.NewReader(in), 16)
	l, err := readLine(br, 1000)
	if err != nil || l != nil {
		t.Fatalf("long line: %q %v", l, err)
	}
	l, err = readLine(br, 1000)
	if err != nil || strings.TrimSpace(string(l)) != `{"ok":1}` {
		t.Fatalf("next line: %q %v", l, err)
	}
}

// TestTranslatorIgnoresWhatItCannotUse: an unknown event, a payload that is not an
// object, and a dialect-B request for a desktop card Talaria does not have (declined at
// once so Hermes does not wait out its deadline) leave the turn unchanged.
func TestTranslatorIgnoresWhatItCannotUse(t *testing.T) {
	g, out := testGateway()
	r := &Runtime{log: slog.New(slog.DiscardHandler)}
	s := &hsession{r: r, id: "x", gw: g, sid: "s1", wake: make(chan struct{}, 1), quit: make(chan struct{})}
	var frames []string
	tr := newTurn(r, s, "B", "st_1", time.Minute, func(ev string, _ any) { frames = append(frames, ev) })
	tr.handle(inbound{Event: newEvent("wholly.new.event", "s1", json.RawMessage(`{"text":"x"}`))})
	tr.handle(inbound{Event: newEvent("message.delta", "s1", json.RawMessage(`"a string"`))})
	tr.handle(inbound{Request: newRequest(json.RawMessage(`"srq-9"`), "theme.pick", json.RawMessage(`{"session_id":"s1"}`))})
	tr.handle(inbound{Event: newEvent("message.delta", "s1", json.RawMessage(`{"text":"ok"}`))})
	if strings.Join(frames, ",") != "token" {
		t.Errorf("frames %v", frames)
	}
	if !strings.Contains(out.String(), `"srq-9"`) || !strings.Contains(out.String(), "-32601") {
		t.Errorf("theme.pick not declined: %s", out.String())
	}
}

// TestClassifyKeepsHermesWords: Hermes's error messages map to our conditions.
func TestClassifyKeepsHermesWords(t *testing.T) {
	for msg, want := range map[string]string{
		"Error code: 401 - invalid api key":                                     "credential_missing",
		"No inference provider configured. Run 'hermes model' to choose":        "credential_missing",
		"Error code: 429 - rate limit reached":                                  "rate_limited",
		"model 'nope' not found":                                                "model_not_found",
		"Connection error: connection refused (http://127.0.0.1:11434/v1)":      "local_runtime_unavailable",
		"Connection error: connection refused (https://api.example.com/v1)":     "provider_error",
		"This model's maximum context length is 8192 tokens, your prompt is 9k": "provider_error",
		"something odd happened":                                                "provider_error",
	} {
		e := classify(msg)
		if e.Condition() != want || !strings.Contains(e.Message, msg) {
			t.Errorf("%q: %s %q", msg, e.Condition(), e.Message)
		}
	}
	if e := classify("This model's maximum context length is 8192 tokens"); e.Data.ProviderCode != "context_length_exceeded" {
		t.Errorf("context: %+v", e.Data)
	}
}

// TestMissingGatewayMethodsTurnFeaturesOff: a method the gateway lacks (-32601 at the
// probe) leaves its protocol method out of rpc.hello's capabilities.
func TestMissingGatewayMethodsTurnFeaturesOff(t *testing.T) {
	all := map[string]bool{}
	for _, m := range probed {
		all[m] = true
	}
	d := &dialect{name: "A", has: all}
	if off := d.disabledMethods(); len(off) != 0 {
		t.Fatalf("everything present, yet disabled %v", off)
	}
	for gw, ours := range map[string]string{"session.steer": "chat.steer", "session.list": "agent.sessions",
		"session.resume": "agent.history", "config.set": "approval.yolo", "approval.respond": "approval.respond",
		"session.compress": "chat.compact"} {
		has := map[string]bool{}
		for k, v := range all {
			has[k] = v
		}
		delete(has, gw)
		off := (&dialect{name: "A", has: has}).disabledMethods()
		if len(off) != 1 || off[0] != ours {
			t.Errorf("without %s: disabled %v, want [%s]", gw, off, ours)
		}
	}
	// Dialect B answers prompts as server requests: A's *.respond methods do not matter.
	has := map[string]bool{}
	for k, v := range all {
		has[k] = v
	}
	delete(has, "approval.respond")
	delete(has, "clarify.respond")
	if off := (&dialect{name: "B", has: has}).disabledMethods(); len(off) != 0 {
		t.Errorf("dialect B disabled %v", off)
	}
}
