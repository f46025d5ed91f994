// Package providertest is a scripted OpenAI-compatible HTTP server on 127.0.0.1 for
// tests, the app's --selftest mode and manual runs (cmd/fakeprovider). It does not
// import "testing".
//
// Each POST {BaseURL}/chat/completions consumes the next queued Turn (FIFO); with an
// empty queue it answers with EchoTurn of the last user message. GET {BaseURL}/models
// lists the configured models. Every chat request is recorded for assertions.
package providertest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Server is a running scripted provider. Its methods are safe for concurrent use.
type Server struct {
	ln     net.Listener
	srv    *http.Server
	closed chan struct{}
	once   sync.Once

	mu       sync.Mutex
	resets   int // how many times Reset ran (requests recorded before one are forgotten)
	queue    []Turn
	requests []Request
	arrived  chan struct{} // closed and replaced when a request arrives or ends
	models   []string
	meta     map[string]ModelMeta // published model metadata (meta.go)
	served   int
	auxQueue []Turn // non-streaming requests' own queue when splitAux (control.go)
	splitAux bool

	gates gates // named gates chunks can wait on (control.go)
}

// Request is one received chat-completions request.
type Request struct {
	// Model, Messages, Stream, StreamOptions, Tools and MaxTokens are decoded from the
	// JSON body.
	Model         string          `json:"model"`
	Messages      []Message       `json:"messages"`
	Stream        bool            `json:"stream"`
	StreamOptions *StreamOptions  `json:"stream_options,omitempty"`
	Tools         json.RawMessage `json:"tools,omitempty"`
	MaxTokens     int             `json:"max_tokens,omitempty"`
	// Authorization is the request's Authorization header ("" when absent).
	Authorization string `json:"-"`
	// Body is the raw request body.
	Body json.RawMessage `json:"-"`
	// Abandoned is set when the client went away before the scripted answer was
	// written whole (a cancelled or restarted call). Ended is set once the answer is
	// over, whole or not.
	Abandoned bool `json:"-"`
	Ended     bool `json:"-"`
}

