package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// recorder collects the frames a turn emits.
type recorder struct {
	mu     sync.Mutex
	frames []string // "event data-json"
	notify chan struct{}
}

func newRecorder() *recorder { return &recorder{notify: make(chan struct{}, 1024)} }

func (r *recorder) emit(event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.frames = append(r.frames, event+" "+string(b))
	r.mu.Unlock()
	select {
	case r.notify <- struct{}{}:
	default:
	}
	return nil
}

func (r *recorder) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.frames...)
}

// waitFrames blocks (testwait's deadline) until n frames were emitted.
func (r *recorder) waitFrames(t *testing.T, n int) {
	t.Helper()
	deadline := time.NewTimer(testwait.Timeout)
	defer deadline.Stop()
	for len(r.list()) < n {
		select {
		case <-r.notify:
		case <-deadline.C:
			t.Fatalf("waited %v for %d frames, got %q", testwait.Timeout, n, r.list())
		}
	}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func sameRow(a, b protocol.ChatMessage) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func chatParams(baseURL string) protocol.ChatStartParams {
	return protocol.ChatStartParams{
		SessionID:   "s1",
		StreamID:    "st1",
		Model:       "scripted-model",
		Provider:    protocol.Provider{Name: "Scripted", BaseURL: baseURL},
		UserMessage: "What now?",
	}
}

func TestChatStreamsFramesInOrder(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.Turn{
		Chunks: []providertest.Chunk{
			{Reasoning: "Let me"},
			{Reasoning: " think", ReasoningField: "reasoning"},
			{Text: "Hel"},
			{Text: "lo ✓"},
		},
		Usage: &providertest.Usage{PromptTokens: 12, CompletionTokens: 3, CachedTokens: 4},
	})
	rt := New(Options{Log: testLogger(t)})
	params := chatParams(p.BaseURL())
	params.Provider.APIKey = "sk-test-key"
	params.SystemMessage = "Be brief."
	params.EphemeralSystemPrompt = "Today is Monday."
	params.ConversationHistory = []protocol.ChatMessage{
		{Role: "user", Content: "Hi"},
		{Role: "assistant", Content: "Hello!", Reasoning: "greet back"},
	}
	rec := newRecorder()
	res, err := rt.Chat(context.Background(), params, rec.emit)
	if err != nil {
		t.Fatal(err)
	}
	wantFrames := []string{
		`reasoning {"text":"Let me"}`,
		`reasoning {"text":" think"}`,
		`token {"text":"Hel"}`,
		`token {"text":"lo ✓"}`,
		`usage {"input_tokens":12,"output_tokens":3,"cache_read_tokens":4,"cache_write_tokens":0,"estimated_cost":0}`,
	}
	if got := rec.list(); strings.Join(got, "\n") != strings.Join(wantFrames, "\n") {
		t.Fatalf("frames:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantFrames, "\n"))
	}
	if res.Status != protocol.StatusCompleted || res.FinalResponse != "Hello ✓" || res.Model != "scripted-model" || res.Provider != "Scripted" ||
		len(res.Messages) != 1 || !sameRow(res.Messages[0], protocol.ChatMessage{Role: "assistant", Content: "Hello ✓", Reasoning: "Let me think"}) ||
		res.Usage.InputTokens != 12 || res.Usage.OutputTokens != 3 || res.Usage.CacheReadTokens != 4 || res.Context.LastPromptTokens != 12 || res.Partial {
		t.Fatalf("result %+v", res)
	}

	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	req := reqs[0]
	if req.Model != "scripted-model" || !req.Stream || req.StreamOptions == nil || !req.StreamOptions.IncludeUsage || req.Authorization != "Bearer sk-test-key" {
		t.Fatalf("request %+v", req)
	}
	var roles, contents []string
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
		contents = append(contents, m.Content)
		if strings.Contains(string(m.Raw), "reasoning") {
			t.Errorf("reasoning sent back to the provider: %s", m.Raw)
		}
	}
	if strings.Join(roles, ",") != "system,user,assistant,user" ||
		strings.Join(contents, "|") != "Be brief.\n\nToday is Monday.|Hi|Hello!|What now?" {
		t.Fatalf("messages %q %q", roles, contents)
	}
}

