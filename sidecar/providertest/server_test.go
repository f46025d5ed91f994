package providertest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"talaria/internal/testwait"
)

func post(t *testing.T, ctx context.Context, s *Server, body string, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// dataLines returns the payloads of the stream's data: lines.
func dataLines(t *testing.T, r io.Reader) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}

func TestStreamedTurn(t *testing.T) {
	s := Start()
	defer s.Close()
	s.Enqueue(Turn{
		Chunks: []Chunk{
			{Reasoning: "think", ReasoningField: "reasoning"},
			{Text: "Hel", Delay: 5 * time.Millisecond},
			{Text: "lo", ToolCalls: []ToolCallDelta{{Index: 0, ID: "c1", Name: "f", Arguments: "{}"}}},
		},
		Usage: &Usage{PromptTokens: 3, CompletionTokens: 2, CachedTokens: 1},
	})
	resp := post(t, context.Background(), s, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`,
		map[string]string{"Authorization": "Bearer k"})
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := dataLines(t, resp.Body)
	if len(lines) != 6 || lines[5] != "[DONE]" {
		t.Fatalf("lines %q", lines)
	}
	for i, want := range []string{`"reasoning":"think"`, `"content":"Hel"`, `"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]`,
		`"finish_reason":"tool_calls"`, `"cached_tokens":1`} {
		if !strings.Contains(lines[i], want) {
			t.Errorf("line %d %s lacks %s", i, lines[i], want)
		}
	}
	reqs := s.Requests()
	if len(reqs) != 1 || reqs[0].Model != "m" || !reqs[0].Stream || reqs[0].StreamOptions == nil || !reqs[0].StreamOptions.IncludeUsage ||
		reqs[0].Authorization != "Bearer k" || reqs[0].Messages[0].Content != "hi" {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestEchoAndNonStreaming(t *testing.T) {
	s := Start()
	defer s.Close()
	resp := post(t, context.Background(), s, `{"model":"m","stream":true,"messages":[{"role":"user","content":"one"},{"role":"assistant","content":"x"},{"role":"user","content":[{"type":"text","text":"hello there"}]}]}`, nil)
	var text strings.Builder
	var sawUsage bool
	for _, d := range dataLines(t, resp.Body) {
		if d == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct{ Content string }
			}
			Usage *struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatal(err)
		}
		if len(c.Choices) > 0 {
			text.WriteString(c.Choices[0].Delta.Content)
		}
		sawUsage = sawUsage || c.Usage != nil
	}
	if text.String() != "You said: hello there" || !sawUsage {
		t.Fatalf("echo %q usage %v", text.String(), sawUsage)
	}

	s.Enqueue(TextTurn("a", "b"))
	resp = post(t, context.Background(), s, `{"model":"m","messages":[]}`, nil)
	var body struct {
		Choices []struct {
			Message struct{ Content string }
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	if body.Choices[0].Message.Content != "ab" {
		t.Fatalf("non-streaming %+v", body)
	}
}

func TestErrorTurn(t *testing.T) {
	s := Start()
	defer s.Close()
	s.Enqueue(Turn{Status: 429, RetryAfter: "7"}, ErrorTurn(500, "overloaded"))
	resp := post(t, context.Background(), s, `{"model":"m","stream":true}`, nil)
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(b), "scripted error 429") {
		t.Fatalf("got %d %q %s", resp.StatusCode, resp.Header.Get("Retry-After"), b)
	}
	resp = post(t, context.Background(), s, `{"model":"m","stream":true}`, nil)
	b, _ = io.ReadAll(resp.Body)
	if resp.StatusCode != 500 || !strings.Contains(string(b), `"message":"overloaded"`) {
		t.Fatalf("got %d %s", resp.StatusCode, b)
	}
	if s.Pending() != 0 {
		t.Fatalf("pending %d", s.Pending())
	}
}

func TestHangReleasedByClient(t *testing.T) {
	s := Start()
	defer s.Close()
	s.Enqueue(Turn{Chunks: []Chunk{{Text: "part"}}, HangAfter: true})
	ctx, cancel := context.WithCancel(context.Background())
	resp := post(t, ctx, s, `{"model":"m","stream":true}`, nil)
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "part") {
		t.Fatalf("first line %q %v", line, err)
	}
	// The stream hangs for good: the read ends, and the server lets the request go
	// (abandoned), only because the client went.
	read := make(chan error, 1)
	go func() { _, err := io.ReadAll(br); read <- err }()
	cancel()
	if err := testwait.Recv(t, read, "the cancelled read's end"); err == nil {
		t.Fatal("want an error reading a cancelled hanging stream")
	}
	if !s.AwaitRequests(1, true, testwait.Timeout) || !s.Requests()[0].Abandoned {
		t.Fatal("hang not released")
	}
}