// StreamOptions is the request's stream_options.
type StreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// Message is one message of a request. Content holds a string content ("" for null);
// Raw is the whole message as sent (e.g. to assert a field is absent).
type Message struct {
	Role       string          `json:"role"`
	Content    string          `json:"-"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	Raw        json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the raw message and reads a string content; content parts are
// joined by their text.
func (m *Message) UnmarshalJSON(b []byte) error {
	type plain Message
	var v struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = Message(v.plain)
	m.Raw = append(json.RawMessage(nil), b...)
	var s string
	if json.Unmarshal(v.Content, &s) == nil {
		m.Content = s
		return nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(v.Content, &parts) == nil {
		for _, p := range parts {
			m.Content += p.Text
		}
	}
	return nil
}

// Start listens on a free port of 127.0.0.1 and serves. It panics when no port can be
// opened (like httptest.NewServer).
func Start() *Server {
	s, err := Listen("127.0.0.1:0")
	if err != nil {
		panic("providertest: " + err.Error())
	}
	return s
}

// Listen serves on addr (host:port). Errors: the listener's.
func Listen(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	s := &Server{ln: ln, closed: make(chan struct{}), arrived: make(chan struct{}), models: []string{"scripted-model"}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	s.routeControl(mux)
	s.routeMeta(mux)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) //nolint:errcheck // returns http.ErrServerClosed on Close
	return s, nil
}

// Close stops the server: hanging and delayed turns end, connections close. It is safe
// to call more than once.
func (s *Server) Close() {
	s.once.Do(func() {
		close(s.closed)
		s.srv.Close()
	})
}

// BaseURL is the provider's base URL, e.g. "http://127.0.0.1:40123/v1".
func (s *Server) BaseURL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Addr is the listening address, host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Enqueue appends turns to the queue; each chat request consumes one, first in first out.
func (s *Server) Enqueue(turns ...Turn) {
	s.mu.Lock()
	s.queue = append(s.queue, turns...)
	s.mu.Unlock()
}

// Pending returns the number of queued turns not yet consumed.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// Requests returns a copy of every chat request received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// AwaitRequests waits until n chat requests have arrived (ended: and their answers are
// over) or the timeout passes, and reports whether they did.
func (s *Server) AwaitRequests(n int, ended bool, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		count := 0
		for _, r := range s.requests {
			if !ended || r.Ended {
				count++
			}
		}
		ch := s.arrived
		s.mu.Unlock()
		if count >= n {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		case <-s.closed:
			return false
		}
	}
}

// noteLocked wakes AwaitRequests; s.mu must be held.
func (s *Server) noteLocked() {
	close(s.arrived)
	s.arrived = make(chan struct{})
}

// SetModels sets the model ids GET /v1/models lists (default ["scripted-model"]).
func (s *Server) SetModels(ids ...string) {
	s.mu.Lock()
	s.models = append([]string(nil), ids...)
	s.mu.Unlock()
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ids := append([]string(nil), s.models...)
	meta := map[string]ModelMeta{}
	for k, v := range s.meta {
		meta[k] = v
	}
	s.mu.Unlock()
	type arch struct {
		InputModalities []string `json:"input_modalities"`
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		OwnedBy string `json:"owned_by"`
		// OpenRouter's members, for models with metadata (meta.go).
		ContextLength       int64    `json:"context_length,omitempty"`
		Architecture        *arch    `json:"architecture,omitempty"`
		SupportedParameters []string `json:"supported_parameters,omitempty"`
	}
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list", Data: []model{}}
	for _, id := range ids {
		m := model{ID: id, Object: "model", OwnedBy: "providertest"}
		if mm, ok := meta[id]; ok {
			m.ContextLength = mm.ContextLength
			m.Architecture = &arch{InputModalities: []string{"text"}}
			if mm.Vision {
				m.Architecture.InputModalities = append(m.Architecture.InputModalities, "image")
			}
			m.SupportedParameters = []string{"max_tokens", "temperature", "tools"}
			if mm.Reasoning {
				m.SupportedParameters = append(m.SupportedParameters, "reasoning")
			}
		}
		list.Data = append(list.Data, m)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(list) //nolint:errcheck // the client went away
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(w, "read body: "+err.Error(), http.StatusBadRequest)
		return
	}
	req := Request{Authorization: r.Header.Get("Authorization"), Body: body}
	decodeErr := json.Unmarshal(body, &req)

	s.mu.Lock()
	s.requests = append(s.requests, req)
	idx := len(s.requests) - 1
	gen := s.resets
	s.noteLocked()
	var turn Turn
	queue := &s.queue
	if s.splitAux && decodeErr == nil && !req.Stream {
		queue = &s.auxQueue
	}
	if len(*queue) > 0 {
		turn = (*queue)[0]
		*queue = (*queue)[1:]
	} else {
		turn = EchoTurn(lastUser(req.Messages))
	}
	s.served++
	n := s.served
	s.mu.Unlock()

	complete := false
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		// A reset while this request ran forgot it: nothing to mark (its index may
		// be another request's now, or out of range).
		if s.resets != gen || idx >= len(s.requests) {
			return
		}
		s.requests[idx].Ended = true
		s.requests[idx].Abandoned = !complete && r.Context().Err() != nil
		s.noteLocked()
	}()
	if decodeErr != nil {
		writeJSON(w, http.StatusBadRequest, errorBody("invalid JSON body: "+decodeErr.Error()))
		complete = true
		return
	}
	if !s.wait(r, turn.HeaderDelay) {
		return
	}
	if turn.Drop {
		// Close the connection without a byte of answer: the client sees a reset.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0) //nolint:errcheck // best effort: a RST rather than a FIN
				}
				conn.Close()
			}
		}
		complete = true
		return
	}
	if turn.RetryAfter != "" {
		w.Header().Set("Retry-After", turn.RetryAfter)
	}
	for k, v := range turn.Header {
		w.Header().Set(k, v)
	}
	if turn.Status >= 400 {
		b := turn.Body
		if b == "" {
			b = errorBody(fmt.Sprintf("scripted error %d", turn.Status))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(turn.Status)
		io.WriteString(w, b) //nolint:errcheck // the client went away
		complete = true
		return
	}
	model := req.Model
	if model == "" {
		model = "scripted-model"
	}
	id := fmt.Sprintf("chatcmpl-providertest-%d", n)
	if !req.Stream {
		// A non-streaming answer is one body: it waits for every chunk's Wait or Gate
		// before it is written (a test holds, e.g., an agent's title call this way).
		for _, c := range turn.Chunks {
			wait := c.Wait
			if c.Gate != "" {
				wait = s.gates.get(c.Gate)
			}
			if wait != nil && !s.gate(r, wait) {
				return
			}
		}
		s.answerJSON(w, &turn, id, model)
		complete = true
		return
	}
	complete = s.stream(w, r, &turn, id, model)
}

// answerJSON writes a non-streaming chat.completion.
func (s *Server) answerJSON(w http.ResponseWriter, t *Turn, id, model string) {
	content, reasoning := t.text()
	msg := map[string]any{"role": "assistant", "content": content}
	if reasoning != "" {
		msg["reasoning_content"] = reasoning
	}
	finish := t.FinishReason
	if finish == "" {
		finish = "stop"
	}
	resp := map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if t.Usage != nil {
		resp["usage"] = usageJSON(t.Usage)
	}
	writeJSON(w, http.StatusOK, mustJSON(resp))
}

// flushEvery bounds how many undelayed chunks are buffered before a flush.
const flushEvery = 64

// stream writes the turn as Server-Sent Events. It reports whether the answer was
// written whole (a hanging or aborted turn never is).
func (s *Server) stream(w http.ResponseWriter, r *http.Request, t *Turn, id, model string) bool {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	bw := bufio.NewWriterSize(w, 32<<10)
	flush := func() bool {
		if bw.Flush() != nil {
			return false
		}
		return rc.Flush() == nil
	}
	enc := chunkEncoder{id: id, model: model, created: time.Now().Unix()}
	first := true
	sawTools := false
	pending := 0
	for _, c := range t.Chunks {
		if c.Delay > 0 {
			if !flush() || !s.wait(r, c.Delay) {
				return false
			}
			pending = 0
		}
		if c.Wait != nil || c.Gate != "" {
			wait := c.Wait
			if c.Gate != "" {
				wait = s.gates.get(c.Gate)
			}
			if !flush() || !s.gate(r, wait) {
				return false
			}
			pending = 0
		}
		if c.Raw != "" {
			bw.WriteString(c.Raw) //nolint:errcheck // a failed write shows on flush
		} else {
			bw.Write(enc.event(&c, first)) //nolint:errcheck
			first = false
		}
		sawTools = sawTools || len(c.ToolCalls) > 0
		if pending++; pending >= flushEvery {
			if !flush() {
				return false
			}
			pending = 0
		}
	}
	if t.Repeat > 0 {
		ev := enc.event(&Chunk{Text: t.RepeatText}, false)
		bw.Write(enc.event(&Chunk{Text: t.RepeatText}, first)) //nolint:errcheck
		for i := 1; i < t.Repeat; i++ {
			if _, err := bw.Write(ev); err != nil {
				return false
			}
			if i%(flushEvery*16) == 0 && !flush() {
				return false
			}
		}
	}
	if t.HangAfter {
		if flush() {
			s.wait(r, -1)
		}
		return false
	}
	if t.Abort {
		flush()
		panic(http.ErrAbortHandler)
	}
	if t.Verbatim {
		return flush()
	}
	finish := t.FinishReason
	if finish == "" {
		finish = "stop"
		if sawTools {
			finish = "tool_calls"
		}
	}
	bw.Write(enc.finish(finish)) //nolint:errcheck
	if t.Usage != nil {
		bw.Write(enc.usage(t.Usage)) //nolint:errcheck
	}
	if !t.OmitDone {
		bw.WriteString("data: [DONE]\n\n") //nolint:errcheck
	}
	return flush()
}

// wait sleeps d (forever when d < 0) unless the client goes away or the server closes;
// it reports whether the wait completed.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d == 0 {
		return true
	}
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-timer:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closed:
		return false
	}
}

// gate waits until ch is closed unless the client goes away or the server closes; it
// reports whether the gate opened.
func (s *Server) gate(r *http.Request, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	case <-s.closed:
		return false
	}
}

// chunkEncoder builds chat.completion.chunk events.
type chunkEncoder struct {
	id, model string
	created   int64
}

type wireToolCall struct {
	Index    int             `json:"index"`
	ID       string          `json:"id,omitempty"`
	Type     string          `json:"type,omitempty"`
	Function *wireToolCallFn `json:"function,omitempty"`
}

type wireToolCallFn struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

func (e *chunkEncoder) envelope(choices []any, usage *Usage) []byte {
	m := map[string]any{"id": e.id, "object": "chat.completion.chunk", "created": e.created, "model": e.model, "choices": choices}
	if usage != nil {
		m["usage"] = usageJSON(usage)
	}
	return append(append([]byte("data: "), mustJSON(m)...), "\n\n"...)
}

func (e *chunkEncoder) event(c *Chunk, first bool) []byte {
	delta := map[string]any{}
	if first {
		delta["role"] = "assistant"
	}
	if c.Text != "" {
		delta["content"] = c.Text
	}
	if c.Reasoning != "" {
		field := c.ReasoningField
		if field == "" {
			field = "reasoning_content"
		}
		delta[field] = c.Reasoning
	}
	if len(c.ToolCalls) > 0 {
		calls := make([]wireToolCall, 0, len(c.ToolCalls))
		for _, tc := range c.ToolCalls {
			wc := wireToolCall{Index: tc.Index, ID: tc.ID}
			if tc.ID != "" {
				wc.Type = "function"
			}
			if tc.Name != "" || tc.Arguments != "" {
				wc.Function = &wireToolCallFn{Name: tc.Name, Arguments: tc.Arguments}
			}
			calls = append(calls, wc)
		}
		delta["tool_calls"] = calls
	}
	var choices []any
	if len(delta) > 0 || c.Usage == nil {
		choices = []any{map[string]any{"index": 0, "delta": delta, "finish_reason": nil}}
	} else {
		choices = []any{}
	}
	return e.envelope(choices, c.Usage)
}

func (e *chunkEncoder) finish(reason string) []byte {
	return e.envelope([]any{map[string]any{"index": 0, "delta": map[string]any{}, "finish_reason": reason}}, nil)
}

func (e *chunkEncoder) usage(u *Usage) []byte { return e.envelope([]any{}, u) }

func usageJSON(u *Usage) map[string]any {
	m := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
	}
	if u.CachedTokens > 0 {
		m["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CachedTokens}
	}
	if u.Cost != nil {
		m["cost"] = *u.Cost
	}
	return m
}

func lastUser(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return msgs[i].Content
		}
	}
	return ""
}

func errorBody(message string) string {
	return string(mustJSON(map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error", "code": nil}}))
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	switch b := body.(type) {
	case string:
		io.WriteString(w, b) //nolint:errcheck
	case []byte:
		w.Write(b) //nolint:errcheck
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(errors.New("providertest: " + err.Error()))
	}
	return b
}