func TestChatWithoutKeyOrSystem(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.TextTurn("ok"))
	if _, err := New(Options{}).Chat(context.Background(), chatParams(p.BaseURL()+"/"), newRecorder().emit); err != nil {
		t.Fatal(err)
	}
	req := p.Requests()[0]
	if req.Authorization != "" {
		t.Fatalf("Authorization sent without a key: %q", req.Authorization)
	}
	if len(req.Messages) != 1 || req.Messages[0].Role != "user" {
		t.Fatalf("messages %+v", req.Messages)
	}
}

func TestChatProviderErrors(t *testing.T) {
	// Retry-After as an HTTP date (whole seconds): the wait it asks for is the date less
	// the moment the answer is read, some time between before and after the call (a
	// loaded machine only widens that window).
	date := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	httpDate := date.Format(http.TimeFormat)
	tests := []struct {
		name       string
		turn       providertest.Turn
		condition  string
		status     int
		retryAfter func(s float64, before, after time.Time) bool
		message    []string
		partial    string
		code       string
	}{
		{name: "401", turn: providertest.ErrorTurn(401, "Incorrect API key provided: sk-test-key"),
			condition: protocol.CondCredentialMissing, status: 401, message: []string{"Incorrect API key", "HTTP 401", "[redacted]"}},
		{name: "403", turn: providertest.ErrorTurn(403, "forbidden"), condition: protocol.CondCredentialMissing, status: 403},
		{name: "404 ollama model", turn: providertest.ErrorTurn(404, `model "llama9" not found, try pulling it first`),
			condition: protocol.CondModelNotFound, status: 404, message: []string{"try pulling it first", "scripted-model"}},
		{name: "404 openai model code", turn: providertest.Turn{Status: 404, Body: `{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`},
			condition: protocol.CondModelNotFound, status: 404, code: "model_not_found"},
		{name: "400 model does not exist", turn: providertest.ErrorTurn(400, "The model gpt-4.1-nano does not exist"),
			condition: protocol.CondModelNotFound, status: 400},
		{name: "400 context length", turn: providertest.Turn{Status: 400, Body: `{"error":{"message":"This model's maximum context length is 8192 tokens.","code":"context_length_exceeded"}}`},
			condition: protocol.CondContextTooLong, status: 400, code: "context_length_exceeded", message: []string{"maximum context length"}},
		{name: "400 other", turn: providertest.Turn{Status: 400, Body: `{"error":{"message":"messages: field required","code":"invalid_request"}}`},
			condition: protocol.CondProviderError, status: 400, code: "invalid_request", message: []string{"field required"}},
		{name: "404 wrong path", turn: providertest.Turn{Status: 404, Body: "404 page not found"},
			condition: protocol.CondProviderError, status: 404, message: []string{"404 page not found", "base URL"}},
		{name: "429 seconds", turn: providertest.Turn{Status: 429, RetryAfter: "7", Body: `{"error":{"message":"Rate limit reached","code":"rate_limit_exceeded"}}`},
			condition: protocol.CondRateLimited, status: 429, retryAfter: func(s float64, _, _ time.Time) bool { return s == 7 }, message: []string{"Rate limit reached"}},
		{name: "429 http date", turn: providertest.Turn{Status: 429, RetryAfter: httpDate},
			condition: protocol.CondRateLimited, status: 429, retryAfter: func(s float64, before, after time.Time) bool {
				return s >= date.Sub(after).Seconds()-1 && s <= date.Sub(before).Seconds()+1
			}},
		{name: "500 provider message", turn: providertest.ErrorTurn(500, "The server had an error while processing your request."),
			condition: protocol.CondProviderError, status: 500, message: []string{"HTTP 500", "The server had an error"}},
		{name: "502 error string", turn: providertest.Turn{Status: 502, Body: `{"error":"upstream down"}`},
			condition: protocol.CondProviderError, status: 502, message: []string{"upstream down"}},
		{name: "503 detail", turn: providertest.Turn{Status: 503, Body: `{"detail":"loading model"}`},
			condition: protocol.CondProviderError, status: 503, message: []string{"loading model"}},
		{name: "500 long raw body trimmed", turn: providertest.Turn{Status: 500, Body: "panic: " + strings.Repeat("x", 2000)},
			condition: protocol.CondProviderError, status: 500, message: []string{"panic: xxx", "…"}},
		{name: "500 html page", turn: providertest.Turn{Status: 500, Body: "<html><body><h1>500</h1>" + strings.Repeat("x", 2000) + "</body></html>"},
			condition: protocol.CondProviderError, status: 500, message: []string{"HTTP 500: Internal Server Error."}},
		{name: "mid-stream error object", turn: providertest.Turn{Chunks: []providertest.Chunk{{Text: "Half "}, {Text: "done"}, providertest.ErrorChunk(502, "Provider returned error")}},
			condition: protocol.CondProviderError, status: 0, code: "502", message: []string{"Provider returned error"}, partial: "Half done"},
		{name: "mid-stream rate limit", turn: providertest.Turn{Chunks: []providertest.Chunk{{Text: "x"}, providertest.ErrorChunk(429, "slow down")}},
			condition: protocol.CondRateLimited, status: 0, code: "429", partial: "x"},
		{name: "mid-stream string code", turn: providertest.Turn{Chunks: []providertest.Chunk{{Raw: `data: {"error":{"message":"overloaded","code":"server_error"}}` + "\n\n"}}},
			condition: protocol.CondProviderError, code: "server_error", message: []string{"overloaded"}},
		{name: "connection cut mid-stream", turn: providertest.Turn{Chunks: []providertest.Chunk{{Text: "cut "}}, Abort: true},
			condition: protocol.CondStreamInterrupted, partial: "cut ", message: []string{"broke"}},
		{name: "not a chunk", turn: providertest.Turn{Chunks: []providertest.Chunk{{Raw: "data: {oops\n\n"}}},
			condition: protocol.CondProviderError, message: []string{"not a chat completion chunk"}},
		{name: "finish reason error", turn: providertest.Turn{Chunks: []providertest.Chunk{{Text: "a"}}, FinishReason: "error"},
			condition: protocol.CondProviderError, partial: "a"},
	}
	p := providertest.Start()
	defer p.Close()
	// Retries off: each case is one answer (retry_test.go covers retries).
	rt := New(Options{Log: testLogger(t), RetryDelays: []time.Duration{}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.Enqueue(tt.turn)
			params := chatParams(p.BaseURL())
			params.Provider.APIKey = "sk-test-key"
			before := time.Now()
			_, err := rt.Chat(context.Background(), params, newRecorder().emit)
			after := time.Now()
			var rpcErr *protocol.Error
			if !errors.As(err, &rpcErr) {
				t.Fatalf("want *protocol.Error, got %v", err)
			}
			if rpcErr.Code != protocol.CodeApplication || rpcErr.Condition() != tt.condition || rpcErr.Data.HTTPStatus != tt.status {
				t.Fatalf("got code %d condition %q status %d (%s); want %q %d", rpcErr.Code, rpcErr.Condition(), rpcErr.Data.HTTPStatus, rpcErr.Message, tt.condition, tt.status)
			}
			if tt.retryAfter != nil && !tt.retryAfter(rpcErr.Data.RetryAfterSeconds, before, after) {
				t.Errorf("retry_after_s %v", rpcErr.Data.RetryAfterSeconds)
			}
			if rpcErr.Data.Partial != tt.partial {
				t.Errorf("partial %q, want %q", rpcErr.Data.Partial, tt.partial)
			}
			if tt.code != "" && rpcErr.Data.ProviderCode != tt.code {
				t.Errorf("provider_code %q, want %q", rpcErr.Data.ProviderCode, tt.code)
			}
			for _, m := range tt.message {
				if !strings.Contains(rpcErr.Message, m) {
					t.Errorf("message %q lacks %q", rpcErr.Message, m)
				}
			}
			if strings.Contains(rpcErr.Message, "sk-test-key") {
				t.Errorf("API key in message %q", rpcErr.Message)
			}
			if len(rpcErr.Message) > 1000 {
				t.Errorf("message of %d bytes", len(rpcErr.Message))
			}
		})
	}
}

