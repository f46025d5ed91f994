package turn

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
)

// scriptCaller plays a chat.start: it pushes frames, then returns result/err.
type scriptCaller struct {
	frames []protocol.FrameParams
	result protocol.ChatResult
	err    error
	title  string // aux.complete's answer; an error when ""
	// titleGate, when set, holds aux.complete until it is closed (or ctx ends).
	titleGate chan struct{}
}

func (c *scriptCaller) Call(ctx context.Context, method string, params any, onFrame supervisor.FrameFunc, result any) error {
	if method == protocol.MethodAuxComplete {
		if c.titleGate != nil {
			select {
			case <-c.titleGate:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if c.title == "" {
			return protocol.NewError(0, protocol.CondProviderError, "no titles here")
		}
		result.(*protocol.AuxCompleteResult).Text = c.title
		return nil
	}
	for _, f := range c.frames {
		onFrame(f)
	}
	if c.err != nil {
		return c.err
	}
	*(result.(*protocol.ChatResult)) = c.result
	return nil
}

func textFrame(ev, text string) protocol.FrameParams {
	b, _ := json.Marshal(protocol.TextData{Text: text})
	return protocol.FrameParams{Event: ev, Data: b}
}

func setup(t *testing.T, c Caller, window time.Duration) (*Runner, *store.Store, *[]Frame, *sync.Mutex) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	b := bus.New()
	var mu sync.Mutex
	var got []Frame
	b.Subscribe(func(ev bus.Event) {
		if f, ok := ev.Payload.(Frame); ok {
			mu.Lock()
			got = append(got, f)
			mu.Unlock()
		}
	})
	cfg := func(context.Context, store.Session) (Config, error) { return Config{Model: "m"}, nil }
	r := New(st, c, b, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r.Coalesce = window
	return r, st, &got, &mu
}

func runOne(t *testing.T, r *Runner, st *store.Store) (string, string) {
	t.Helper()
	sess, err := st.CreateSession(context.Background(), store.NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	started, err := r.StartTurn(context.Background(), sess.ID, "hello")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Wait(context.Background(), started.StreamID); err != nil {
		t.Fatal(err)
	}
	return sess.ID, started.StreamID
}

func TestTextDeltasAreCoalescedAndOrderKept(t *testing.T) {
	c := &scriptCaller{result: protocol.ChatResult{Status: protocol.StatusCompleted,
		Messages: []protocol.ChatMessage{{Role: "assistant", Content: strings.Repeat("a", 200) + "bc"}}}}
	for i := 0; i < 100; i++ {
		c.frames = append(c.frames, textFrame(protocol.EvReasoning, "r"))
	}
	for i := 0; i < 200; i++ {
		c.frames = append(c.frames, textFrame(protocol.EvToken, "a"))
	}
	c.frames = append(c.frames, protocol.FrameParams{Event: protocol.EvWarning, Data: json.RawMessage(`{"type":"retry","message":"m"}`)},
		textFrame(protocol.EvToken, "b"), textFrame(protocol.EvToken, "c"),
		protocol.FrameParams{Event: "no_such_event", Data: json.RawMessage(`{}`)},
		protocol.FrameParams{Event: protocol.EvStatus, Data: json.RawMessage(`[1]`)})
	// A window far longer than the test: text is flushed only by other frames and the end.
	r, st, got, mu := setup(t, c, time.Hour)
	_, stream := runOne(t, r, st)
	mu.Lock()
	defer mu.Unlock()
	// Consecutive frames of one kind are one run: its frames and its text's length.
	type run struct {
		event         string
		frames, bytes int
	}
	var runs []run
	var seq []string
	for _, f := range *got {
		var td protocol.TextData
		_ = json.Unmarshal(f.Data, &td)
		switch f.Event {
		case protocol.EvToken, protocol.EvReasoning, protocol.EvWarning:
			seq = append(seq, fmt.Sprintf("%s(%d)", f.Event, len(td.Text)))
			if len(runs) == 0 || runs[len(runs)-1].event != f.Event {
				runs = append(runs, run{event: f.Event})
			}
			runs[len(runs)-1].frames++
			runs[len(runs)-1].bytes += len(td.Text)
		}
	}
	// The first delta after a quiet period goes out at once (its timer waits for
	// nothing); the rest wait for the window, which a flush another frame or the other
	// kind of text caused does not start again. So the reasoning and the answer before
	// the warning may each be split in two (the first delta, then the rest), the answer
	// after it too, and nothing else is.
	want := []run{{protocol.EvReasoning, 0, 100}, {protocol.EvToken, 0, 200}, {protocol.EvWarning, 1, 0}, {protocol.EvToken, 0, 2}}
	ok := len(runs) == len(want)
	for i := 0; ok && i < len(want); i++ {
		ok = runs[i].event == want[i].event && runs[i].bytes == want[i].bytes && runs[i].frames >= 1 && runs[i].frames <= 2 &&
			(want[i].frames == 0 || runs[i].frames == want[i].frames)
	}
	if !ok {
		t.Fatalf("frames = %v", seq)
	}
	for _, f := range *got {
		if f.Event == "no_such_event" || f.Event == protocol.EvStatus {
			t.Fatalf("bad sidecar frame %s reached the window", f.Event)
		}
	}
	j, _ := r.StreamSince(context.Background(), stream, 0)
	if len(j) != len(*got) {
		t.Fatalf("journal %d frames, window %d", len(j), len(*got))
	}
}

func TestDefaultWindowStillJoinsABurst(t *testing.T) {
	c := &scriptCaller{result: protocol.ChatResult{Status: protocol.StatusCompleted}}
	for i := 0; i < 1000; i++ {
		c.frames = append(c.frames, textFrame(protocol.EvToken, "x"))
	}
	r, st, got, mu := setup(t, c, 0)
	sid, _ := runOne(t, r, st)
	mu.Lock()
	n, text := 0, ""
	for _, f := range *got {
		if f.Event == protocol.EvToken {
			n++
			var td protocol.TextData
			_ = json.Unmarshal(f.Data, &td)
			text += td.Text
		}
	}
	mu.Unlock()
	if text != strings.Repeat("x", 1000) {
		t.Fatalf("joined text has %d bytes", len(text))
	}
	if n >= 1000 {
		t.Fatalf("1000 deltas pushed at once became %d frames: not coalesced", n)
	}
	// No assistant row in the result: the streamed text is saved.
	msgs, _ := st.Messages(context.Background(), sid)
	if len(msgs) != 2 || msgs[1].Content != strings.Repeat("x", 1000) {
		t.Fatalf("saved %+v", msgs)
	}
}

func TestClassify(t *testing.T) {
	cases := []struct {
		cond, msg string
		status    int
		want      string
	}{
		{protocol.CondCredentialMissing, "bad key", 401, ErrTypeAuthMismatch},
		{protocol.CondModelNotFound, "no model", 404, ErrTypeModelNotFound},
		{protocol.CondRateLimited, "slow down", 429, ErrTypeRateLimit},
		{protocol.CondRateLimited, "You exceeded your current quota", 429, ErrTypeQuotaExhausted},
		{protocol.CondProviderError, "This model's maximum context length is 8192 tokens", 400, ErrTypeContextTooLarge},
		{protocol.CondProviderError, "insufficient_quota", 402, ErrTypeQuotaExhausted},
		{protocol.CondProviderError, "connection reset by peer", 0, ErrTypeNetwork},
		{protocol.CondProviderError, "boom", 500, ErrTypeError},
		// Received from the provider without an HTTP status: never "could not reach".
		{protocol.CondProviderError, "OpenRouter reported an error: Provider returned error.", 0, ErrTypeError},
		{protocol.CondContextTooLong, "llama.cpp cannot take this conversation: request (9412 tokens) exceeds the available context size (8192 tokens).", 0, ErrTypeContextTooLarge},
		{protocol.CondNetworkError, "Could not reach OpenAI: no such host.", 0, ErrTypeNetwork},
		{protocol.CondStreamInterrupted, "Groq stopped sending: nothing arrived for 2 min.", 0, ErrTypeNetwork},
		{protocol.CondLocalRuntimeUnavailable, "refused", 0, ErrTypeLocalRuntimeUnavailable},
		{protocol.CondSidecarUnavailable, "gone", 0, ErrTypeSidecarUnavailable},
		{protocol.CondAgentIncompatible, "v2", 0, ErrTypeAgentIncompatible},
	}
	for _, c := range cases {
		e := protocol.NewError(0, c.cond, c.msg)
		e.Data.HTTPStatus = c.status
		got := Classify(e)
		if got.Type != c.want || got.Hint == "" || got.Label == "" || got.Message != c.msg ||
			(c.cond != protocol.CondNetworkError && c.cond != protocol.CondProviderError && got.Label == "Network error") {
			t.Errorf("Classify(%s, %q) = %+v, want type %s", c.cond, c.msg, got, c.want)
		}
	}
	// An ACP agent asking to sign in (its error carries the agent's ways as the hint):
	// the hint says to sign in to the agent, not to enter an API key.
	signIn := protocol.NewError(0, protocol.CondCredentialMissing, "OpenCode needs you to sign in (Authentication required)")
	signIn.Data.Hint = "It offers: Run `opencode auth login` in the terminal."
	if got := Classify(signIn); got.Type != ErrTypeAuthMismatch || strings.Contains(got.Hint, "API key") ||
		!strings.Contains(got.Hint, "Sign in to the agent") || !strings.Contains(got.Hint, "opencode auth login") {
		t.Errorf("an ACP agent's sign-in error = %+v", got)
	}
	if got := Classify(protocol.NewError(0, protocol.CondCredentialMissing, "bad key")); !strings.Contains(got.Hint, "API key") {
		t.Errorf("a provider's refused key = %+v", got)
	}
	coded := protocol.NewError(0, protocol.CondProviderError, "Bad request")
	coded.Data.ProviderCode = "context_length_exceeded"
	if got := Classify(coded); got.Type != ErrTypeContextTooLarge {
		t.Errorf("provider_code context_length_exceeded = %+v", got)
	}
	coded.Data.ProviderCode, coded.Data.Condition = "insufficient_quota", protocol.CondRateLimited
	if got := Classify(coded); got.Type != ErrTypeQuotaExhausted {
		t.Errorf("provider_code insufficient_quota = %+v", got)
	}
	if got := Classify(fmt.Errorf("plain")); got.Type != ErrTypeError {
		t.Errorf("plain error = %+v", got)
	}
}

func TestProvisionalTitle(t *testing.T) {
	cases := map[string]string{
		"  hello world ":                     "hello world",
		"first line\nsecond line":            "first line",
		strings.Repeat("word ", 30):          "word word word word word word word word word word word word…",
		"ünïcödé " + strings.Repeat("é", 80): "ünïcödé " + strings.Repeat("é", 52) + "…",
	}
	for in, want := range cases {
		if got := ProvisionalTitle(in); got != want {
			t.Errorf("ProvisionalTitle(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTitleAfterFirstExchange(t *testing.T) {
	cases := []struct{ model, want string }{
		{"  \"Greeting the user.\" \nextra", "Greeting the user"},
		{"", "hello"}, // the model call fails: a local title from the first exchange
	}
	for _, c := range cases {
		sc := &scriptCaller{title: c.model, result: protocol.ChatResult{Status: protocol.StatusCompleted,
			Messages: []protocol.ChatMessage{{Role: "assistant", Content: "hi!"}}}}
		r, st, got, mu := setup(t, sc, 0)
		sid, _ := runOne(t, r, st)
		// The model's title is made after stream_end: wait for it.
		if err := r.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		sess, _ := st.GetSession(context.Background(), sid)
		if sess.Title != c.want {
			t.Fatalf("title %q, want %q", sess.Title, c.want)
		}
		mu.Lock()
		var titles []string
		for _, f := range *got {
			if f.Event == protocol.EvTitle {
				titles = append(titles, string(f.Data))
			}
		}
		last := (*got)[len(*got)-1].Event
		mu.Unlock()
		// In the stream: the provisional title from the message; the stream ends last.
		if len(titles) != 1 || !strings.Contains(titles[0], "hello") || last != protocol.EvStreamEnd {
			t.Fatalf("title frames %v, last frame %s", titles, last)
		}
	}
	// A title the user set is never replaced.
	sc := &scriptCaller{title: "Model title", result: protocol.ChatResult{Status: protocol.StatusCompleted}}
	r, st, _, _ := setup(t, sc, 0)
	sess, _ := st.CreateSession(context.Background(), store.NewSession{})
	_ = st.SetTitle(context.Background(), sess.ID, "Mine", true)
	s, err := r.StartTurn(context.Background(), sess.ID, "hello")
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Wait(context.Background(), s.StreamID)
	_ = r.Shutdown(context.Background())
	if s2, _ := st.GetSession(context.Background(), sess.ID); s2.Title != "Mine" {
		t.Fatalf("manual title replaced by %q", s2.Title)
	}
}

// TestTitleNeverDelaysStreamEnd: stream_end comes, and the session is free (the tray's
// "working" ends), while the model's title call is still out; the title lands after,
// announced with sessions_changed, never as a frame after stream_end.
func TestTitleNeverDelaysStreamEnd(t *testing.T) {
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	b := bus.New()
	var mu sync.Mutex
	var events []string
	ended := make(chan struct{})
	b.Subscribe(func(ev bus.Event) {
		mu.Lock()
		defer mu.Unlock()
		name := ev.Name
		if f, ok := ev.Payload.(Frame); ok {
			name = f.Event
			if f.Event == protocol.EvStreamEnd {
				close(ended)
			}
		}
		events = append(events, name)
	})
	gate := make(chan struct{})
	sc := &scriptCaller{title: "Greeting the user", titleGate: gate, result: protocol.ChatResult{Status: protocol.StatusCompleted,
		Messages: []protocol.ChatMessage{{Role: "assistant", Content: "hi!"}}}}
	r := New(st, sc, b, func(context.Context, store.Session) (Config, error) { return Config{Model: "m"}, nil },
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	sess, _ := st.CreateSession(context.Background(), store.NewSession{})
	started, err := r.StartTurn(context.Background(), sess.ID, "hello")
	if err != nil {
		t.Fatal(err)
	}
	timer := time.NewTimer(testwait.Timeout)
	defer timer.Stop()
	select {
	case <-ended:
	case <-timer.C:
		close(gate)
		t.Fatal("no stream_end while the title call waits (it waits for the title)")
	}
	if r.Live(started.StreamID) || r.Busy(sess.ID) {
		t.Fatal("the session is still busy after stream_end")
	}
	if s, _ := st.GetSession(context.Background(), sess.ID); s.Title != "hello" {
		t.Fatalf("title before the model answered %q", s.Title)
	}
	close(gate)
	if err := r.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s, _ := st.GetSession(context.Background(), sess.ID); s.Title != "Greeting the user" {
		t.Fatalf("title %q", s.Title)
	}
	mu.Lock()
	defer mu.Unlock()
	end := slices.Index(events, protocol.EvStreamEnd)
	if end < 0 || events[len(events)-1] != bus.EventSessionsChanged || slices.Contains(events[end+1:], protocol.EvTitle) {
		t.Fatalf("events %v", events)
	}
}

// recordingCaller answers chat.start with a script and records the params it got.
type recordingCaller struct {
	scriptCaller
	mu     sync.Mutex
	starts []protocol.ChatStartParams
}

func (c *recordingCaller) Call(ctx context.Context, method string, params any, onFrame supervisor.FrameFunc, result any) error {
	if p, ok := params.(protocol.ChatStartParams); ok {
		c.mu.Lock()
		c.starts = append(c.starts, p)
		c.mu.Unlock()
	}
	return c.scriptCaller.Call(ctx, method, params, onFrame, result)
}

func TestTurnRunsOnItsRuntimeAndKeepsTheAgentSession(t *testing.T) {
	builtin := &recordingCaller{}
	agent := &recordingCaller{scriptCaller: scriptCaller{
		frames: []protocol.FrameParams{
			{Event: protocol.EvAgentSession, Data: json.RawMessage(`{"agent_session_id":"h-42"}`)},
			textFrame(protocol.EvToken, "hello from the agent"),
		},
		result: protocol.ChatResult{Status: protocol.StatusCompleted, AgentSessionID: "h-42",
			Messages: []protocol.ChatMessage{{Role: "assistant", Content: "hello from the agent"}}},
	}}
	r, st, got, mu := setup(t, builtin, time.Millisecond)
	r.config = func(_ context.Context, s store.Session) (Config, error) {
		return Config{Model: "m", Runtime: s.Runtime, Caller: agent, AgentSessionID: s.AgentSessionID}, nil
	}
	ctx := context.Background()
	sess, err := st.CreateSession(ctx, store.NewSession{Runtime: "hermes:work"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		started, err := r.StartTurn(ctx, sess.ID, fmt.Sprintf("turn %d", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Wait(ctx, started.StreamID); err != nil {
			t.Fatal(err)
		}
	}
	if len(builtin.starts) != 0 {
		t.Errorf("the built-in runtime got %d chat.start calls", len(builtin.starts))
	}
	if len(agent.starts) != 2 || agent.starts[0].AgentSessionID != "" || agent.starts[1].AgentSessionID != "h-42" {
		t.Fatalf("agent's chat.start agent_session_ids: %+v", agent.starts)
	}
	if s, _ := st.GetSession(ctx, sess.ID); s.AgentSessionID != "h-42" {
		t.Errorf("stored agent session %q", s.AgentSessionID)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, f := range *got {
		if f.Event == protocol.EvAgentSession {
			t.Errorf("agent_session reached the window: %s", f.Data)
		}
	}
}

func TestAgentSessionOfALeftRuntimeIsDropped(t *testing.T) {
	agent := &recordingCaller{}
	agent.result = protocol.ChatResult{Status: protocol.StatusCompleted, AgentSessionID: "late"}
	r, st, _, _ := setup(t, agent, time.Millisecond)
	r.config = func(_ context.Context, s store.Session) (Config, error) {
		return Config{Model: "m", Runtime: "acp:old", Caller: agent}, nil
	}
	ctx := context.Background()
	sess, err := st.CreateSession(ctx, store.NewSession{Runtime: "acp:new"})
	if err != nil {
		t.Fatal(err)
	}
	started, err := r.StartTurn(ctx, sess.ID, "hi")
	if err != nil {
		t.Fatal(err)
	}
	_ = r.Wait(ctx, started.StreamID)
	if s, _ := st.GetSession(ctx, sess.ID); s.AgentSessionID != "" {
		t.Errorf("an agent session of another runtime was stored: %q", s.AgentSessionID)
	}
}
