package sidecar

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// lockedBuffer is a concurrency-safe log sink.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// session runs Main over pipes.
type session struct {
	t      *testing.T
	in     *io.PipeWriter
	out    chan *protocol.Envelope
	code   chan int
	stderr *lockedBuffer
	stdout *lockedBuffer // every byte Main wrote to stdout
}

func start(t *testing.T, args ...string) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &session{t: t, in: inW, out: make(chan *protocol.Envelope, 4096), code: make(chan int, 1), stderr: &lockedBuffer{}, stdout: &lockedBuffer{}}
	go func() {
		code := Main(args, inR, io.MultiWriter(s.stdout, outW), s.stderr)
		outW.Close()
		s.code <- code
	}()
	go func() {
		defer close(s.out)
		dec := protocol.NewDecoder(outR)
		for {
			env, err := dec.Next()
			if err != nil {
				var le *protocol.LineError
				if errors.As(err, &le) {
					s.out <- &protocol.Envelope{Method: "BAD LINE: " + le.Error()}
					continue
				}
				return
			}
			s.out <- env
		}
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	return s
}

func (s *session) send(format string, args ...any) {
	s.t.Helper()
	if _, err := fmt.Fprintf(s.in, format+"\n", args...); err != nil {
		s.t.Fatal(err)
	}
}

// next waits (testwait's deadline) for the next line Main writes.
func (s *session) next() *protocol.Envelope {
	s.t.Helper()
	select {
	case env, ok := <-s.out:
		if !ok {
			s.t.Fatal("stdout closed")
		}
		return env
	case <-time.After(testwait.Timeout):
		s.t.Fatalf("waited %v for stdout", testwait.Timeout)
	}
	return nil
}

// exit waits (testwait's deadline) for Main's exit code.
func (s *session) exit() int {
	s.t.Helper()
	return testwait.Recv(s.t, s.code, "Main's return")
}

func chatStart(id int, baseURL string) string {
	p, _ := json.Marshal(protocol.ChatStartParams{
		SessionID: "s", StreamID: "st", Model: "scripted-model", UserMessage: "secret user text",
		Provider: protocol.Provider{Name: "Scripted", BaseURL: baseURL, APIKey: "sk-very-secret"},
	})
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"chat.start","params":%s}`, id, p)
}

func TestMainHelloAndChat(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "Hi"}, {Text: " there"}}, Usage: &providertest.Usage{PromptTokens: 3, CompletionTokens: 2}})
	s := start(t, "--log-level", "debug")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"rpc.hello","params":{"protocol":1,"host_version":"test"}}`)
	var hello protocol.HelloResult
	if err := json.Unmarshal(s.next().Result, &hello); err != nil {
		t.Fatal(err)
	}
	if hello.Protocol != protocol.Version || hello.Runtime != "builtin" || hello.AgentVersion == "" || hello.SidecarVersion == "" ||
		strings.Join(hello.Capabilities, ",") != "approval.respond,approval.yolo,aux.complete,chat.evict,chat.start,chat.steer,chat.steer_now,chat.steer_withdraw,clarify.respond,mcp.inspect,mcp.list,mcp.prompt_get,mcp.resource_read,mcp.stop,rpc.hello,rpc.ping,rpc.shutdown" {
		t.Fatalf("hello %+v", hello)
	}

	s.send("%s", chatStart(2, p.BaseURL()))
	var events []string
	for {
		env := s.next()
		if env.Method == protocol.MethodFrame {
			var f protocol.FrameParams
			json.Unmarshal(env.Params, &f) //nolint:errcheck
			events = append(events, fmt.Sprintf("%d:%s:%s", f.Seq, f.Event, f.Data))
			continue
		}
		var res protocol.ChatResult
		if err := json.Unmarshal(env.Result, &res); err != nil || string(env.ID) != "2" {
			t.Fatalf("reply %+v (%v)", env, err)
		}
		if res.Status != protocol.StatusCompleted || res.FinalResponse != "Hi there" {
			t.Fatalf("result %+v", res)
		}
		break
	}
	want := `1:token:{"text":"Hi"} 2:token:{"text":" there"} 3:usage:{"input_tokens":3,"output_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0,"estimated_cost":0}`
	if strings.Join(events, " ") != want {
		t.Fatalf("frames %q", events)
	}

	s.in.Close()
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d; stderr:\n%s", code, s.stderr)
	}
	logs := s.stderr.String()
	if strings.Contains(logs, "sk-very-secret") || strings.Contains(logs, "secret user text") {
		t.Fatalf("a secret or message text reached the log:\n%s", logs)
	}
	if !strings.Contains(logs, "turn ended") {
		t.Fatalf("logs lack the turn:\n%s", logs)
	}
}