// deadPort returns a loopback port nothing listens on.
func deadPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

func TestChatLocalRuntimeUnavailable(t *testing.T) {
	port := deadPort(t)
	for _, host := range []string{"127.0.0.1", "localhost"} {
		t.Run(host, func(t *testing.T) {
			base := fmt.Sprintf("http://%s:%d/v1", host, port)
			rec := newRecorder()
			_, err := New(Options{}).Chat(context.Background(), chatParams(base), rec.emit)
			var rpcErr *protocol.Error
			if !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondLocalRuntimeUnavailable {
				t.Fatalf("want local_runtime_unavailable, got %v", err)
			}
			if !strings.Contains(rpcErr.Message, base) {
				t.Fatalf("message %q does not name %s", rpcErr.Message, base)
			}
			// Not retried, not waited for: every retry and wait is announced by a frame.
			if fs := rec.list(); len(fs) != 0 {
				t.Fatalf("frames %q: a refused local runtime was retried or waited for", fs)
			}
		})
	}
	t.Run("password in the URL is not shown", func(t *testing.T) {
		base := fmt.Sprintf("http://user:hunter2@127.0.0.1:%d/v1", port)
		_, err := New(Options{}).Chat(context.Background(), chatParams(base), newRecorder().emit)
		var rpcErr *protocol.Error
		if !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondLocalRuntimeUnavailable || strings.Contains(rpcErr.Message, "hunter2") {
			t.Fatalf("got %v", err)
		}
	})
}

