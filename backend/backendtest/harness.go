// Package backendtest runs the real backend for the backend's end-to-end tests: a
// Harness opens backend.Service on a fresh data folder with the real sidecar (the test
// binary itself, started again by the supervisor: Main) and a scripted provider, keeps
// every frame by stream, and checks each against the window's contract. Only the model
// is scripted (sidecar/providertest). Tests of every area (backend/chats, turns,
// approvals, agents, mcp, ...) use it; nothing outside tests may import it.
package backendtest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/backend"
	"talaria/backend/bus"
	"talaria/backend/contract"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// Main is the TestMain of a package whose tests use a Harness: the test binary doubles
// as the sidecar. The supervisor starts it again with TALARIA_TEST_SIDECAR set, and it
// runs the real sidecar.Main over real stdio ("garbage": with a malformed line before
// each line it writes; "lose-first-answer": losing the first answer to each approval
// or clarify, and the first YOLO on and off).
func Main(m *testing.M) {
	switch os.Getenv("TALARIA_TEST_SIDECAR") {
	case "":
		if len(os.Args) > 1 && os.Args[1] == "sidecar" {
			// Run as `talaria sidecar ...` without the test's environment (a copy on
			// a remote host started by Test): the sidecar, never the tests.
			os.Exit(sidecar.Main(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		}
		os.Exit(m.Run())
	case "garbage":
		os.Exit(sidecar.Main(nil, os.Stdin, &garbageWriter{w: os.Stdout}, os.Stderr))
	case "lose-first-answer":
		os.Exit(sidecar.Main(nil, &answerLoser{r: bufio.NewReader(os.Stdin)}, os.Stdout, os.Stderr))
	default:
		heapProfileOnSignal()
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

// SupervisorConfig restarts a dead sidecar fast, and gives the supervisor's clocks that
// a stalled machine can outlast the shared deadline: a ping answered late does not make
// a healthy sidecar look hung (it would be killed mid-turn), and a call waits for a slow
// (re)start instead of failing. No test here is about those two clocks (the supervisor's
// own tests are).
func SupervisorConfig(c *supervisor.Config) {
	c.MinBackoff, c.MaxBackoff = 20*time.Millisecond, 200*time.Millisecond
	c.PingTimeout, c.ReadyWait = testwait.Timeout, testwait.Timeout
}

// Harness is one backend opened on a fresh data folder with the real sidecar (this
// test binary, see Main) and a scripted provider (Provider, set as the provider of
// Settings), started, closed when the test ends, and every frame it published kept by
// stream. Every frame and window event is checked against the window's contract
// (backend/contract) and for times in epoch milliseconds when the test ends.
type Harness struct {
	T        testing.TB
	Svc      *backend.Service
	Provider *providertest.Server

	mu     sync.Mutex
	frames map[string][]turn.Frame
	ended  map[string]chan struct{}
}

// New opens, starts and returns a Harness. sidecarMode is how the sidecar (this test
// binary, see Main) runs: "" or "real" as the app's, "garbage" with a malformed line
// before each line it writes, "lose-first-answer" losing the first answer to each card.
func New(t testing.TB, sidecarMode string) *Harness { return NewWith(t, sidecarMode, nil) }

// NewWith is New with tweak changing the backend's options before it opens.
func NewWith(t testing.TB, sidecarMode string, tweak func(*backend.Options)) *Harness {
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
		// A turn waits for its MCP servers' start as long as a test waits for anything:
		// a loaded machine's slow npx start must not leave a server out of a turn
		// (TestMCPSilentServerDoesNotHoldTurns sets its own short wait).
		SidecarEnv: []string{"TALARIA_TEST_SIDECAR=" + sidecarMode, "TALARIA_MCP_TURN_WAIT=" + testwait.Timeout.String()},
		Keyring:    vault.NewMemoryKeyring(),
		Supervisor: SupervisorConfig,
	}
	if tweak != nil {
		tweak(&opts)
	}
	svc, err := backend.Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &Harness{T: t, Svc: svc, Provider: p, frames: map[string][]turn.Frame{}, ended: map[string]chan struct{}{}}
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
			if err := CheckEpochMillis(ev.Name, b); err != nil {
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
			err = CheckEpochMillis(f.Event, f.Data)
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
	if _, err := svc.Settings().SaveSettings(context.Background(), backend.SettingsInput{
		ProviderName: "scripted", BaseURL: p.BaseURL(), Model: "scripted-model"}); err != nil {
		t.Fatal(err)
	}
	return h
}

// WaitTitle waits until the session's title is want, and returns it.
func (h *Harness) WaitTitle(session, want string) store.Session {
	h.T.Helper()
	var sess store.Session
	var err error
	if !testwait.Until(func() bool {
		sess, err = h.Svc.Store.GetSession(context.Background(), session)
		return err == nil && sess.Title == want
	}) {
		h.T.Fatalf("title %q, want %q (err %v)", sess.Title, want, err)
	}
	return sess
}

// CheckEpochMillis fails when a time in data (what reaches the window as the frame or
// event name) is not in epoch milliseconds: a key ending in "_at" or named "until"
// (every time on the wire, docs/protocol.md) whose non-zero value is not between
// 2001-09-09 (1e12 ms) and 5138 (1e14 ms), as a time in seconds would be.
func CheckEpochMillis(name string, data []byte) error {
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

// EndedCh returns the channel closed when stream's stream_end frame arrives.
func (h *Harness) EndedCh(stream string) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.endedCh(stream)
}

func (h *Harness) endedCh(stream string) chan struct{} {
	if h.ended[stream] == nil {
		h.ended[stream] = make(chan struct{})
	}
	return h.ended[stream]
}

// WaitEnd waits for stream_end and returns the stream's frames as the window got them.
func (h *Harness) WaitEnd(stream string) []turn.Frame {
	h.T.Helper()
	h.mu.Lock()
	ch := h.endedCh(stream)
	h.mu.Unlock()
	if !WaitClosed(ch) {
		h.T.Fatalf("stream %s did not end within %v; frames so far: %s", stream, testwait.Timeout, h.Describe(stream))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]turn.Frame(nil), h.frames[stream]...)
}

// WaitClosed waits for ch to be closed, at most testwait.Timeout (false then), for a
// caller that reports the failure itself (with the frames so far).
func WaitClosed(ch <-chan struct{}) bool {
	timer := time.NewTimer(testwait.Timeout)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

// WaitEvent waits until stream has a frame of event.
func (h *Harness) WaitEvent(stream, event string) {
	h.T.Helper()
	if !testwait.Until(func() bool { return HasEvent(h.Snapshot(stream), event) }) {
		h.T.Fatalf("no %s frame on %s: %s", event, stream, h.Describe(stream))
	}
}

// WaitText waits until the stream's token text so far is want.
func (h *Harness) WaitText(stream, want string) {
	h.T.Helper()
	if !testwait.Until(func() bool { return TextOf(h.Snapshot(stream), protocol.EvToken) == want }) {
		h.T.Fatalf("stream %s never showed %q: %s", stream, want, h.Describe(stream))
	}
}

// Describe lists the stream's frames so far (a copy taken under the lock: the bus
// subscriber appends to them meanwhile).
func (h *Harness) Describe(stream string) string {
	var b strings.Builder
	for _, f := range h.Snapshot(stream) {
		b.WriteString(f.Event + " " + string(f.Data) + "\n")
	}
	return b.String()
}

// NewSession creates a session and returns its id.
func (h *Harness) NewSession() string {
	h.T.Helper()
	s, err := h.Svc.Chats().NewSession(context.Background())
	if err != nil {
		h.T.Fatal(err)
	}
	return s.ID
}

// Start starts a turn of text in session and returns its stream id.
func (h *Harness) Start(session, text string) string {
	h.T.Helper()
	st, err := h.Svc.Turns().StartTurn(context.Background(), session, text)
	if err != nil {
		h.T.Fatalf("StartTurn: %v", err)
	}
	return st.StreamID
}

// Messages returns the session's saved rows.
func (h *Harness) Messages(session string) []store.Message {
	h.T.Helper()
	v, err := h.Svc.Chats().GetSession(context.Background(), session)
	if err != nil {
		h.T.Fatal(err)
	}
	return v.Messages
}

// CheckFrames asserts the stream's frames are complete and in order: seq 1..n, a
// user_message first, stream_end last with the terminal frame before it, and the
// journal holding exactly what the window got.
func (h *Harness) CheckFrames(stream string, frames []turn.Frame, terminal string) {
	h.T.Helper()
	for i, f := range frames {
		if f.Seq != int64(i+1) {
			h.T.Fatalf("frame %d has seq %d:\n%s", i, f.Seq, h.Describe(stream))
		}
	}
	if frames[0].Event != protocol.EvUserMessage || frames[len(frames)-1].Event != protocol.EvStreamEnd {
		h.T.Fatalf("frames not framed by user_message/stream_end:\n%s", h.Describe(stream))
	}
	found := ""
	for _, f := range frames {
		switch f.Event {
		case protocol.EvDone, protocol.EvAppError, protocol.EvCancel:
			if found != "" {
				h.T.Fatalf("two terminal frames:\n%s", h.Describe(stream))
			}
			found = f.Event
		}
	}
	if found != terminal {
		h.T.Fatalf("terminal frame %q, want %q:\n%s", found, terminal, h.Describe(stream))
	}
	journal, err := h.Svc.Turns().StreamSince(context.Background(), stream, 0)
	if err != nil {
		h.T.Fatal(err)
	}
	if len(journal) != len(frames) {
		h.T.Fatalf("journal has %d frames, window got %d", len(journal), len(frames))
	}
	for i := range frames {
		a, b := frames[i], journal[i]
		if a.Seq != b.Seq || a.Event != b.Event || !JSONEqual(a.Data, b.Data) || a.SessionID != b.SessionID {
			h.T.Fatalf("journal frame %d differs: live %s %s, journal %s %s", i, a.Event, a.Data, b.Event, b.Data)
		}
	}
	tail, _ := h.Svc.Turns().StreamSince(context.Background(), stream, int64(len(frames)-2))
	if len(tail) != 2 || tail[0].Seq != int64(len(frames)-1) {
		h.T.Fatalf("StreamSince(n-2) = %d frames", len(tail))
	}
}

// JSONEqual reports whether a and b hold the same JSON value.
func JSONEqual(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

// Release returns a gate for a scripted chunk and the function that opens it (once;
// deferred, so a failed subtest never leaves the provider's handler waiting).
func Release() (chan struct{}, func()) {
	gate := make(chan struct{})
	var once sync.Once
	return gate, func() { once.Do(func() { close(gate) }) }
}

// HasEvent reports whether frames hold a frame of event.
func HasEvent(frames []turn.Frame, event string) bool {
	for _, f := range frames {
		if f.Event == event {
			return true
		}
	}
	return false
}

// TextOf joins the text of frames' frames of event (token, reasoning...).
func TextOf(frames []turn.Frame, event string) string {
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

// DataOf decodes the data of the first frame of event (the test fails without one).
func DataOf(t *testing.T, frames []turn.Frame, event string) map[string]any {
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

// LastDataOf decodes the data of the last frame of event (the test fails without one).
func LastDataOf(t *testing.T, frames []turn.Frame, event string) map[string]any {
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

// Snapshot returns the frames of stream so far.
func (h *Harness) Snapshot(stream string) []turn.Frame {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]turn.Frame(nil), h.frames[stream]...)
}

// AllFrames returns a copy of every stream's frames so far, by stream id.
func (h *Harness) AllFrames() map[string][]turn.Frame {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]turn.Frame, len(h.frames))
	for id, fs := range h.frames {
		out[id] = append([]turn.Frame(nil), fs...)
	}
	return out
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// StreamRequests drops the non-streaming requests (title generation).
func StreamRequests(all []providertest.Request) []providertest.Request {
	var out []providertest.Request
	for _, r := range all {
		if r.Stream {
			out = append(out, r)
		}
	}
	return out
}

// DeadLoopbackURL is a /v1 base URL on 127.0.0.1 where nothing listens.
func DeadLoopbackURL(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

// Attach is a Harness over svc, opened (not started) by the test itself, e.g. on a data
// folder it reopens: it keeps every frame by stream, without the contract checks and
// without closing svc at the end.
func Attach(t testing.TB, svc *backend.Service, p *providertest.Server) *Harness {
	h := &Harness{T: t, Svc: svc, Provider: p, frames: map[string][]turn.Frame{}, ended: map[string]chan struct{}{}}
	svc.Bus.Subscribe(func(ev bus.Event) {
		f, ok := ev.Payload.(turn.Frame)
		if !ok {
			return
		}
		h.mu.Lock()
		h.frames[f.StreamID] = append(h.frames[f.StreamID], f)
		if f.Event == protocol.EvStreamEnd {
			close(h.endedCh(f.StreamID))
		}
		h.mu.Unlock()
	})
	return h
}

// Close closes svc within testwait.Timeout; the test fails when it returns an error.
func Close(t testing.TB, svc *backend.Service) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.Timeout)
	defer cancel()
	if err := svc.Close(ctx); err != nil {
		t.Fatalf("close: %v", err)
	}
}

// ToolTurn scripts a model turn that calls one tool.
func ToolTurn(id, name string, args any) providertest.Turn {
	b, _ := json.Marshal(args)
	return providertest.Turn{Chunks: []providertest.Chunk{
		{ToolCalls: []providertest.ToolCallDelta{{Index: 0, ID: id, Name: name}}},
		{ToolCalls: []providertest.ToolCallDelta{{Index: 0, Arguments: string(b)}}},
	}}
}

// WithWorkspace points the tools of new sessions at a fresh folder (Settings'
// workspace) and returns it.
func (h *Harness) WithWorkspace() string {
	h.T.Helper()
	ws := h.T.TempDir()
	if _, err := h.Svc.Settings().SaveSettings(context.Background(), backend.SettingsInput{ProviderName: "scripted",
		BaseURL: h.Provider.BaseURL(), Model: "scripted-model", Workspace: ws}); err != nil {
		h.T.Fatal(err)
	}
	return ws
}

// ToolMessages returns the tool messages the runtime sent the model in request i.
func ToolMessages(reqs []providertest.Request, i int) []string {
	var out []string
	for _, m := range reqs[i].Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

// FramesOf decodes the data of every frame of event.
func FramesOf(frames []turn.Frame, event string) []map[string]any {
	var out []map[string]any
	for _, f := range frames {
		if f.Event == event {
			var m map[string]any
			_ = json.Unmarshal(f.Data, &m)
			out = append(out, m)
		}
	}
	return out
}

// UserRows returns the contents of the session's user rows, in order.
func (h *Harness) UserRows(sid string) []string {
	var out []string
	for _, m := range h.Messages(sid) {
		if m.Role == "user" {
			out = append(out, m.Content)
		}
	}
	return out
}

// Forget drops the frames kept for stream (and its ended channel), for a test of many
// turns whose memory is measured: the harness's own record must not grow with them.
func (h *Harness) Forget(stream string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.frames, stream)
	delete(h.ended, stream)
}