// TestMainCancelHangingStream: $/cancel ends a silent stream at once with a cancelled
// result carrying the partial text. The provider never sends more, and the idle timeout
// would end the call with an error, not a result: the result is the cancel's. How long
// it took is logged, never judged (a loaded machine decides that, not the code).
func TestMainCancelHangingStream(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "so far"}}, HangAfter: true})
	s := start(t)
	s.send("%s", chatStart(7, p.BaseURL()))
	if env := s.next(); env.Method != protocol.MethodFrame {
		t.Fatalf("want the first frame, got %+v", env)
	}
	begin := time.Now()
	s.send(`{"jsonrpc":"2.0","method":"$/cancel","params":{"id":7}}`)
	env := s.next()
	t.Logf("cancel took %v", time.Since(begin))
	var res protocol.ChatResult
	if err := json.Unmarshal(env.Result, &res); err != nil {
		t.Fatalf("reply %+v", env)
	}
	if res.Status != protocol.StatusCancelled || !res.Partial || res.FinalResponse != "so far" || len(res.Messages) != 1 || res.Messages[0].Content != "so far" {
		t.Fatalf("result %+v", res)
	}
	s.send(`{"jsonrpc":"2.0","id":8,"method":"rpc.ping"}`)
	if env := s.next(); string(env.Result) != `{"ok":true,"runs":0}` {
		t.Fatalf("ping %s", env.Result)
	}
}

// TestMainEOFDrain: closing stdin with a live silent stream cancels it, its reply is
// written, and Main exits 0.
func TestMainEOFDrain(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Text: "partial"}}, HangAfter: true})
	s := start(t)
	s.send("%s", chatStart(1, p.BaseURL()))
	s.next() // the token frame: the stream is live
	begin := time.Now()
	s.in.Close()
	env := s.next()
	if !strings.Contains(string(env.Result), `"status":"cancelled"`) {
		t.Fatalf("reply %+v", env)
	}
	// Exit code 0: the drain ended within its own bound (a drain timeout exits 1).
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	t.Logf("drain took %v", time.Since(begin))
}

func TestMainShutdownAndBadFlags(t *testing.T) {
	s := start(t)
	s.send(`not json`)
	if env := s.next(); env.Error == nil || env.Error.Condition() != protocol.CondParseError {
		t.Fatalf("want a parse error, got %+v", env)
	}
	s.send(`{"jsonrpc":"2.0","id":1,"method":"rpc.shutdown"}`)
	if env := s.next(); string(env.Result) != `{"ok":true}` {
		t.Fatalf("shutdown reply %+v", env)
	}
	if code := s.exit(); code != 0 {
		t.Fatalf("exit code %d", code)
	}

	for _, args := range [][]string{{"--log-level", "loud"}, {"--nope"}, {"extra"}, {"--retry-delays", "1s,soon"},
		{"--retry-delays", "-1s"}, {"--retry-max-wait", "0s"}, {"--runtime", "acp"}, {"--runtime", "nope"},
		{"--runtime", "builtin", "--", "opencode", "acp"}} {
		var stderr bytes.Buffer
		if code := Main(args, strings.NewReader(""), io.Discard, &stderr); code != 2 {
			t.Errorf("Main(%q) = %d, want 2", args, code)
		}
	}
}

// BenchmarkChat100kTokens streams 100,000 token frames from the scripted provider
// through the whole sidecar (SSE parse, frames, NDJSON out) per iteration.
func BenchmarkChat100kTokens(b *testing.B) {
	const n = 100_000
	p := providertest.Start()
	defer p.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() { done <- Main([]string{"--log-level", "warn"}, inR, outW, io.Discard); outW.Close() }()
	dec := protocol.NewDecoder(outR)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.Enqueue(providertest.BigTurn(n, "tok "))
		fmt.Fprintf(inW, "%s\n", chatStart(i+1, p.BaseURL()))
		frames := 0
		for {
			env, err := dec.Next()
			if err != nil {
				b.Fatal(err)
			}
			if env.Method == protocol.MethodFrame {
				frames++
				continue
			}
			if env.Error != nil {
				b.Fatal(env.Error)
			}
			break
		}
		if frames != n+1 { // tokens and one usage frame
			b.Fatalf("%d frames", frames)
		}
	}
	b.StopTimer()
	inW.Close()
	<-done
}

