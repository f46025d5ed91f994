package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"talaria/sidecar/protocol"
)

// The OpenAI chat-completions wire shapes this runtime sends and reads. Decoding is
// lenient: the endpoints it talks to (Ollama, llama.cpp, LM Studio, vLLM, OpenAI,
// OpenRouter) differ in small ways, and a field of an unexpected type is ignored rather
// than failing a turn.

// chatRequest is the body of POST {base_url}/chat/completions.
type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []wireMessage  `json:"messages"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	MaxTokens     int            `json:"max_tokens,omitempty"`
	// MaxCompletionTokens is OpenAI's name for max_tokens (its reasoning models refuse
	// max_tokens); sent instead of it to OpenAI.
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
	// ReasoningEffort is OpenAI's reasoning_effort (also read by Ollama, LM Studio and
	// vLLM); Reasoning is OpenRouter's form of it.
	ReasoningEffort string           `json:"reasoning_effort,omitempty"`
	Reasoning       *reasoningOption `json:"reasoning,omitempty"`
	// Tools are the offered tools' JSON schemas; ToolChoice is "auto" when there are any.
	Tools      []json.RawMessage `json:"tools,omitempty"`
	ToolChoice string            `json:"tool_choice,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// reasoningOption is OpenRouter's request member "reasoning"
// (https://openrouter.ai/docs/use-cases/reasoning-tokens): effort low, medium or high;
// Exclude is unused (the reasoning is shown to the user).
type reasoningOption struct {
	Effort  string `json:"effort,omitempty"`
	Enabled *bool  `json:"enabled,omitempty"`
}

// wireMessage is a message as sent to a provider: protocol.ChatMessage without the
// Reasoning extension, which is never sent back. Content is a string, a list of content
// parts (text and image_url only: image_file parts are read and sent as data: URLs), or
// nil (null) for an assistant message that only calls tools.
type wireMessage struct {
	Role       string              `json:"role"`
	Content    any                 `json:"content"`
	ToolCalls  []protocol.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string              `json:"tool_call_id,omitempty"`
	Name       string              `json:"name,omitempty"`
}

// toWire converts a text-only message (history rows with parts go through
// wireParts first, see buildMessages).
func toWire(m protocol.ChatMessage) wireMessage {
	w := wireMessage{Role: m.Role, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name}
	if m.Role == "tool" {
		w.Name = "" // not part of the tool message shape; strict servers refuse it
	}
	if m.Content != "" || len(m.ToolCalls) == 0 {
		w.Content = m.Content
	}
	return w
}

// streamChunk is one chat.completion.chunk event.
type streamChunk struct {
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *wireUsage    `json:"usage"`
	// Error is set when a provider reports a failure mid-stream (OpenRouter sends
	// {"error":{"message","code"}} as a data event).
	Error json.RawMessage `json:"error"`
	// XGroq is Groq's extension; its usage comes in the last chunk
	// (https://console.groq.com/docs/openai).
	XGroq *xGroq `json:"x_groq"`
}

// xGroq is Groq's x_groq member of a chunk or completion.
type xGroq struct {
	Usage *wireUsage `json:"usage"`
}

type chunkChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
	// Usage in a choice: Moonshot's (and a few others') place for the counters.
	Usage *wireUsage `json:"usage"`
}

type wireDelta struct {
	Content          flexText        `json:"content"`
	ReasoningContent flexText        `json:"reasoning_content"` // llama.cpp, DeepSeek, vLLM
	Reasoning        flexText        `json:"reasoning"`         // Ollama, OpenRouter
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

// reasoning returns the delta's reasoning text; when a provider sends both fields it
// sends the same text twice, so reasoning_content wins.
func (d *wireDelta) reasoning() string {
	if d.ReasoningContent != "" {
		return string(d.ReasoningContent)
	}
	return string(d.Reasoning)
}

// completionResponse is a non-streaming chat.completion body.
type completionResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content          flexText        `json:"content"`
			ReasoningContent flexText        `json:"reasoning_content"`
			Reasoning        flexText        `json:"reasoning"`
			ToolCalls        []toolCallDelta `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
	XGroq *xGroq          `json:"x_groq"`
}

// wireUsage are a provider's token counters.
type wireUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens     int64 `json:"cached_tokens"`
		CacheWriteTokens int64 `json:"cache_write_tokens"` // OpenRouter
	} `json:"prompt_tokens_details"`
	// PromptCacheHitTokens is DeepSeek's name for cached prompt tokens.
	PromptCacheHitTokens int64 `json:"prompt_cache_hit_tokens"`
	// Cost is what the call cost, in US dollars (OpenRouter's credits), when the
	// provider says (OpenRouter: https://openrouter.ai/docs/use-cases/usage-accounting).
	Cost *flexNumber `json:"cost"`
}

// usage converts to the protocol's counters. InputTokens is the provider's
// prompt_tokens, which for OpenAI-compatible providers includes the cached tokens.
func (u *wireUsage) usage() protocol.Usage {
	out := protocol.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CacheReadTokens = u.PromptTokensDetails.CachedTokens
		out.CacheWriteTokens = u.PromptTokensDetails.CacheWriteTokens
	}
	if out.CacheReadTokens == 0 {
		out.CacheReadTokens = u.PromptCacheHitTokens
	}
	if u.Cost != nil && *u.Cost >= 0 {
		out.EstimatedCost = float64(*u.Cost)
		out.CostReported = true
	}
	return out
}

// flexNumber decodes a JSON number or a string holding one; anything else is -1 (no
// figure).
type flexNumber float64

func (f *flexNumber) UnmarshalJSON(b []byte) error {
	*f = -1
	s := strings.Trim(string(b), `"`)
	if v, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
		*f = flexNumber(v)
	}
	return nil
}

