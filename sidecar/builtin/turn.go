package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"strings"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/server"
)

// Chat runs chat.start: the agent loop for one user message. It streams token,
// reasoning and usage frames through emit and returns the turn's result.
//
// Result: status completed with messages = [assistant {content, reasoning}]; or, when
// ctx is cancelled (by $/cancel or the drain), status cancelled with partial true,
// final_response = the visible text so far and messages = [assistant {partial text}]
// (empty when no text had streamed). Errors (never both a result and an error): a
// *protocol.Error with code -32602 invalid_params for a missing model or base URL, or
// code -32000 with a provider condition (see endpoint.httpError, networkError); after
// text streamed, data.partial carries it.
//
// The loop is shaped for tool calling: each step is one streamed completion whose
// tool-call deltas are assembled; a later version offers tools, runs the calls and
// loops. This version offers none, so a step that asks for tools still ends the turn.
func (r *Runtime) Chat(ctx context.Context, p protocol.ChatStartParams, emit server.EmitFunc) (protocol.ChatResult, error) {
	ep, err := newEndpoint(p.Model, p.Provider)
	if err != nil {
		return protocol.ChatResult{}, err
	}
	t := &turn{
		r:    r,
		ep:   ep,
		emit: emit,
		log:  r.log.With("session_id", p.SessionID, "stream_id", p.StreamID, "provider", ep.name, "model", ep.model),
	}
	t.messages = buildMessages(p)
	start := time.Now()
	t.log.Info("turn started", "base_url", ep.baseURL, "history", len(p.ConversationHistory))
	res, err := t.run(ctx)
	if err != nil {
		t.log.Info("turn failed", "condition", conditionOf(err), "took", time.Since(start).Round(time.Millisecond))
		return protocol.ChatResult{}, err
	}
	t.log.Info("turn ended", "status", res.Status, "input_tokens", res.Usage.InputTokens,
		"output_tokens", res.Usage.OutputTokens, "took", time.Since(start).Round(time.Millisecond))
	return res, nil
}

// buildMessages is what the provider gets: the system prompt (system_message, then the
// ephemeral_system_prompt, joined by a blank line), the history, the user message.
func buildMessages(p protocol.ChatStartParams) []wireMessage {
	msgs := make([]wireMessage, 0, len(p.ConversationHistory)+2)
	var sys []string
	for _, s := range []string{p.SystemMessage, p.EphemeralSystemPrompt} {
		if strings.TrimSpace(s) != "" {
			sys = append(sys, s)
		}
	}
	if len(sys) > 0 {
		content := strings.Join(sys, "\n\n")
		msgs = append(msgs, wireMessage{Role: "system", Content: &content})
	}
	for _, m := range p.ConversationHistory {
		if m.Role == "" {
			continue
		}
		msgs = append(msgs, toWire(m))
	}
	user := p.UserMessage
	return append(msgs, wireMessage{Role: "user", Content: &user})
}

// turn is the state of one chat.start.
type turn struct {
	r    *Runtime
	ep   *endpoint
	emit server.EmitFunc
	log  *slog.Logger

	messages []wireMessage          // sent to the provider; grows with each step
	rows     []protocol.ChatMessage // the turn's finished rows (tool loop: assistant calls, tool results)
	usage    protocol.Usage         // summed over finished steps
	lastIn   int64                  // prompt tokens of the last step
	emitErr  bool
}

// step is one streamed completion.
type step struct {
	content   strings.Builder
	reasoning strings.Builder
	tools     toolAccumulator
	finish    string
	usage     protocol.Usage
	hasUsage  bool
	done      bool // [DONE] seen
}

func (t *turn) run(ctx context.Context) (protocol.ChatResult, error) {
	// One step per model call. The tool-calling loop will go here: while a step ends with
	// tool calls (and tools were offered), append the assistant row with its calls and
	// one tool row per result to t.rows and t.messages, then stream the next step.
	s := &step{}
	err := t.stream(ctx, s)
	if s.hasUsage {
		t.usage = t.usage.Add(s.usage)
		t.lastIn = s.usage.InputTokens
	}
	if err != nil {
		if ctx.Err() != nil {
			return t.cancelled(s), nil
		}
		return protocol.ChatResult{}, t.failed(s, err)
	}
	if calls := s.tools.result(); len(calls) > 0 {
		// No tools are offered yet, so a model asking for one ends the turn with its text.
		t.log.Warn("the model asked for tools, but none are offered; ending the turn", "calls", len(calls))
	}
	row := protocol.ChatMessage{Role: "assistant", Content: s.content.String(), Reasoning: s.reasoning.String()}
	t.rows = append(t.rows, row)
	return t.result(protocol.StatusCompleted, row.Content), nil
}

func (t *turn) result(status, final string) protocol.ChatResult {
	rows := t.rows
	if rows == nil {
		rows = []protocol.ChatMessage{}
	}
	return protocol.ChatResult{
		Status:        status,
		Messages:      rows,
		FinalResponse: final,
		Usage:         t.usage,
		Context:       protocol.ContextInfo{LastPromptTokens: t.lastIn},
		Model:         t.ep.model,
		Provider:      t.ep.name,
	}
}

