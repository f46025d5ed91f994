package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"
	"time"

	"talaria/sidecar/protocol"
)

// One model call of a turn as it streams: the request, the idle watch on the body, the
// chunks as they arrive (deltas become frames), a whole (non-streamed) answer read as
// one chunk, and the errors of a stream that breaks or ends without a finish reason.

// stream runs one streamed completion into s, emitting frames as deltas arrive. The
// call ends with a stream_interrupted error when nothing arrives for the idle timeout
// (waiting for the headers included), when the connection breaks, or when the stream
// ends ([DONE] or the end of the body) without a finish reason; only a failure before
// any byte of the body is a reset the caller may retry.
func (t *turn) stream(ctx context.Context, s *step) error {
	req := &chatRequest{
		Model:         t.ep.model,
		Messages:      t.messages,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
		Tools:         t.tools,
	}
	if len(t.tools) > 0 {
		req.ToolChoice = "auto"
	}
	applyOptions(req, t.ep.dialect, t.p.MaxOutputTokens, t.p.ReasoningEffort)
	idle := t.idleTimeout()
	sctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	watch := t.r.idleTimer(idle, func() { stop(errIdle) })
	defer watch.Stop()
	idled := func() bool { return ctx.Err() == nil && errors.Is(context.Cause(sctx), errIdle) }

	resp, err := t.r.post(sctx, t.ep, req)
	if err != nil {
		if idled() {
			return t.idleError(idle, false)
		}
		return err
	}
	defer resp.Body.Close()
	body := &watchedBody{r: resp.Body, watch: watch, idle: idle}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// A server that ignores "stream": true answers with one completion.
		err := t.whole(body, s)
		if err != nil && idled() {
			return t.idleError(idle, body.got)
		}
		return err
	}
	sse := newSSEReader(body)
	for {
		data, err := sse.Next()
		if errors.Is(err, io.EOF) {
			if s.finish != "" {
				return nil
			}
			if !body.got {
				// Closed before a byte of the answer: a reset, retried.
				return &attemptError{err: t.ep.failure(protocol.CondStreamInterrupted, t.ep.name+" closed the connection before it answered."), reset: true}
			}
			return t.incomplete("the stream ended")
		}
		if err != nil {
			if idled() {
				return t.idleError(idle, body.got)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &attemptError{err: t.ep.failure(protocol.CondStreamInterrupted,
				fmt.Sprintf("The connection to %s broke before the answer was finished: %s", t.ep.name, sentence(shortNetError(err)))), reset: !body.got}
		}
		data = strings.TrimSpace(data)
		if sse.Event == "error" {
			// llama.cpp's "error: {...}" or an "event: error": the provider's own failure.
			return t.eventError(data)
		}
		if data == "" {
			continue
		}
		if data == "[DONE]" {
			s.done = true
			if s.finish == "" {
				return t.incomplete("the stream ended with [DONE]")
			}
			return nil
		}
		var c streamChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			msg, _ := providerMessage([]byte(data))
			return t.ep.failure(protocol.CondProviderError, fmt.Sprintf("%s sent a stream event that is not a chat completion chunk: %s", t.ep.name, sentence(msg)))
		}
		if err := t.chunk(&c, s); err != nil {
			return err
		}
	}
}

// errIdle is the cause of a model call cancelled by the idle timeout.
var errIdle = errors.New("stream idle timeout")

// idleTimeout is chat.start's stream_idle_timeout_s, else the default (120 s).
func (t *turn) idleTimeout() time.Duration {
	if t.p.StreamIdleTimeoutS > 0 {
		return time.Duration(t.p.StreamIdleTimeoutS) * time.Second
	}
	if t.r.idleTimeout > 0 {
		return t.r.idleTimeout
	}
	return protocol.DefaultStreamIdleTimeoutS * time.Second
}

// idleError is the error of a call that sent nothing for the idle timeout. It is never
// retried: the wait was long already, and a retry would begin it again.
func (t *turn) idleError(idle time.Duration, got bool) error {
	what := "did not start answering"
	if got {
		what = "stopped sending"
	}
	return t.ep.failure(protocol.CondStreamInterrupted, fmt.Sprintf(
		"%s %s: nothing arrived for %s, so the answer was given up (the stream idle timeout, in Settings).", t.ep.name, what, roundWait(idle)))
}

// incomplete is the error of a stream that ended without a finish reason: the answer
// may be cut, so it is not shown as a finished one. (An error the provider sent on the
// way, as an error object or an error event, ended the call with its own words before.)
func (t *turn) incomplete(how string) error {
	return t.ep.failure(protocol.CondStreamInterrupted,
		fmt.Sprintf("%s stopped before the answer was finished: %s without a finish reason.", t.ep.name, how))
}

// eventError maps the data of an error event: a JSON error object (or a body with an
// "error" member), else its text.
func (t *turn) eventError(data string) error {
	raw := json.RawMessage(data)
	if !json.Valid(raw) {
		raw, _ = json.Marshal(data)
	} else {
		var v struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(raw, &v) == nil && len(v.Error) > 0 && string(v.Error) != "null" {
			raw = v.Error
		}
	}
	e, status := t.ep.streamError(raw)
	return &attemptError{err: e, status: status}
}

// watchedBody is a response body that pushes back the idle timeout on every byte read
// and remembers whether any came.
type watchedBody struct {
	r     io.Reader
	watch idleWatch
	idle  time.Duration
	got   bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.got = true
		b.watch.Reset(b.idle)
	}
	return n, err
}

