package backend_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/contract"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The test binary doubles as the sidecar: the supervisor starts it again with
// TALARIA_TEST_SIDECAR set, and it runs the real sidecar.Main over real stdio.
func TestMain(m *testing.M) {
	switch os.Getenv("TALARIA_TEST_SIDECAR") {
	case "":
		os.Exit(m.Run())
	case "garbage":
		os.Exit(sidecar.Main(nil, os.Stdin, &garbageWriter{w: os.Stdout}, os.Stderr))
	case "lose-first-answer":
		os.Exit(sidecar.Main(nil, &answerLoser{r: bufio.NewReader(os.Stdin)}, os.Stdout, os.Stderr))
	default:
		// A runtime's flags (RuntimeSpec.Args) follow the executable, as they follow
		// `talaria sidecar` in the app; a sidecar starting its ACP agent's guard runs
		// this binary again as `<exe> sidecar acp-guard -- ...`.
		args := os.Args[1:]
		if len(args) > 0 && args[0] == "sidecar" {
			args = args[1:]
		}
		os.Exit(sidecar.Main(args, os.Stdin, os.Stdout, os.Stderr))
	}
}

// answerLoser loses the first answer to each approval or clarify, and the first YOLO
// on and off, on its way to the sidecar
// (the sidecar never reads it), as a pipe to a dying or stuck sidecar would.
type answerLoser struct {
	r    *bufio.Reader
	buf  []byte
	lost map[string]bool
}

func (l *answerLoser) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		line, err := l.r.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			return 0, err
		}
		var req struct {
			Method string
			Params struct {
				ApprovalID string `json:"approval_id"`
				ClarifyID  string `json:"clarify_id"`
				Enabled    bool   `json:"enabled"`
			}
		}
		_ = json.Unmarshal(line, &req)
		key := req.Params.ApprovalID + req.Params.ClarifyID
		if req.Method == protocol.MethodApprovalYolo {
			key = fmt.Sprintf("yolo %v", req.Params.Enabled)
		}
		if (req.Method == protocol.MethodApprovalRespond || req.Method == protocol.MethodClarifyRespond ||
			req.Method == protocol.MethodApprovalYolo) && !l.lost[key] {
			if l.lost == nil {
				l.lost = map[string]bool{}
			}
			l.lost[key] = true
			continue
		}
		l.buf = line
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	return n, nil
}

// garbageWriter puts a malformed or bogus line before every line the sidecar writes.
type garbageWriter struct {
	w io.Writer
	n int
}

var garbage = []string{
	"this is not json\n",
	"[1,2,3]\n",
	`{"jsonrpc":"2.0","method":"$/frame","params":{"id":"nope","seq":1,"event":"token","data":{"text":"X"}}}` + "\n",
	`{"jsonrpc":"2.0","method":"$/frame","params":{"id":1,"seq":1,"event":"bogus_event","data":{}}}` + "\n",
	`{"jsonrpc":"2.0","id":987654,"result":{}}` + "\n",
	"{\"truncated\n",
}

func (g *garbageWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(g.w, garbage[g.n%len(garbage)]); err != nil {
		return 0, err
	}
	g.n++
	return g.w.Write(p)
}

// testSupervisor restarts a dead sidecar fast, and gives the supervisor's clocks that
// a stalled machine can outlast the shared deadline: a ping answered late does not make
// a healthy sidecar look hung (it would be killed mid-turn), and a call waits for a slow
// (re)start instead of failing. No test here is about those two clocks (the supervisor's
// own tests are).
func testSupervisor(c *supervisor.Config) {
	c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond
	c.PingTimeout, c.ReadyWait = testwait.Timeout, testwait.Timeout
}

type harness struct {
	t        testing.TB
	svc      *backend.Service
	provider *providertest.Server

	mu     sync.Mutex
	frames map[string][]turn.Frame
	ended  map[string]chan struct{}
}

func newHarness(t *testing.T, sidecarMode string) *harness { return newHarnessTB(t, sidecarMode) }

func newBenchHarness(b *testing.B) *harness { return newHarnessTB(b, "") }

func newHarnessTB(t testing.TB, sidecarMode string) *harness {
	return newHarnessWith(t, sidecarMode, nil)
}

