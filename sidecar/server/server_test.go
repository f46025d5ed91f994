package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
)

// fakeRuntime serves a few test methods.
type fakeRuntime struct {
	mu       sync.Mutex
	release  chan struct{} // closed to let "test.stubborn" return
	lastCall *Call
	closed   bool
}

type startParams struct {
	Frames  int  `json:"frames"`
	Block   bool `json:"block"`
	Workers int  `json:"workers"` // emit from this many goroutines at once
}

func (f *fakeRuntime) Info() Info { return Info{Name: "fake", AgentVersion: "9.9"} }

func (f *fakeRuntime) Close() error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	return nil
}

func (f *fakeRuntime) Methods() map[string]Handler {
	return map[string]Handler{
		protocol.MethodChatStart: func(ctx context.Context, call *Call) (any, error) {
			var p startParams
			if err := call.Bind(&p); err != nil {
				return nil, err
			}
			f.mu.Lock()
			f.lastCall = call
			f.mu.Unlock()
			workers := max(p.Workers, 1)
			var wg sync.WaitGroup
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < p.Frames/workers; i++ {
						if err := call.Emit(protocol.EvToken, protocol.TextData{Text: fmt.Sprint(i)}); err != nil {
							panic(err)
						}
					}
				}()
			}
			wg.Wait()
			if p.Block {
				<-ctx.Done()
				return protocol.ChatResult{Status: protocol.StatusCancelled, Partial: true}, nil
			}
			return protocol.ChatResult{Status: protocol.StatusCompleted}, nil
		},
		"test.echo": func(ctx context.Context, call *Call) (any, error) {
			return call.Params, nil
		},
		"test.panic": func(ctx context.Context, call *Call) (any, error) {
			panic("kaboom")
		},
		"test.ctxerr": func(ctx context.Context, call *Call) (any, error) {
			<-ctx.Done()
			return nil, fmt.Errorf("waiting: %w", ctx.Err())
		},
		"test.fail": func(ctx context.Context, call *Call) (any, error) {
			return nil, errors.New("plain failure")
		},
		"test.stubborn": func(ctx context.Context, call *Call) (any, error) {
			<-f.release
			return "late", nil
		},
	}
}

// harness runs Serve over pipes and reads its output.
type harness struct {
	t      *testing.T
	in     *io.PipeWriter
	out    chan *protocol.Envelope
	done   chan error
	cancel context.CancelFunc
}

// newHarness serves rt over pipes; drain is the server's DrainTimeout (0: testwait's
// deadline, so a loaded machine never turns a drain into a drain timeout).
func newHarness(t *testing.T, rt Runtime, drain time.Duration) *harness {
	t.Helper()
	if drain == 0 {
		drain = testwait.Timeout
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	h := &harness{t: t, in: inW, out: make(chan *protocol.Envelope, 1024), done: make(chan error, 1), cancel: cancel}
	srv := &Server{Runtime: rt, Log: slog.New(slog.NewTextHandler(io.Discard, nil)), SidecarVersion: "test", DrainTimeout: drain}
	go func() {
		err := srv.Serve(ctx, inR, outW)
		outW.Close()
		h.done <- err
	}()
	go func() {
		defer close(h.out)
		dec := protocol.NewDecoder(outR)
		for {
			env, err := dec.Next()
			var le *protocol.LineError
			if errors.As(err, &le) {
				// Surfaces as an unexpected envelope in the test reading it.
				h.out <- &protocol.Envelope{Method: "BAD LINE: " + le.Error()}
				continue
			}
			if err != nil {
				return // EOF, or the pipe closed by the cleanup
			}
			h.out <- env
		}
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
	})
	return h
}

func (h *harness) send(line string) {
	h.t.Helper()
	if _, err := io.WriteString(h.in, line+"\n"); err != nil {
		h.t.Fatalf("write: %v", err)
	}
}

func (h *harness) next() *protocol.Envelope {
	h.t.Helper()
	var env *protocol.Envelope
	var ok bool
	select {
	case env, ok = <-h.out:
	case <-time.After(testwait.Timeout):
		h.t.Fatalf("waited %v for output", testwait.Timeout)
	}
	if !ok {
		h.t.Fatal("output closed")
	}
	return env
}