// cancelled is the result of a cancelled turn: the step's visible text so far.
func (t *turn) cancelled(s *step) protocol.ChatResult {
	text := s.content.String()
	if text != "" {
		t.rows = append(t.rows, protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: s.reasoning.String()})
	}
	res := t.result(protocol.StatusCancelled, text)
	res.Partial = true
	t.log.Info("turn cancelled", "partial_chars", len(text))
	return res
}

// failed decorates a step's error with the partial text and the finished rows.
func (t *turn) failed(s *step, err error) error {
	var rpcErr *protocol.Error
	if !errors.As(err, &rpcErr) {
		rpcErr = t.ep.failure(protocol.CondProviderError, fmt.Sprintf("%s: %v", t.ep.name, err))
	}
	if rpcErr.Data == nil {
		rpcErr.Data = &protocol.ErrorData{Condition: protocol.CondProviderError}
	}
	rpcErr.Data.Partial = s.content.String()
	rpcErr.Data.Messages = t.rows
	return rpcErr
}

// stream runs one streamed completion into s, emitting frames as deltas arrive.
func (t *turn) stream(ctx context.Context, s *step) error {
	resp, err := t.r.post(ctx, t.ep, &chatRequest{
		Model:         t.ep.model,
		Messages:      t.messages,
		Stream:        true,
		StreamOptions: &streamOptions{IncludeUsage: true},
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// A server that ignores "stream": true answers with one completion.
		return t.whole(resp.Body, s)
	}
	sse := newSSEReader(resp.Body)
	for {
		data, err := sse.Next()
		if errors.Is(err, io.EOF) {
			if s.done || s.finish != "" {
				return nil
			}
			return t.ep.failure(protocol.CondProviderError, t.ep.name+" ended the stream before the answer was finished")
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return t.ep.failure(protocol.CondProviderError, fmt.Sprintf("the stream from %s broke: %s", t.ep.name, shortNetError(err)))
		}
		data = strings.TrimSpace(data)
		if data == "" {
			continue
		}
		if data == "[DONE]" {
			s.done = true
			return nil
		}
		var c streamChunk
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			msg, _ := providerMessage([]byte(data))
			return t.ep.failure(protocol.CondProviderError, fmt.Sprintf("%s sent a stream event that is not a chat completion chunk: %s", t.ep.name, msg))
		}
		if err := t.chunk(&c, s); err != nil {
			return err
		}
	}
}

// chunk applies one stream chunk: frames for its deltas, tool-call pieces, usage.
func (t *turn) chunk(c *streamChunk, s *step) error {
	if len(c.Error) > 0 && string(c.Error) != "null" {
		return t.ep.streamError(c.Error)
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // one answer is asked for; ignore extra choices
		}
		if r := ch.Delta.reasoning(); r != "" {
			s.reasoning.WriteString(r)
			t.send(protocol.EvReasoning, protocol.TextData{Text: r})
		}
		if text := string(ch.Delta.Content); text != "" {
			s.content.WriteString(text)
			t.send(protocol.EvToken, protocol.TextData{Text: text})
		}
		for _, d := range ch.Delta.ToolCalls {
			s.tools.add(d)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = *ch.FinishReason
			if s.finish == "error" {
				return t.ep.failure(protocol.CondProviderError, t.ep.name+" ended the answer with an error")
			}
		}
	}
	if c.Usage != nil {
		s.usage = c.Usage.usage()
		s.hasUsage = true
		t.send(protocol.EvUsage, t.usage.Add(s.usage))
	}
	return nil
}

// whole reads a non-streamed completion body into s, emitting its text as one frame each.
func (t *turn) whole(body io.Reader, s *step) error {
	data, err := io.ReadAll(io.LimitReader(body, 32<<20))
	if err != nil {
		return fmt.Errorf("read answer: %w", err)
	}
	var resp completionResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		msg, _ := providerMessage(data)
		return t.ep.failure(protocol.CondProviderError, fmt.Sprintf("%s sent an answer that is not a chat completion: %s", t.ep.name, msg))
	}
	if len(resp.Error) > 0 && string(resp.Error) != "null" {
		return t.ep.streamError(resp.Error)
	}
	if len(resp.Choices) == 0 {
		return t.ep.failure(protocol.CondProviderError, t.ep.name+" sent an answer without choices")
	}
	m := resp.Choices[0].Message
	chunk := streamChunk{Choices: []chunkChoice{{Delta: wireDelta{
		Content: m.Content, ReasoningContent: m.ReasoningContent, Reasoning: m.Reasoning, ToolCalls: m.ToolCalls,
	}}}, Usage: resp.Usage}
	finish := resp.Choices[0].FinishReason
	if finish == "" {
		finish = "stop"
	}
	chunk.Choices[0].FinishReason = &finish
	return t.chunk(&chunk, s)
}

// send emits a frame. A write failure means the host is gone; the drain that follows
// cancels the turn, so it is logged once and otherwise ignored.
func (t *turn) send(event string, data any) {
	if err := t.emit(event, data); err != nil && !t.emitErr {
		t.emitErr = true
		t.log.Warn("sending a frame failed", "event", event, "err", err)
	}
}