func newHarnessWith(t testing.TB, sidecarMode string, tweak func(*backend.Options)) *harness {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := providertest.Start()
	t.Cleanup(p.Close)
	// Title calls are made after stream_end, beside a next turn: on their own queue
	// they never take an answer scripted for a stream (EnqueueAux scripts a title).
	p.SplitAux(true)
	if sidecarMode == "" {
		sidecarMode = "real"
	}
	opts := backend.Options{
		DataDir: t.TempDir(), DefaultWorkspace: filepath.Join(t.TempDir(), "Talaria"), Version: "test", SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=" + sidecarMode},
		Keyring:    vault.NewMemoryKeyring(),
		Supervisor: testSupervisor,
	}
	if tweak != nil {
		tweak(&opts)
	}
	svc, err := backend.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, svc: svc, provider: p, frames: map[string][]turn.Frame{}, ended: map[string]chan struct{}{}}
	// Every frame the window would see must match its type in backend/contract (the
	// generated TypeScript): checked when the test ends (registered first, runs last).
	var contractErrs []string
	t.Cleanup(func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for _, e := range contractErrs {
			t.Errorf("contract: %s", e)
		}
	})
	svc.Bus.Subscribe(func(ev bus.Event) {
		f, ok := ev.Payload.(turn.Frame)
		if !ok {
			// Window events carry times in epoch milliseconds too.
			b, _ := json.Marshal(ev.Payload)
			if err := checkEpochMillis(ev.Name, b); err != nil {
				h.mu.Lock()
				if len(contractErrs) < 20 {
					contractErrs = append(contractErrs, err.Error())
				}
				h.mu.Unlock()
			}
			return
		}
		err := contract.CheckFrame(f.Event, f.Data)
		if err == nil {
			err = checkEpochMillis(f.Event, f.Data)
		}
		h.mu.Lock()
		if err != nil && len(contractErrs) < 20 {
			contractErrs = append(contractErrs, err.Error())
		}
		h.frames[f.StreamID] = append(h.frames[f.StreamID], f)
		if f.Event == protocol.EvStreamEnd {
			h.endedCh(f.StreamID)
			close(h.ended[f.StreamID])
		}
		h.mu.Unlock()
	})
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
		defer cancel()
		if err := svc.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if _, err := svc.SaveSettings(context.Background(), backend.SettingsInput{
		ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model"}); err != nil {
		t.Fatal(err)
	}
	return h
}

// waitTitle waits until the session's title is want, and returns it.
func (h *harness) waitTitle(session, want string) store.Session {
	h.t.Helper()
	var sess store.Session
	var err error
	if !testwait.Until(func() bool {
		sess, err = h.svc.Store.GetSession(context.Background(), session)
		return err == nil && sess.Title == want
	}) {
		h.t.Fatalf("title %q, want %q (err %v)", sess.Title, want, err)
	}
	return sess
}

// checkEpochMillis fails when a time in data (what reaches the window as the frame or
// event name) is not in epoch milliseconds: a key ending in "_at" or named "until"
// (every time on the wire, docs/protocol.md) whose non-zero value is not between
// 2001-09-09 (1e12 ms) and 5138 (1e14 ms), as a time in seconds would be.
func checkEpochMillis(name string, data []byte) error {
	var v any
	if len(data) == 0 || json.Unmarshal(data, &v) != nil {
		return nil
	}
	var bad []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if n, ok := e.(float64); ok && n != 0 && (strings.HasSuffix(k, "_at") || k == "until") && (n < 1e12 || n > 1e14) {
					bad = append(bad, fmt.Sprintf("%s.%s = %v", path, k, n))
				}
				walk(path+"."+k, e)
			}
		case []any:
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk(name, v)
	if len(bad) > 0 {
		return fmt.Errorf("times not in epoch milliseconds: %s", strings.Join(bad, ", "))
	}
	return nil
}

func (h *harness) endedCh(stream string) chan struct{} {
	if h.ended[stream] == nil {
		h.ended[stream] = make(chan struct{})
	}
	return h.ended[stream]
}

// waitEnd waits for stream_end and returns the stream's frames as the window got them.
func (h *harness) waitEnd(stream string) []turn.Frame {
	h.t.Helper()
	h.mu.Lock()
	ch := h.endedCh(stream)
	h.mu.Unlock()
	if !waitClosed(ch) {
		h.t.Fatalf("stream %s did not end within %v; frames so far: %s", stream, testwait.Timeout, h.describe(stream))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]turn.Frame(nil), h.frames[stream]...)
}