// until reads envelopes until the reply with id, returning it and the frames seen.
func (h *harness) until(id string) (*protocol.Envelope, []*protocol.Envelope) {
	h.t.Helper()
	var others []*protocol.Envelope
	for {
		env := h.next()
		if env.Method == "" && string(env.ID) == id {
			return env, others
		}
		others = append(others, env)
	}
}

func (h *harness) wait() error {
	h.t.Helper()
	return testwait.Recv(h.t, h.done, "Serve's return")
}

func frameOf(t *testing.T, env *protocol.Envelope) protocol.FrameParams {
	t.Helper()
	if env.Method != protocol.MethodFrame {
		t.Fatalf("want a frame, got %+v", env)
	}
	var p protocol.FrameParams
	if err := json.Unmarshal(env.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestHello(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"rpc.hello","params":{"protocol":1,"host_version":"t"}}`)
	env := h.next()
	var res protocol.HelloResult
	if err := json.Unmarshal(env.Result, &res); err != nil {
		t.Fatal(err)
	}
	want := []string{"chat.start", "rpc.hello", "rpc.ping", "rpc.shutdown", "test.ctxerr", "test.echo", "test.fail", "test.panic", "test.stubborn"}
	if res.Protocol != protocol.Version || res.Runtime != "fake" || res.AgentVersion != "9.9" || res.SidecarVersion != "test" || !slices.Equal(res.Capabilities, want) {
		t.Fatalf("hello result %+v", res)
	}
}

func TestConcurrentRequestsFramesInOrder(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	const n = 200
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"chat.start","params":{"frames":%d,"workers":4}}`, n))
	h.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"b","method":"chat.start","params":{"frames":%d}}`, n))
	h.send(`{"jsonrpc":"2.0","id":3,"method":"test.echo","params":{"x":1}}`)
	seqs := map[string]int64{}
	replies := map[string]*protocol.Envelope{}
	for len(replies) < 3 {
		env := h.next()
		if env.Method == "" {
			id := string(env.ID)
			if _, dup := replies[id]; dup {
				t.Fatalf("two replies for %s", id)
			}
			replies[id] = env
			continue
		}
		p := frameOf(t, env)
		id := string(p.ID)
		if _, replied := replies[id]; replied {
			t.Fatalf("frame of %s after its reply", id)
		}
		seqs[id]++
		if p.Seq != seqs[id] {
			t.Fatalf("request %s: seq %d, want %d", id, p.Seq, seqs[id])
		}
	}
	if seqs["1"] != n || seqs[`"b"`] != n {
		t.Fatalf("frame counts %v, want %d each", seqs, n)
	}
	if got := string(replies["3"].Result); got != `{"x":1}` {
		t.Fatalf("echo result %s", got)
	}
}

func TestPingCountsLiveRuns(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"chat.start","params":{"frames":1,"block":true}}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"chat.start","params":{"frames":1,"block":true}}`)
	// Both runs have started once each has sent its frame.
	for i := 0; i < 2; i++ {
		frameOf(t, h.next())
	}
	h.send(`{"jsonrpc":"2.0","id":3,"method":"rpc.ping"}`)
	env, _ := h.until("3")
	if string(env.Result) != `{"ok":true,"runs":2}` {
		t.Fatalf("ping %s", env.Result)
	}
	h.send(`{"jsonrpc":"2.0","method":"$/cancel","params":{"id":1}}`)
	if env, _ := h.until("1"); !strings.Contains(string(env.Result), `"status":"cancelled"`) {
		t.Fatalf("cancelled result %s", env.Result)
	}
	h.send(`{"jsonrpc":"2.0","id":4,"method":"rpc.ping"}`)
	if env, _ := h.until("4"); string(env.Result) != `{"ok":true,"runs":1}` {
		t.Fatalf("ping after cancel %s", env.Result)
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name      string
		line      string
		id        string
		code      int
		condition string
	}{
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"nope"}`, "1", protocol.CodeMethodNotFound, protocol.CondMethodNotFound},
		{"bad params type", `{"jsonrpc":"2.0","id":2,"method":"chat.start","params":{"frames":"many"}}`, "2", protocol.CodeInvalidParams, protocol.CondInvalidParams},
		{"params not an object", `{"jsonrpc":"2.0","id":3,"method":"chat.start","params":[1]}`, "3", protocol.CodeInvalidParams, protocol.CondInvalidParams},
		{"bad hello params", `{"jsonrpc":"2.0","id":4,"method":"rpc.hello","params":{"protocol":"one"}}`, "4", protocol.CodeInvalidParams, protocol.CondInvalidParams},
		{"panic", `{"jsonrpc":"2.0","id":5,"method":"test.panic"}`, "5", protocol.CodeInternal, protocol.CondInternal},
		{"plain error", `{"jsonrpc":"2.0","id":6,"method":"test.fail"}`, "6", protocol.CodeInternal, protocol.CondInternal},
		{"not json", `this is not json`, "null", protocol.CodeParseError, protocol.CondParseError},
		{"not an object", `[1,2,3]`, "null", protocol.CodeParseError, protocol.CondParseError},
		{"missing jsonrpc", `{"id":7,"method":"rpc.ping"}`, "7", protocol.CodeInvalidRequest, protocol.CondInvalidParams},
		{"bad envelope keeps id", `{"jsonrpc":"2.0","id":8,"method":{}}`, "8", protocol.CodeParseError, protocol.CondParseError},
	}
	h := newHarness(t, &fakeRuntime{}, 0)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.t = t
			h.send(tt.line)
			env, frames := h.until(tt.id)
			if len(frames) != 0 {
				t.Fatalf("unexpected output before the error: %v", frames)
			}
			if env.Error == nil || env.Error.Code != tt.code || env.Error.Condition() != tt.condition {
				t.Fatalf("got %+v (error %+v), want code %d condition %s", env, env.Error, tt.code, tt.condition)
			}
			// The loop survives: a good request is still answered.
			h.send(`{"jsonrpc":"2.0","id":"after","method":"rpc.ping"}`)
			if env, _ := h.until(`"after"`); env.Error != nil {
				t.Fatalf("ping after error: %+v", env.Error)
			}
		})
	}
}

func TestLineTooLongThenGoodRequest(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	go func() {
		// Written from another goroutine: the pipe blocks until the server reads.
		big := `{"jsonrpc":"2.0","id":1,"method":"test.echo","params":"` + strings.Repeat("a", protocol.MaxLineBytes) + `"}`
		io.WriteString(h.in, big+"\n")
		io.WriteString(h.in, `{"jsonrpc":"2.0","id":2,"method":"rpc.ping"}`+"\n")
	}()
	env := h.next()
	if env.Error == nil || env.Error.Condition() != protocol.CondLineTooLong || string(env.ID) != "null" {
		t.Fatalf("want line_too_long with a null id, got %+v %+v", env, env.Error)
	}
	if env := h.next(); string(env.ID) != "2" || env.Error != nil {
		t.Fatalf("good request after the long line: %+v", env)
	}
}

func TestUnknownNotificationDropped(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	h.send(`{"jsonrpc":"2.0","method":"$/whatever","params":{}}`)
	h.send(`{"jsonrpc":"2.0","method":"$/cancel","params":{"id":404}}`)
	h.send(`{"jsonrpc":"2.0","method":"$/cancel","params":"junk"}`)
	h.send(`{"jsonrpc":"2.0","id":99,"result":{}}`)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}`)
	if env := h.next(); string(env.ID) != "1" {
		t.Fatalf("notifications must produce no output; got %+v", env)
	}
}