// TestMainSteerAndRetryShapes drives steering and a retry over real stdio and checks the
// wire shapes: chat.steer's and chat.steer_now's replies, the steer_pending frames
// (written before the chat.steer reply), the rate_limit_wait frame, and the result.
//
// The frames of the stream are one ordered sequence and the replies another (by id):
// a reply is written by the goroutine of its request and may land anywhere between two
// frames, so the test never compares the two sequences' interleaving, except where the
// protocol orders them ("the frame of a chat.steer is written before that request's
// reply", docs/protocol.md, Steering: Guarantees).
func TestMainSteerAndRetryShapes(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	gate := make(chan struct{})
	defer close(gate)
	p.Enqueue(providertest.Turn{Status: 429, RetryAfter: "0.01"},
		providertest.Turn{Chunks: []providertest.Chunk{{Text: "Once"}, {Text: " more", Wait: gate}}},
		providertest.TextTurn("Brief."))
	s := start(t, "--retry-delays", "5ms,5ms,5ms")
	s.send("%s", chatStart(1, p.BaseURL()))

	var frames []string              // the stream's frames in order, as "event data"
	replies := map[string]string{}   // replies by id
	framesBefore := map[string]int{} // how many frames had been read when a reply came
	next := func() *protocol.Envelope {
		env := s.next()
		if env.Method == protocol.MethodFrame {
			var f protocol.FrameParams
			json.Unmarshal(env.Params, &f) //nolint:errcheck
			frames = append(frames, f.Event+" "+string(f.Data))
		} else {
			replies[string(env.ID)] = string(env.Result)
			framesBefore[string(env.ID)] = len(frames)
		}
		return env
	}
	for next(); len(frames) == 0 || !strings.HasPrefix(frames[len(frames)-1], "token"); next() {
	}
	s.send(`{"jsonrpc":"2.0","id":2,"method":"chat.steer","params":{"stream_id":"st","steer_id":"s1","text":"be brief"}}`)
	for next().Method == protocol.MethodFrame {
	}
	s.send(`{"jsonrpc":"2.0","id":3,"method":"chat.steer_now","params":{"stream_id":"st","steer_id":"s1"}}`)
	var result protocol.ChatResult
	for done := 0; done < 2; {
		env := next()
		if env.Method != protocol.MethodFrame {
			done++
			if string(env.ID) == "1" {
				json.Unmarshal(env.Result, &result) //nolint:errcheck
			}
		}
	}
	got := strings.Join(frames, "\n")
	for _, want := range []string{
		`rate_limit_wait {"provider":"Scripted","until":`,
		`"until_kind":"retry"}` + "\nprovider_phase {\"phase\":null}\ntoken {\"text\":\"Once\"}",
		"steer_pending {\"pending\":[],\"taken\":[{\"steer_id\":\"s1\",\"text\":\"be brief\"}]}\ntoken {\"text\":\"Brief.\"}",
	} {
		if !strings.Contains(got, want) {
			t.Fatalf("frames lack %q:\n%s", want, got)
		}
	}
	for id, want := range map[string]string{
		"2": `{"accepted":true,"can_redirect":true}`,
		"3": `{"withdrawn":true,"redirected":true,"delivery":"restart","requeued":false}`,
	} {
		if replies[id] != want {
			t.Fatalf("reply %s = %s, want %s", id, replies[id], want)
		}
	}
	queued := "steer_pending {\"pending\":[{\"steer_id\":\"s1\",\"text\":\"be brief\"}]}"
	if !slices.Contains(frames[:framesBefore["2"]], queued) {
		t.Fatalf("no %q before chat.steer's reply; frames before it:\n%s", queued, strings.Join(frames[:framesBefore["2"]], "\n"))
	}
	b, _ := json.Marshal(result.Messages)
	if string(b) != `[{"role":"assistant","content":"Once","partial":true},{"role":"user","content":"be brief"},{"role":"assistant","content":"Brief."}]` ||
		result.PendingSteer != nil {
		t.Fatalf("result %s %+v", b, result)
	}
}
