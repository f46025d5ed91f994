package hermes_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/hermes"
	"talaria/sidecar/hermes/hermestest"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
	"talaria/sidecar/server"
)

// rig is one real Hermes gateway behind the real runtime and serve loop, spoken to
// over pipes with the protocol's NDJSON, with a scripted provider.
type rig struct {
	t        testing.TB
	in       hermestest.Install
	provider *providertest.Server
	home     hermestest.Home
	ws       string
	rt       *hermes.Runtime
	w        io.WriteCloser
	done     chan error
	closing  sync.Once

	mu      sync.Mutex
	nextID  int
	replies map[string]chan *protocol.Envelope
	frames  map[string][]protocol.FrameParams // by request id
	notes   []protocol.Envelope
	changed chan struct{}
	hello   protocol.HelloResult
}

func newRig(t testing.TB, in hermestest.Install, extra map[string]any) *rig {
	t.Helper()
	return newRigWith(t, in, hermestest.Config{Extra: extra})
}

// newRigWith is newRig with a whole hermestest.Config (its BaseURL is the rig's
// scripted provider).
func newRigWith(t testing.TB, in hermestest.Install, cfg hermestest.Config) *rig {
	t.Helper()
	p := providertest.Start()
	t.Cleanup(p.Close)
	cfg.BaseURL = p.BaseURL()
	home := hermestest.NewHome(t, in, cfg)
	r := &rig{t: t, in: in, provider: p, home: home, ws: t.TempDir(), replies: map[string]chan *protocol.Envelope{},
		frames: map[string][]protocol.FrameParams{}, changed: make(chan struct{}), done: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var env []string
	for _, e := range home.Env {
		if !strings.HasPrefix(e, "HERMES_HOME=") {
			env = append(env, e)
		}
	}
	// The start's bound is the tests' one deadline: a loaded machine may start Hermes
	// slowly, and a start that never ends still fails (rpc.hello's wait below).
	r.rt = hermes.New(hermes.Options{Python: in.Python, Prefix: in.Prefix, Home: home.Dir, Env: env, Dir: r.ws, Log: log,
		StartTimeout: testwait.Timeout})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	r.w = inW
	go func() {
		err := (&server.Server{Runtime: r.rt, Log: log}).Serve(context.Background(), inR, outW)
		outW.Close()
		r.done <- err
	}()
	go r.read(outR)
	t.Cleanup(func() { r.close() })
	var hello protocol.HelloResult
	if err := r.call("rpc.hello", protocol.HelloParams{Protocol: protocol.Version}, &hello); err != nil {
		t.Fatalf("rpc.hello: %v", err)
	}
	r.hello = hello
	return r
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// close ends the sidecar (stdin EOF: the server drains, the runtime closes its
// gateway) and waits for it; a test may call it before the cleanup does.
func (r *rig) close() {
	r.closing.Do(func() {
		r.w.Close()
		select {
		case <-r.done:
		case <-time.After(testwait.Timeout):
			r.t.Errorf("the sidecar did not end within %v of stdin EOF", testwait.Timeout)
		}
	})
}

func (r *rig) read(rd io.Reader) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		var env protocol.Envelope
		if err := json.Unmarshal(sc.Bytes(), &env); err != nil {
			r.t.Errorf("bad line from the sidecar: %s", sc.Text())
			continue
		}
		r.mu.Lock()
		switch {
		case env.Method == protocol.MethodFrame:
			var f protocol.FrameParams
			json.Unmarshal(env.Params, &f) //nolint:errcheck
			key := string(f.ID)
			r.frames[key] = append(r.frames[key], f)
		case env.Method != "":
			r.notes = append(r.notes, env)
		default:
			if ch := r.replies[string(env.ID)]; ch != nil {
				e := env
				ch <- &e
			}
		}
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}
}

// start sends a request and returns its id.
func (r *rig) start(method string, params any) (string, chan *protocol.Envelope) {
	r.mu.Lock()
	r.nextID++
	id := strconv.Itoa(r.nextID)
	ch := make(chan *protocol.Envelope, 1)
	r.replies[id] = ch
	r.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": r.nextID, "method": method, "params": params})
	if _, err := r.w.Write(append(b, '\n')); err != nil {
		r.t.Fatal(err)
	}
	return id, ch
}

// call sends a request and waits (testwait's deadline) for its reply.
func (r *rig) call(method string, params, out any) error {
	r.t.Helper()
	_, ch := r.start(method, params)
	env := testwait.Recv(r.t, ch, method+"'s reply")
	if env.Error != nil {
		return env.Error
	}
	if out != nil {
		return json.Unmarshal(env.Result, out)
	}
	return nil
}

// awaitFrame waits (testwait's deadline) for a frame of request id with event (and
// pred, when set).
func (r *rig) awaitFrame(id, event string, pred func(json.RawMessage) bool) json.RawMessage {
	r.t.Helper()
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	seen := 0
	for {
		r.mu.Lock()
		fs := r.frames[id]
		ch := r.changed
		r.mu.Unlock()
		for ; seen < len(fs); seen++ {
			if fs[seen].Event == event && (pred == nil || pred(fs[seen].Data)) {
				return fs[seen].Data
			}
		}
		select {
		case <-ch:
		case <-deadline.C:
			r.t.Fatalf("no %s frame within %s; frames: %s", event, testwait.Timeout, r.describe(id))
		}
	}
}

// frameOf returns the data of request id's first frame with event, which must be there
// already: after the request's reply, since every frame of a request is written before
// its reply (docs/protocol.md) and read in order.
func (r *rig) frameOf(id, event string) json.RawMessage {
	r.t.Helper()
	for _, f := range r.framesOf(id) {
		if f.Event == event {
			return f.Data
		}
	}
	r.t.Fatalf("request %s has no %s frame; frames: %s", id, event, r.describe(id))
	return nil
}

func (r *rig) framesOf(id string) []protocol.FrameParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]protocol.FrameParams(nil), r.frames[id]...)
}

func (r *rig) describe(id string) string {
	var b strings.Builder
	for _, f := range r.framesOf(id) {
		b.WriteString(f.Event + " " + string(f.Data) + "\n")
	}
	return b.String()
}

func (r *rig) chatParams(session, stream, text string) protocol.ChatStartParams {
	return protocol.ChatStartParams{SessionID: session, StreamID: stream, Workspace: r.ws, UserMessage: text}
}

// waitReply waits (testwait's deadline) for a reply on ch.
func waitReply(t testing.TB, ch chan *protocol.Envelope) *protocol.Envelope {
	t.Helper()
	return testwait.Recv(t, ch, "the reply")
}

func resultOf(t testing.TB, env *protocol.Envelope) protocol.ChatResult {
	t.Helper()
	if env.Error != nil {
		t.Fatalf("chat.start failed: %v", env.Error)
	}
	var res protocol.ChatResult
	if err := json.Unmarshal(env.Result, &res); err != nil {
		t.Fatal(err)
	}
	return res
}

func init() {
	// The gateway inherits the test's environment; keep Hermes from reading the
	// developer's own ~/.hermes by accident.
	os.Unsetenv("HERMES_HOME")
}