// waitClosed waits for ch to be closed, at most testwait.Timeout (false then), for a
// caller that reports the failure itself (with the frames so far).
func waitClosed(ch <-chan struct{}) bool {
	timer := time.NewTimer(testwait.Timeout)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

func (h *harness) waitEvent(stream, event string) {
	h.t.Helper()
	if !testwait.Until(func() bool { return hasEvent(h.snapshot(stream), event) }) {
		h.t.Fatalf("no %s frame on %s: %s", event, stream, h.describe(stream))
	}
}

// waitText waits until the stream's token text so far is want.
func (h *harness) waitText(stream, want string) {
	h.t.Helper()
	if !testwait.Until(func() bool { return textOf(h.snapshot(stream), protocol.EvToken) == want }) {
		h.t.Fatalf("stream %s never showed %q: %s", stream, want, h.describe(stream))
	}
}

// describe lists the stream's frames so far (a copy taken under the lock: the bus
// subscriber appends to them meanwhile).
func (h *harness) describe(stream string) string {
	var b strings.Builder
	for _, f := range h.snapshot(stream) {
		b.WriteString(f.Event + " " + string(f.Data) + "\n")
	}
	return b.String()
}

func (h *harness) newSession() string {
	h.t.Helper()
	s, err := h.svc.NewSession(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	return s.ID
}

func (h *harness) start(session, text string) string {
	h.t.Helper()
	st, err := h.svc.StartTurn(context.Background(), session, text)
	if err != nil {
		h.t.Fatalf("StartTurn: %v", err)
	}
	return st.StreamID
}

func (h *harness) messages(session string) []store.Message {
	h.t.Helper()
	v, err := h.svc.GetSession(context.Background(), session)
	if err != nil {
		h.t.Fatal(err)
	}
	return v.Messages
}

// checkFrames asserts the stream's frames are complete and in order: seq 1..n, a
// user_message first, stream_end last with the terminal frame before it, and the
// journal holding exactly what the window got.
func (h *harness) checkFrames(stream string, frames []turn.Frame, terminal string) {
	h.t.Helper()
	for i, f := range frames {
		if f.Seq != int64(i+1) {
			h.t.Fatalf("frame %d has seq %d:\n%s", i, f.Seq, h.describe(stream))
		}
	}
	if frames[0].Event != protocol.EvUserMessage || frames[len(frames)-1].Event != protocol.EvStreamEnd {
		h.t.Fatalf("frames not framed by user_message/stream_end:\n%s", h.describe(stream))
	}
	found := ""
	for _, f := range frames {
		switch f.Event {
		case protocol.EvDone, protocol.EvAppError, protocol.EvCancel:
			if found != "" {
				h.t.Fatalf("two terminal frames:\n%s", h.describe(stream))
			}
			found = f.Event
		}
	}
	if found != terminal {
		h.t.Fatalf("terminal frame %q, want %q:\n%s", found, terminal, h.describe(stream))
	}
	journal, err := h.svc.StreamSince(context.Background(), stream, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(journal) != len(frames) {
		h.t.Fatalf("journal has %d frames, window got %d", len(journal), len(frames))
	}
	for i := range frames {
		a, b := frames[i], journal[i]
		if a.Seq != b.Seq || a.Event != b.Event || !jsonEqual(a.Data, b.Data) || a.SessionID != b.SessionID {
			h.t.Fatalf("journal frame %d differs: live %s %s, journal %s %s", i, a.Event, a.Data, b.Event, b.Data)
		}
	}
	tail, _ := h.svc.StreamSince(context.Background(), stream, int64(len(frames)-2))
	if len(tail) != 2 || tail[0].Seq != int64(len(frames)-1) {
		h.t.Fatalf("StreamSince(n-2) = %d frames", len(tail))
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// release returns a gate for a scripted chunk and the function that opens it (once;
// deferred, so a failed subtest never leaves the provider's handler waiting).
func release() (chan struct{}, func()) {
	gate := make(chan struct{})
	var once sync.Once
	return gate, func() { once.Do(func() { close(gate) }) }
}

func hasEvent(frames []turn.Frame, event string) bool {
	for _, f := range frames {
		if f.Event == event {
			return true
		}
	}
	return false
}

func textOf(frames []turn.Frame, event string) string {
	var b strings.Builder
	for _, f := range frames {
		if f.Event == event {
			var td protocol.TextData
			_ = json.Unmarshal(f.Data, &td)
			b.WriteString(td.Text)
		}
	}
	return b.String()
}

func dataOf(t *testing.T, frames []turn.Frame, event string) map[string]any {
	t.Helper()
	for _, f := range frames {
		if f.Event == event {
			var m map[string]any
			if err := json.Unmarshal(f.Data, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no %s frame", event)
	return nil
}

func lastDataOf(t *testing.T, frames []turn.Frame, event string) map[string]any {
	t.Helper()
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i].Event == event {
			var m map[string]any
			if err := json.Unmarshal(frames[i].Data, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}
	}
	t.Fatalf("no %s frame", event)
	return nil
}

func TestTwoTurnConversationPersistsAndSendsHistory(t *testing.T) {
	h := newHarness(t, "")
	sid := h.newSession()
	h.provider.Enqueue(providertest.Turn{
		Chunks: []providertest.Chunk{{Reasoning: "thinking "}, {Reasoning: "hard"}, {Text: "Hel"}, {Text: "lo "}, {Text: "wörld"}},
		Usage:  &providertest.Usage{PromptTokens: 12, CompletionTokens: 3},
	})
	h.provider.EnqueueAux(providertest.TextTurn("\"A friendly greeting.\""))
	s1 := h.start(sid, "hi there")
	f1 := h.waitEnd(s1)
	h.checkFrames(s1, f1, protocol.EvDone)
	if got := textOf(f1, protocol.EvToken); got != "Hello wörld" {
		t.Fatalf("streamed text %q", got)
	}
	if got := textOf(f1, protocol.EvReasoning); got != "thinking hard" {
		t.Fatalf("streamed reasoning %q", got)
	}
	done := dataOf(t, f1, protocol.EvDone)
	if u := done["usage"].(map[string]any); u["output_tokens"].(float64) != 3 || u["input_tokens"].(float64) != 12 {
		t.Fatalf("done usage = %v", u)
	}

	h.provider.Enqueue(providertest.TextTurn("Second ", "answer"))
	s2 := h.start(sid, "and again")
	f2 := h.waitEnd(s2)
	h.checkFrames(s2, f2, protocol.EvDone)

	reqs := streamRequests(h.provider.Requests())
	if len(reqs) != 2 {
		t.Fatalf("%d streaming provider requests", len(reqs))
	}
	var roles []string
	for _, m := range reqs[1].Messages {
		roles = append(roles, m.Role+":"+m.Content)
	}
	want := "user:hi there|assistant:Hello wörld|user:and again"
	if got := strings.Join(roles, "|"); !strings.HasSuffix(got, want) {
		t.Fatalf("turn 2 sent %q, want it to end with %q", got, want)
	}
	if !reqs[0].Stream || reqs[0].StreamOptions == nil || !reqs[0].StreamOptions.IncludeUsage || reqs[0].Model != "scripted-model" {
		t.Fatalf("request 1 = %+v", reqs[0])
	}

	msgs := h.messages(sid)
	var got []string
	for _, m := range msgs {
		got = append(got, m.Role+":"+m.Kind+":"+m.Content)
	}
	if strings.Join(got, "|") != "user::hi there|assistant::Hello wörld|user::and again|assistant::Second answer" {
		t.Fatalf("transcript = %q", got)
	}
	if msgs[1].Reasoning != "thinking hard" {
		t.Fatalf("reasoning not saved: %q", msgs[1].Reasoning)
	}
	// The model's title comes after stream_end (sessions_changed announces it).
	sess := h.waitTitle(sid, "A friendly greeting")
	if d := lastDataOf(t, f1, protocol.EvTitle); d["title"] != "hi there" {
		t.Fatalf("title frame in the stream = %v, want the provisional title", d)
	}
	if sess.Title != "A friendly greeting" || sess.ActiveStreamID != "" || sess.Usage.OutputTokens < 3 {
		t.Fatalf("session after two turns = %+v", sess)
	}
}

func TestBusySessionRefusesSecondTurn(t *testing.T) {
	h := newHarness(t, "")
	sid := h.newSession()
	h.provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "slow"}}, HangAfter: true})
	s1 := h.start(sid, "first")
	_, err := h.svc.StartTurn(context.Background(), sid, "second")
	var busy *store.BusyError
	if !errors.As(err, &busy) || busy.StreamID != s1 || !strings.Contains(err.Error(), s1) {
		t.Fatalf("second StartTurn = %v, want BusyError naming %s", err, s1)
	}
	_ = h.svc.Cancel(s1)
	h.waitEnd(s1)
	for _, m := range h.messages(sid) {
		if m.Content == "second" {
			t.Fatal("refused message was saved")
		}
	}
}

func TestStopMidStreamKeepsPartialText(t *testing.T) {
	h := newHarness(t, "")
	sid := h.newSession()
	h.provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "partial "}, {Text: "answer"}}, HangAfter: true})
	s := h.start(sid, "tell me")
	h.waitEvent(s, protocol.EvToken)
	h.waitText(s, "partial answer")
	began := time.Now()
	if err := h.svc.Cancel(s); err != nil {
		t.Fatal(err)
	}
	frames := h.waitEnd(s)
	t.Logf("stop took %s", time.Since(began))
	h.checkFrames(s, frames, protocol.EvCancel)
	if d := dataOf(t, frames, protocol.EvCancel); d["partial"] != true {
		t.Fatalf("cancel frame = %v", d)
	}
	msgs := h.messages(sid)
	if len(msgs) != 3 || msgs[1].Content != "partial answer" || msgs[2].Kind != store.KindCancelled {
		t.Fatalf("transcript after stop = %+v", msgs)
	}
	// Stop twice and after the end are no-ops; the session takes a new turn.
	if err := h.svc.Cancel(s); err != nil {
		t.Fatal(err)
	}
	h.provider.Enqueue(providertest.TextTurn("fresh"))
	s2 := h.start(sid, "again")
	h.checkFrames(s2, h.waitEnd(s2), protocol.EvDone)
	// The next turn's history carries the partial answer, not the marker.
	reqs := streamRequests(h.provider.Requests())
	last := reqs[len(reqs)-1].Messages
	if last[len(last)-2].Content != "partial answer" {
		t.Fatalf("history after a stop = %+v", last)
	}
}