func TestBigTurn(t *testing.T) {
	s := Start()
	defer s.Close()
	const n = 20000
	s.Enqueue(BigTurn(n, "x"))
	resp := post(t, context.Background(), s, `{"model":"m","stream":true}`, nil)
	lines := dataLines(t, resp.Body)
	if len(lines) != n+3 { // tokens, finish, usage, [DONE]
		t.Fatalf("got %d lines", len(lines))
	}
}

func TestModelsAndScript(t *testing.T) {
	s := Start()
	defer s.Close()
	s.SetModels("a", "b")
	resp, err := http.Get(s.BaseURL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"id":"a"`) || !strings.Contains(string(b), `"id":"b"`) {
		t.Fatalf("models %s", b)
	}

	turns, err := LoadScript(strings.NewReader(`[{"header_delay_ms":5,"chunks":[{"text":"hi","delay_ms":1.5}],"usage":{"prompt_tokens":1,"completion_tokens":2}},{"status":401}]`))
	if err != nil {
		t.Fatal(err)
	}
	if len(turns) != 2 || turns[0].HeaderDelay != 5*time.Millisecond || turns[0].Chunks[0].Delay != 1500*time.Microsecond ||
		turns[0].Chunks[0].Text != "hi" || turns[0].Usage.CompletionTokens != 2 || turns[1].Status != 401 {
		t.Fatalf("script %+v", turns)
	}
	if _, err := LoadScript(strings.NewReader(`{`)); err == nil {
		t.Fatal("want an error for a bad script")
	}
}

func TestCallTurnAndRequestHelpers(t *testing.T) {
	s := Start()
	defer s.Close()
	s.Enqueue(CallTurn("Let me look.", Call("c1", "read_file", map[string]any{"path": "a.txt"}), Call("c2", "terminal", map[string]any{"command": "ls -la"})))
	resp := post(t, context.Background(), s, `{"model":"m","stream":true,"tool_choice":"auto","tools":[{"type":"function","function":{"name":"read_file"}}],
"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"x","content":"ok"}]}`, nil)
	lines := dataLines(t, resp.Body)
	// Reassemble by index the way a client does.
	args := map[int]string{}
	names := map[int]string{}
	for _, l := range lines {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						Index    int `json:"index"`
						Function struct {
							Name      string `json:"name"`
							Arguments string `json:"arguments"`
						} `json:"function"`
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
		}
		if json.Unmarshal([]byte(l), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		for _, d := range c.Choices[0].Delta.ToolCalls {
			names[d.Index] += d.Function.Name
			args[d.Index] += d.Function.Arguments
		}
	}
	if names[0] != "read_file" || args[0] != `{"path":"a.txt"}` || names[1] != "terminal" || args[1] != `{"command":"ls -la"}` {
		t.Fatalf("names %v args %v", names, args)
	}
	if !strings.Contains(strings.Join(lines, "\n"), `"finish_reason":"tool_calls"`) {
		t.Fatal("no tool_calls finish")
	}
	req := s.Requests()[0]
	if got := req.ToolNames(); len(got) != 1 || got[0] != "read_file" || req.ToolChoice() != "auto" {
		t.Fatalf("tools %q choice %q", got, req.ToolChoice())
	}
	if tr, ok := req.ToolResult("x"); !ok || tr.Content != "ok" || len(req.ToolResults()) != 1 {
		t.Fatalf("tool result %+v", tr)
	}
	if calls := req.AssistantCalls(); len(calls) != 1 || calls[0] != (ToolCall{ID: "x", Name: "f", Arguments: "{}"}) {
		t.Fatalf("calls %+v", calls)
	}
}

// TestHeadersDropGateAndAbandoned: a turn's headers are sent, a dropped turn closes the
// connection without an answer, a gated chunk waits for its gate, and a client that
// goes away mid-answer is recorded as having abandoned the request.
func TestHeadersDropGateAndAbandoned(t *testing.T) {
	s := Start()
	defer s.Close()
	const body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`

	s.Enqueue(Turn{Status: 429, RetryAfter: "1", Header: map[string]string{"x-ratelimit-reset-requests": "1s"}})
	resp := post(t, context.Background(), s, body, nil)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" || resp.Header.Get("X-Ratelimit-Reset-Requests") != "1s" {
		t.Fatalf("status %d, header %v", resp.StatusCode, resp.Header)
	}

	s.Enqueue(Turn{Drop: true})
	req, _ := http.NewRequest(http.MethodPost, s.BaseURL()+"/chat/completions", strings.NewReader(body))
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("a dropped turn answered")
	}

	gate := make(chan struct{})
	s.Enqueue(Turn{Chunks: []Chunk{{Text: "a"}, {Text: "b", Wait: gate}}}, Turn{Chunks: []Chunk{{Text: "x"}, {Text: "y", Wait: make(chan struct{})}}})
	resp = post(t, context.Background(), s, body, nil)
	r := bufio.NewReader(resp.Body)
	line, _ := r.ReadString('\n')
	if !strings.Contains(line, `"content":"a"`) {
		t.Fatalf("first line %q", line)
	}
	close(gate)
	if rest, _ := io.ReadAll(r); !strings.Contains(string(rest), `"content":"b"`) || !strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("rest %q", rest)
	}

	ctx, cancel := context.WithCancel(context.Background())
	resp = post(t, ctx, s, body, nil)
	line, _ = bufio.NewReader(resp.Body).ReadString('\n')
	if !strings.Contains(line, `"content":"x"`) {
		t.Fatalf("first line %q", line)
	}
	cancel()
	if !s.AwaitRequests(4, true, testwait.Timeout) {
		t.Fatal("the requests did not all end")
	}
	reqs := s.Requests()
	var abandoned []bool
	for _, r := range reqs {
		abandoned = append(abandoned, r.Abandoned)
	}
	if len(reqs) != 4 || !slices.Equal(abandoned, []bool{false, false, false, true}) {
		t.Fatalf("abandoned %v", abandoned)
	}
	if s.AwaitRequests(5, false, 10*time.Millisecond) {
		t.Fatal("AwaitRequests saw a request that never came")
	}
}

// A non-streaming answer waits for its chunks' gates before its one body is written.
func TestNonStreamingAnswerWaitsForItsGates(t *testing.T) {
	s := Start()
	defer s.Close()
	gate := make(chan struct{})
	s.Enqueue(Turn{Chunks: []Chunk{{Text: "A title", Wait: gate}}})
	got := make(chan string, 1)
	go func() {
		resp := post(t, context.Background(), s, `{"model":"m","messages":[{"role":"user","content":"name it"}]}`, nil)
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	if !s.AwaitRequests(1, false, testwait.Timeout) {
		t.Fatal("no request arrived")
	}
	// A negative over time: a slow machine can only make it pass.
	select {
	case b := <-got:
		t.Fatalf("answered before its gate opened: %s", b)
	case <-time.After(200 * time.Millisecond):
	}
	close(gate)
	if b := testwait.Recv(t, got, "the answer after the gate opened"); !strings.Contains(b, `"content":"A title"`) {
		t.Fatalf("answer %s", b)
	}
}