func TestChatRemoteNetworkError(t *testing.T) {
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return nil, &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("no route to host")}
		},
	}}
	_, err := New(Options{HTTPClient: client}).Chat(context.Background(), chatParams("https://api.example.com/v1"), newRecorder().emit)
	var rpcErr *protocol.Error
	if !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondNetworkError || !strings.Contains(rpcErr.Message, "no route to host") {
		t.Fatalf("want network_error, got %v", err)
	}
}

func TestChatInvalidParams(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*protocol.ChatStartParams)
		want   string
	}{
		{"no model", func(p *protocol.ChatStartParams) { p.Model = " " }, "Settings"},
		{"no base url", func(p *protocol.ChatStartParams) { p.Provider.BaseURL = "" }, "Settings"},
		{"not http", func(p *protocol.ChatStartParams) { p.Provider.BaseURL = "ftp://x/v1" }, "Settings"},
		{"no host", func(p *protocol.ChatStartParams) { p.Provider.BaseURL = "http:///v1" }, "Settings"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			params := chatParams("http://127.0.0.1:1/v1")
			tt.mutate(&params)
			_, err := New(Options{}).Chat(context.Background(), params, newRecorder().emit)
			var rpcErr *protocol.Error
			if !errors.As(err, &rpcErr) || rpcErr.Code != protocol.CodeInvalidParams || rpcErr.Condition() != protocol.CondInvalidParams || !strings.Contains(rpcErr.Message, tt.want) {
				t.Fatalf("got %v", err)
			}
		})
	}
}

func TestChatCancelHangingStream(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.Turn{Chunks: []providertest.Chunk{{Reasoning: "hmm"}, {Text: "partial "}, {Text: "text"}}, HangAfter: true})
	rec := newRecorder()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		res protocol.ChatResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := New(Options{}).Chat(ctx, chatParams(p.BaseURL()), rec.emit)
		done <- out{res, err}
	}()
	rec.waitFrames(t, 3)
	start := time.Now()
	cancel()
	// The provider never sends more, and the idle timeout would end the call with an
	// error, not a cancelled result: the result below comes from the cancel.
	o := testwait.Recv(t, done, "the cancelled turn's result")
	t.Logf("cancel took %v", time.Since(start))
	if !p.AwaitRequests(1, true, testwait.Timeout) || !p.Requests()[0].Abandoned {
		t.Fatal("the cancel did not abort the HTTP request")
	}
	if o.err != nil {
		t.Fatalf("a cancelled turn returns a result, got %v", o.err)
	}
	want := protocol.ChatMessage{Role: "assistant", Content: "partial text", Reasoning: "hmm", Partial: true}
	if o.res.Status != protocol.StatusCancelled || !o.res.Partial || o.res.FinalResponse != "partial text" || len(o.res.Messages) != 1 || !sameRow(o.res.Messages[0], want) {
		t.Fatalf("result %+v", o.res)
	}
}