// truncatedReason maps a finish_reason that cut the answer to TruncatedLength or
// TruncatedContentFilter ("" for any other): "length" (OpenAI and all compatible
// servers), "max_tokens"/"max_output_tokens" (Anthropic-style and some proxies),
// "content_filter", "safety" and "recitation" (Gemini's OpenAI layer), "refusal".
func truncatedReason(finish string) string {
	switch strings.ToLower(finish) {
	case "length", "max_tokens", "max_output_tokens", "model_length":
		return protocol.TruncatedLength
	case "content_filter", "safety", "recitation", "refusal", "prohibited_content", "blocklist", "spii":
		return protocol.TruncatedContentFilter
	}
	return ""
}

// chunk applies one stream chunk: frames for its deltas, tool-call pieces, usage.
func (t *turn) chunk(c *streamChunk, s *step) error {
	if len(c.Error) > 0 && string(c.Error) != "null" {
		e, status := t.ep.streamError(c.Error)
		return &attemptError{err: e, status: status}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // one answer is asked for; ignore extra choices
		}
		if r := ch.Delta.reasoning(); r != "" {
			s.streamed = true
			t.reasoning(s, r)
		}
		if text := string(ch.Delta.Content); text != "" {
			s.streamed = true
			r, a := s.think.feed(text) // reasoning written inline, in <think> (think.go)
			t.reasoning(s, r)
			t.answer(s, a)
		}
		if len(ch.Delta.ToolCalls) > 0 && len(s.tools.calls) == 0 {
			// The first tool call: from here the call cannot be restarted for a steer.
			s.streamed = true
			if t.sawToolCall() {
				return errRestart
			}
		}
		for _, d := range ch.Delta.ToolCalls {
			s.tools.add(d)
		}
		if ch.Usage != nil && c.Usage == nil {
			c.Usage = ch.Usage // Moonshot and a few others put usage in the choice
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
			if s.finish == "error" {
				return t.ep.failure(protocol.CondProviderError, t.ep.name+" ended the answer with an error (finish_reason \"error\").")
			}
		}
	}
	u := c.Usage
	if u == nil && c.XGroq != nil {
		u = c.XGroq.Usage // Groq: {"x_groq":{"usage":{...}}} in the last chunk
	}
	if u != nil {
		s.usage = u.usage()
		s.hasUsage = true
		t.send(protocol.EvUsage, t.usage.Add(s.usage))
	}
	return nil
}

// reasoning adds text to the model call's reasoning and sends it as a reasoning frame.
func (t *turn) reasoning(s *step, text string) {
	if text == "" {
		return
	}
	s.reasoning.WriteString(text)
	t.send(protocol.EvReasoning, protocol.TextData{Text: text})
}

// answer adds text to the model call's answer and sends it as a token frame.
func (t *turn) answer(s *step, text string) {
	if text == "" {
		return
	}
	s.content.WriteString(text)
	t.send(protocol.EvToken, protocol.TextData{Text: text})
}

// endContent gives out what the inline-reasoning split still holds once the model
// call's stream is over (finished, broken or cancelled): nothing of the text is lost.
//
// An answer that closed a reasoning block it never opened (think.go closeOnly: the
// model's template opened it) is split then, in the model call's saved row and what
// goes back to the model; its text streamed as the answer (the window reads the saved
// row at the turn's end). A model call that sent reasoning apart (reasoning_content)
// has a parser: a </think> in its answer is the answer's own.
func (t *turn) endContent(s *step) {
	r, a := s.think.flush()
	t.reasoning(s, r)
	t.answer(s, a)
	if s.think.opened || s.reasoning.Len() > 0 {
		return
	}
	if r, a, ok := closeOnly(s.content.String()); ok {
		s.reasoning.Reset()
		s.reasoning.WriteString(r)
		s.content.Reset()
		s.content.WriteString(a)
	}
}

// whole reads a non-streamed completion body into s, emitting its text as one frame each.
func (t *turn) whole(body io.Reader, s *step) error {
	data, err := io.ReadAll(io.LimitReader(body, 32<<20))
	if err != nil {
		return t.ep.failure(protocol.CondStreamInterrupted, fmt.Sprintf("The connection to %s broke while it answered: %s", t.ep.name, sentence(shortNetError(err))))
	}
	var resp completionResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		msg, _ := providerMessage(data)
		return t.ep.failure(protocol.CondProviderError, fmt.Sprintf("%s sent an answer that is not a chat completion: %s", t.ep.name, sentence(msg)))
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		e, status := t.ep.streamError(resp.Error)
		return &attemptError{err: e, status: status}
	}
	if len(resp.Choices) == 0 {
		return t.ep.failure(protocol.CondProviderError, t.ep.name+" sent an answer without choices.")
	}
	m := resp.Choices[0].Message
	chunk := streamChunk{Choices: []chunkChoice{{Delta: wireDelta{
		Content: m.Content, ReasoningContent: m.ReasoningContent, Reasoning: m.Reasoning, ToolCalls: m.ToolCalls,
	}}}, Usage: resp.Usage, XGroq: resp.XGroq}
	finish := resp.Choices[0].FinishReason
	if finish == "" {
		finish = "stop"
	}
	chunk.Choices[0].FinishReason = &finish
	return t.chunk(&chunk, s)
}