func TestCancelContextErrorBecomesCancelled(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	h.send(`{"jsonrpc":"2.0","id":"c","method":"test.ctxerr"}`)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}`) // the request is registered before ping is read
	h.until("1")
	h.send(`{"jsonrpc":"2.0","method":"$/cancel","params":{"id":"c"}}`)
	env, _ := h.until(`"c"`)
	if env.Error == nil || env.Error.Condition() != protocol.CondCancelled || env.Error.Code != protocol.CodeApplication {
		t.Fatalf("want a cancelled error, got %+v", env.Error)
	}
}

func TestDuplicateLiveID(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"chat.start","params":{"frames":1,"block":true}}`)
	frameOf(t, h.next())
	h.send(`{"jsonrpc":"2.0","id":1,"method":"test.echo"}`)
	env := h.next()
	if env.Error == nil || string(env.ID) != "1" {
		t.Fatalf("want an error for a duplicate id, got %+v", env)
	}
	h.send(`{"jsonrpc":"2.0","method":"$/cancel","params":{"id":1}}`)
	if env, _ := h.until("1"); env.Error != nil {
		t.Fatalf("the first request must still finish: %+v", env.Error)
	}
}

func TestEOFDrainsLiveRuns(t *testing.T) {
	rt := &fakeRuntime{}
	h := newHarness(t, rt, 0)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"chat.start","params":{"frames":3,"block":true}}`)
	for i := 0; i < 3; i++ {
		frameOf(t, h.next())
	}
	// The run blocks until its context ends: its cancelled result and Serve's clean
	// return (no ErrDrainTimeout) show the drain cancelled it.
	start := time.Now()
	h.in.Close()
	env, _ := h.until("1")
	if !strings.Contains(string(env.Result), `"status":"cancelled"`) {
		t.Fatalf("drained run result %s", env.Result)
	}
	if err := h.wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
	t.Logf("drain took %v", time.Since(start))
	if _, open := <-h.out; open {
		t.Fatal("output after the drain")
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !rt.closed {
		t.Fatal("runtime not closed after the drain")
	}
	if err := rt.lastCall.Emit(protocol.EvToken, protocol.TextData{}); !errors.Is(err, ErrCallDone) {
		t.Fatalf("Emit after reply: %v", err)
	}
}

func TestShutdownDrains(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"chat.start","params":{"frames":1,"block":true}}`)
	frameOf(t, h.next())
	h.send(`{"jsonrpc":"2.0","id":2,"method":"rpc.shutdown"}`)
	if env := h.next(); string(env.ID) != "2" || string(env.Result) != `{"ok":true}` {
		t.Fatalf("shutdown reply %+v", env)
	}
	if env, _ := h.until("1"); !strings.Contains(string(env.Result), "cancelled") {
		t.Fatalf("run result after shutdown %s", env.Result)
	}
	if err := h.wait(); err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func TestDrainTimeout(t *testing.T) {
	rt := &fakeRuntime{release: make(chan struct{})}
	defer close(rt.release)
	h := newHarness(t, rt, 100*time.Millisecond)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"test.stubborn"}`)
	h.send(`{"jsonrpc":"2.0","id":2,"method":"rpc.ping"}`)
	h.until("2")
	h.in.Close()
	if err := h.wait(); !errors.Is(err, ErrDrainTimeout) {
		t.Fatalf("want ErrDrainTimeout, got %v", err)
	}
}

func TestContextEndDrains(t *testing.T) {
	h := newHarness(t, &fakeRuntime{}, 0)
	h.send(`{"jsonrpc":"2.0","id":1,"method":"chat.start","params":{"frames":1,"block":true}}`)
	frameOf(t, h.next())
	h.cancel()
	if env, _ := h.until("1"); !strings.Contains(string(env.Result), "cancelled") {
		t.Fatalf("run result %s", env.Result)
	}
	if err := h.wait(); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
}

type reservedRuntime struct{ fakeRuntime }

func (*reservedRuntime) Methods() map[string]Handler {
	return map[string]Handler{protocol.MethodPing: func(context.Context, *Call) (any, error) { return nil, nil }}
}

func TestReservedMethodRefused(t *testing.T) {
	err := Serve(context.Background(), strings.NewReader(""), io.Discard, &reservedRuntime{}, nil)
	if err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("want a reserved-method error, got %v", err)
	}
}

func TestServeFromReaderToEOF(t *testing.T) {
	// Plain reader input (no pipe): every request is answered before Serve returns.
	input := `{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}
garbage
{"jsonrpc":"2.0","id":2,"method":"chat.start","params":{"frames":5}}
`
	var out strings.Builder
	if err := Serve(context.Background(), strings.NewReader(input), &out, &fakeRuntime{}, nil); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	var lines int
	for sc.Scan() {
		lines++
	}
	if lines != 1+1+5+1 {
		t.Fatalf("got %d lines:\n%s", lines, out.String())
	}
}