// TestChatCancelBeforeHeaders: a cancel while the provider has not yet sent its
// headers (it would in an hour) returns the cancelled result and aborts the request.
func TestChatCancelBeforeHeaders(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.Turn{HeaderDelay: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type out struct {
		res protocol.ChatResult
		err error
	}
	done := make(chan out, 1)
	go func() {
		res, err := New(Options{}).Chat(ctx, chatParams(p.BaseURL()), newRecorder().emit)
		done <- out{res, err}
	}()
	if !p.AwaitRequests(1, false, testwait.Timeout) {
		t.Fatal("the request did not reach the provider")
	}
	cancel()
	o := testwait.Recv(t, done, "the cancelled turn's result")
	res, err := o.res, o.err
	if err != nil {
		t.Fatal(err)
	}
	if !p.AwaitRequests(1, true, testwait.Timeout) || !p.Requests()[0].Abandoned {
		t.Fatal("the cancel did not abort the HTTP request")
	}
	b, _ := json.Marshal(res)
	if res.Status != protocol.StatusCancelled || !res.Partial || res.FinalResponse != "" || !strings.Contains(string(b), `"messages":[]`) {
		t.Fatalf("result %s", b)
	}
}

func TestChatStreamEdgeCases(t *testing.T) {
	tests := []struct {
		name string
		turn providertest.Turn
		want string
	}{
		{"no [DONE]", providertest.Turn{Chunks: []providertest.Chunk{{Text: "a"}}, OmitDone: true}, "a"},
		{"keep-alives and crlf", providertest.Turn{Chunks: []providertest.Chunk{
			{Raw: ": OPENROUTER PROCESSING\r\n\r\n"},
			{Raw: "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\r\n\r\n"},
			{Raw: "event: message\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":null}}]}\n\n"},
			{Raw: "data: {\"choices\":[{\"index\":1,\"delta\":{\"content\":\"ignored\"}}]}\n\n"},
			{Text: "y"},
		}}, "xy"},
		{"content parts", providertest.Turn{Chunks: []providertest.Chunk{
			{Raw: `data: {"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"p1"},{"type":"text","text":"p2"}]}}]}` + "\n\n"},
		}}, "p1p2"},
	}
	p := providertest.Start()
	defer p.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.Enqueue(tt.turn)
			res, err := New(Options{}).Chat(context.Background(), chatParams(p.BaseURL()), newRecorder().emit)
			if err != nil {
				t.Fatal(err)
			}
			if res.FinalResponse != tt.want {
				t.Fatalf("final %q, want %q", res.FinalResponse, tt.want)
			}
		})
	}

	t.Run("stream ends without finish", func(t *testing.T) {
		// providertest always sends a finish chunk; a raw server is needed for this case.
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"x"}}]}`+"\n\n")
		}))
		defer srv.Close()
		_, err := New(Options{}).Chat(context.Background(), chatParams(srv.URL+"/v1"), newRecorder().emit)
		var rpcErr *protocol.Error
		if !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondStreamInterrupted || rpcErr.Data.Partial != "x" || rpcErr.Data.HTTPStatus != 0 {
			t.Fatalf("got %v", err)
		}
	})

	t.Run("json answer to a stream request", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			io.WriteString(w, `{"choices":[{"message":{"content":"whole","reasoning_content":"r"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1}}`)
		}))
		defer srv.Close()
		rec := newRecorder()
		res, err := New(Options{}).Chat(context.Background(), chatParams(srv.URL+"/v1"), rec.emit)
		if err != nil {
			t.Fatal(err)
		}
		if res.FinalResponse != "whole" || res.Usage.InputTokens != 5 || len(rec.list()) != 3 {
			t.Fatalf("result %+v frames %q", res, rec.list())
		}
	})
}

func TestAuxComplete(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(providertest.TextTurn("A short ", "title"), providertest.ErrorTurn(401, "bad key"))
	rt := New(Options{})
	params := protocol.AuxCompleteParams{
		Task:      "title_generation",
		Messages:  []protocol.ChatMessage{{Role: "system", Content: "Title this."}, {Role: "user", Content: "hello"}},
		MaxTokens: 20,
		Model:     "scripted-model",
		Provider:  protocol.Provider{Name: "Scripted", BaseURL: p.BaseURL(), APIKey: "k"},
	}
	res, err := rt.Complete(context.Background(), params)
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "A short title" {
		t.Fatalf("text %q", res.Text)
	}
	req := p.Requests()[0]
	if req.Stream || req.MaxTokens != 20 || len(req.Messages) != 2 || req.Authorization != "Bearer k" {
		t.Fatalf("request %+v", req)
	}
	_, err = rt.Complete(context.Background(), params)
	var rpcErr *protocol.Error
	if !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondCredentialMissing {
		t.Fatalf("want credential_missing, got %v", err)
	}
	params.Model = ""
	if _, err := rt.Complete(context.Background(), params); !errors.As(err, &rpcErr) || rpcErr.Condition() != protocol.CondInvalidParams {
		t.Fatalf("want invalid_params, got %v", err)
	}

	p.Enqueue(providertest.Turn{HeaderDelay: time.Minute})
	params.Model = "m"
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := rt.Complete(ctx, params); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("want the context's error, got %v", err)
	}
}