func (h *harness) snapshot(stream string) []turn.Frame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]turn.Frame(nil), h.frames[stream]...)
}

func TestProviderErrorsBecomeAppErrors(t *testing.T) {
	cases := []struct {
		name     string
		turn     *providertest.Turn
		baseURL  string
		wantType string
	}{
		{name: "401", turn: ptr(providertest.ErrorTurn(401, "Incorrect API key provided")), wantType: turn.ErrTypeAuthMismatch},
		{name: "404 model", turn: ptr(providertest.ErrorTurn(404, "The model `nope` does not exist")), wantType: turn.ErrTypeModelNotFound},
		// A wait longer than the runtime's cap (60 s) is not retried: rate_limited at once.
		{name: "429", turn: &providertest.Turn{Status: 429, RetryAfter: "120"}, wantType: turn.ErrTypeRateLimit},
		// A plain 5xx is retried by the runtime; an error inside the stream after text is not.
		{name: "500 mid-stream", turn: &providertest.Turn{Chunks: []providertest.Chunk{{Text: "par"}, providertest.ErrorChunk(500, "upstream exploded")}}, wantType: turn.ErrTypeError},
		{name: "refused loopback", baseURL: deadLoopbackURL(t), wantType: turn.ErrTypeLocalRuntimeUnavailable},
	}
	h := newHarness(t, "")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := h.provider.BaseURL()
			if c.baseURL != "" {
				base = c.baseURL
			}
			if _, err := h.svc.SaveSettings(context.Background(), backend.SettingsInput{ProviderName: "scripted", BaseURL: base, Model: "scripted-model"}); err != nil {
				t.Fatal(err)
			}
			if c.turn != nil {
				h.provider.Enqueue(*c.turn)
			}
			sid := h.newSession()
			s := h.start(sid, "hello")
			frames := h.waitEnd(s)
			h.checkFrames(s, frames, protocol.EvAppError)
			d := dataOf(t, frames, protocol.EvAppError)
			if d["type"] != c.wantType || d["hint"] == "" || d["label"] == "" {
				t.Fatalf("apperror = %v, want type %s", d, c.wantType)
			}
			msgs := h.messages(sid)
			last := msgs[len(msgs)-1]
			if last.Kind != store.KindError || msgs[0].Role != "user" {
				t.Fatalf("transcript = %+v", msgs)
			}
			// A reopened chat shows what the live one did: the saved row keeps the hint.
			if e := last.Error; e == nil || e.Type != d["type"] || e.Label != d["label"] || e.Message != d["message"] || e.Hint != d["hint"] {
				t.Fatalf("saved error row = %+v, the apperror was %v", e, d)
			}
			if c.name == "500 mid-stream" && (len(msgs) != 3 || msgs[1].Content != "par" || !strings.Contains(d["message"].(string), "upstream exploded")) {
				t.Fatalf("mid-stream error lost the partial text or the provider's message: %+v %v", msgs, d)
			}
			if c.name == "429" && !strings.Contains(d["hint"].(string), "120 s") {
				t.Fatalf("429 hint does not carry Retry-After: %v", d["hint"])
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// streamRequests drops the non-streaming requests (title generation).
func streamRequests(all []providertest.Request) []providertest.Request {
	var out []providertest.Request
	for _, r := range all {
		if r.Stream {
			out = append(out, r)
		}
	}
	return out
}

func deadLoopbackURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

func TestSidecarKilledMidTurnThenRecovers(t *testing.T) {
	h := newHarness(t, "")
	sid := h.newSession()
	h.provider.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "half an "}, {Text: "answer"}}, HangAfter: true})
	s := h.start(sid, "go")
	h.waitText(s, "half an answer")
	pid := h.svc.Sidecar.Status().PID
	if err := killProcess(pid); err != nil {
		t.Fatal(err)
	}
	frames := h.waitEnd(s)
	h.checkFrames(s, frames, protocol.EvAppError)
	if d := dataOf(t, frames, protocol.EvAppError); d["type"] != turn.ErrTypeSidecarUnavailable {
		t.Fatalf("apperror = %v", d)
	}
	msgs := h.messages(sid)
	if len(msgs) != 3 || msgs[1].Content != "half an answer" || msgs[2].Kind != store.KindError {
		t.Fatalf("transcript after the crash = %+v", msgs)
	}
	// The supervisor restarts the sidecar; the next turn works (StartTurn waits for it).
	h.provider.Enqueue(providertest.TextTurn("back ", "again"))
	s2 := h.start(sid, "still there?")
	f2 := h.waitEnd(s2)
	h.checkFrames(s2, f2, protocol.EvDone)
	if got := textOf(f2, protocol.EvToken); got != "back again" {
		t.Fatalf("after restart: %q", got)
	}
	if st := h.svc.Sidecar.Status(); st.PID == pid || st.Restarts < 1 {
		t.Fatalf("sidecar status after restart = %+v", st)
	}
}