// flexText decodes a JSON string; null and values of other types decode as "", and an
// array of content parts as the concatenation of their "text" members.
type flexText string

func (f *flexText) UnmarshalJSON(b []byte) error {
	*f = ""
	switch {
	case len(b) == 0:
	case b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err == nil {
			*f = flexText(s)
		}
	case b[0] == '[':
		var parts []struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(b, &parts) == nil {
			var buf bytes.Buffer
			for _, p := range parts {
				buf.WriteString(p.Text)
			}
			*f = flexText(buf.String())
		}
	}
	return nil
}

// toolCallDelta is one element of delta.tool_calls: pieces of a tool call, keyed by
// Index, streamed over several chunks (id and name first, then argument fragments).
type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string   `json:"name"`
		Arguments flexArgs `json:"arguments"`
	} `json:"function"`
}

// flexArgs decodes tool-call arguments: a JSON string (the OpenAI shape) as its text, an
// object (as some servers send) as its JSON text.
type flexArgs string

func (f *flexArgs) UnmarshalJSON(b []byte) error {
	*f = ""
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	if b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err == nil {
			*f = flexArgs(s)
		}
		return nil
	}
	*f = flexArgs(b)
	return nil
}

// toolAccumulator assembles streamed tool-call deltas into whole calls.
type toolAccumulator struct {
	calls []accCall
}

// accCall is one call being assembled: index is the provider's index (-1 when its
// first delta had none), seq the order it was first seen in.
type accCall struct {
	index int
	seq   int
	call  protocol.ToolCall
}

// add merges one delta. A delta is matched by id first: an id seen before continues
// that call, a new id starts a call even at an index already used (Ollama sends each
// of several parallel calls whole, each with its own id, all at index 0). Only a delta
// without an id is matched by index: the latest call at that index, or, without an
// index, the last call.
func (a *toolAccumulator) add(d toolCallDelta) {
	var c *accCall
	switch {
	case d.ID != "":
		for i := range a.calls {
			if a.calls[i].call.ID == d.ID {
				c = &a.calls[i]
				break
			}
		}
		if c == nil && d.Index != nil {
			// The id may come after a first delta of the same call without one.
			if l := a.latestAt(*d.Index); l != nil && l.call.ID == "" {
				c = l
			}
		}
	case d.Index != nil:
		c = a.latestAt(*d.Index)
	case len(a.calls) > 0:
		c = &a.calls[len(a.calls)-1]
	}
	if c == nil {
		idx := -1
		if d.Index != nil {
			idx = *d.Index
		} else {
			for _, x := range a.calls {
				idx = max(idx, x.index)
			}
			idx++
		}
		a.calls = append(a.calls, accCall{index: idx, seq: len(a.calls)})
		c = &a.calls[len(a.calls)-1]
	}
	if d.ID != "" {
		c.call.ID = d.ID
	}
	if d.Type != "" {
		c.call.Type = d.Type
	}
	// Most providers send the name once; a few repeat it whole in every delta, and a few
	// stream it in pieces.
	if name := d.Function.Name; name != "" && name != c.call.Function.Name {
		c.call.Function.Name += name
	}
	c.call.Function.Arguments += string(d.Function.Arguments)
}

// latestAt returns the call last started at a provider index, or nil.
func (a *toolAccumulator) latestAt(index int) *accCall {
	for i := len(a.calls) - 1; i >= 0; i-- {
		if a.calls[i].index == index {
			return &a.calls[i]
		}
	}
	return nil
}

// result returns the assembled calls ordered by index (calls at one index in the order
// they came), each with a type ("function") and an id (call_<position> when the
// provider sent none).
func (a *toolAccumulator) result() []protocol.ToolCall {
	if len(a.calls) == 0 {
		return nil
	}
	sorted := append([]accCall(nil), a.calls...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].index != sorted[j].index {
			return sorted[i].index < sorted[j].index
		}
		return sorted[i].seq < sorted[j].seq
	})
	out := make([]protocol.ToolCall, len(sorted))
	for i, c := range sorted {
		out[i] = c.call
		if out[i].Type == "" {
			out[i].Type = "function"
		}
		if out[i].ID == "" {
			out[i].ID = fmt.Sprintf("call_%d", i)
		}
	}
	return out
}