func TestMalformedSidecarOutputDoesNotCrashHost(t *testing.T) {
	h := newHarness(t, "garbage")
	sid := h.newSession()
	h.provider.Enqueue(providertest.TextTurn("still ", "fine"))
	s := h.start(sid, "hi")
	frames := h.waitEnd(s)
	h.checkFrames(s, frames, protocol.EvDone)
	if got := textOf(frames, protocol.EvToken); got != "still fine" {
		t.Fatalf("text %q", got)
	}
	for _, f := range frames {
		if f.Event == "bogus_event" {
			t.Fatal("an unknown sidecar event reached the window")
		}
	}
}

func TestInterruptedStreamIsSettledAtNextStart(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	// A previous process admitted a turn, journaled some text, and died.
	st, err := store.Open(ctx, core.PathsFor(dir).DBPath)
	if err != nil {
		t.Fatal(err)
	}
	sess, _ := st.CreateSession(ctx, store.NewSession{Title: "t"})
	if _, err := st.AdmitTurn(ctx, sess.ID, "stream-1", store.Message{Role: "user", Content: "question"}); err != nil {
		t.Fatal(err)
	}
	for i, text := range []string{"", "part one, ", "part two"} {
		ev, data := protocol.EvToken, `{"text":"`+text+`"}`
		if i == 0 {
			ev, data = protocol.EvUserMessage, `{}`
		}
		if err := st.AppendJournal(ctx, store.JournalFrame{StreamID: "stream-1", SessionID: sess.ID, Seq: int64(i + 1), Event: ev, Data: json.RawMessage(data)}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()

	exe, _ := os.Executable()
	svc, err := backend.Open(ctx, backend.Options{DataDir: dir, SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(ctx)
	if err := svc.Start(ctx); err != nil {
		t.Fatal(err)
	}
	v, err := svc.GetSession(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if v.Session.ActiveStreamID != "" || len(v.Messages) != 3 || v.Messages[1].Content != "part one, part two" || v.Messages[2].Kind != store.KindInterrupted {
		t.Fatalf("after restart: %+v", v)
	}
	frames, _ := svc.StreamSince(ctx, "stream-1", 3)
	if len(frames) != 2 || frames[0].Event != protocol.EvAppError || frames[1].Event != protocol.EvStreamEnd {
		t.Fatalf("journal tail = %+v", frames)
	}
}

// TestNoOrphanSidecarAfterHostIsKilled runs a host process (this test binary as a
// small app) with its real sidecar, kills the host with SIGKILL, and checks the sidecar
// goes too (parent-death signal, and EOF on its stdin).
func TestNoOrphanSidecarAfterHostIsKilled(t *testing.T) {
	exe, _ := os.Executable()
	cmd := exec.Command(exe, "-test.run=^TestHostProcess$")
	cmd.Env = append(os.Environ(), "TALARIA_TEST_HOST="+t.TempDir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	if _, err := fmt.Fscanf(bufio.NewReader(out), "sidecar-pid %d\n", &pid); err != nil {
		cmd.Process.Kill()
		t.Fatalf("host did not report its sidecar: %v", err)
	}
	if !processAlive(pid) {
		t.Fatalf("sidecar %d not running", pid)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	testwait.For(t, fmt.Sprintf("sidecar %d to end after its host was killed", pid), func() bool { return !processAlive(pid) })
}

// TestHostProcess is the host of TestNoOrphanSidecarAfterHostIsKilled; it does nothing
// in a normal run.
func TestHostProcess(t *testing.T) {
	dir := os.Getenv("TALARIA_TEST_HOST")
	if dir == "" {
		t.Skip("only runs as the host of TestNoOrphanSidecarAfterHostIsKilled")
	}
	exe, _ := os.Executable()
	svc, err := backend.Open(context.Background(), backend.Options{DataDir: dir, SidecarCommand: exe,
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real", "TALARIA_TEST_HOST="}, Keyring: vault.NewMemoryKeyring()})
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, "the sidecar to get ready", func() bool { return svc.Sidecar.Status().State == supervisor.StateReady })
	fmt.Printf("sidecar-pid %d\n", svc.Sidecar.Status().PID)
	// The parent kills this process once it read the line; it never decides anything
	// by this wait, which only ends a host the parent forgot.
	time.Sleep(testwait.Timeout)
}

// A second process (or Service) on the same data folder is refused before it touches
// the database, so it cannot settle the first one's live turns; the lock goes with Close.
func TestDataFolderIsLockedWhileInUse(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	exe, _ := os.Executable()
	opts := backend.Options{DataDir: dir, SidecarCommand: exe, SidecarEnv: []string{"TALARIA_TEST_SIDECAR=real"}, Keyring: vault.NewMemoryKeyring()}
	first, err := backend.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := backend.Open(ctx, opts); !errors.Is(err, backend.ErrDataDirInUse) {
		t.Fatalf("second Open = %v, want ErrDataDirInUse", err)
	}
	if err := first.Close(ctx); err != nil {
		t.Fatal(err)
	}
	again, err := backend.Open(ctx, opts)
	if err != nil {
		t.Fatalf("Open after Close = %v", err)
	}
	again.Close(ctx)
}

// The harness's guard on times: a time in seconds anywhere in a frame is caught.
func TestCheckEpochMillisCatchesSeconds(t *testing.T) {
	if err := checkEpochMillis("approval", []byte(`{"expires_at": 1780000000000, "until": 0, "x": [{"created_at": 1780000000000}]}`)); err != nil {
		t.Errorf("milliseconds refused: %v", err)
	}
	if err := checkEpochMillis("activity", []byte(`{"items": [{"started_at": 1780000000}]}`)); err == nil || !strings.Contains(err.Error(), "activity.items[0].started_at") {
		t.Errorf("seconds passed: %v", err)
	}
}
