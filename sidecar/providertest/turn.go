package providertest

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Turn scripts the answer to one POST /v1/chat/completions.
//
// A streaming answer (the request's "stream": true) is sent as Server-Sent Events in this
// order: Chunks, then Repeat copies of a RepeatText token chunk, then (unless HangAfter
// or Abort) a chunk carrying FinishReason, a usage chunk when Usage is set, and
// "data: [DONE]" unless OmitDone. A non-streaming answer is one chat.completion JSON body
// whose message content is the turn's joined text (Text of every chunk, then the repeats).
//
// In a script file (LoadScript) durations are written as milliseconds: header_delay_ms
// and a chunk's delay_ms.
type Turn struct {
	// Status is the HTTP status; 0 means 200. At 400 or above the turn is an error:
	// Body (default {"error":{"message":"scripted error <status>",...}}) is sent as
	// application/json and nothing is streamed.
	Status int `json:"status,omitempty"`
	// Body is the error body, sent verbatim when Status >= 400.
	Body string `json:"body,omitempty"`
	// RetryAfter is the Retry-After header value ("2" or an HTTP date), sent when set.
	RetryAfter string `json:"retry_after,omitempty"`
	// Header are more response headers (e.g. x-ratelimit-reset-requests), sent with an
	// error or a streamed answer.
	Header map[string]string `json:"header,omitempty"`
	// Drop closes the connection (after HeaderDelay) without writing a byte: the client
	// sees a reset before any answer.
	Drop bool `json:"drop,omitempty"`
	// HeaderDelay is a wait before the response headers are written.
	HeaderDelay time.Duration `json:"-"`
	// Chunks are streamed in order.
	Chunks []Chunk `json:"chunks,omitempty"`
	// Repeat streams RepeatText this many times as token chunks after Chunks, cheaply
	// (one encoding, buffered writes): for benchmarks.
	Repeat     int    `json:"repeat,omitempty"`
	RepeatText string `json:"repeat_text,omitempty"`
	// HangAfter stops after Chunks and the repeats without ending the stream: the
	// connection stays open until the client goes away or the server closes.
	HangAfter bool `json:"hang_after,omitempty"`
	// Abort cuts the connection after Chunks and the repeats (the client sees an
	// unexpected EOF).
	Abort bool `json:"abort,omitempty"`
	// FinishReason of the last chunk; "" means "stop" (or "tool_calls" when a chunk
	// carried tool calls).
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage is sent as a final usage chunk (choices: []) after the finish chunk, and as
	// the usage of a non-streaming answer.
	Usage *Usage `json:"usage,omitempty"`
	// OmitDone leaves out the final "data: [DONE]".
	OmitDone bool `json:"omit_done,omitempty"`
	// Verbatim makes Chunks the whole stream: no finish chunk, usage chunk or [DONE] is
	// added after them, and the body ends after the last one (for exact wire formats of
	// real providers, written as Raw chunks).
	Verbatim bool `json:"verbatim,omitempty"`
}

// Chunk is one streamed event of a Turn.
type Chunk struct {
	// Delay is a wait before this chunk is sent (everything before it is flushed first).
	Delay time.Duration `json:"-"`
	// Wait, when set, holds this chunk (everything before it is flushed first) until the
	// channel is closed: a test decides when the stream goes on. The client going away
	// or the server closing ends the answer there. A non-streaming answer waits for
	// every chunk's Wait (and Gate) before its body is written.
	Wait <-chan struct{} `json:"-"`
	// Gate, when set, holds this chunk like Wait until Server.Release(Gate) (or the
	// control API's /_control/release) opens the gate of that name.
	Gate string `json:"gate,omitempty"`
	// Text is sent as choices[0].delta.content.
	Text string `json:"text,omitempty"`
	// Reasoning is sent as choices[0].delta.<ReasoningField>.
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningField is "reasoning_content" (default, as llama.cpp and DeepSeek send it)
	// or "reasoning" (as Ollama and OpenRouter send it).
	ReasoningField string `json:"reasoning_field,omitempty"`
	// ToolCalls are sent as choices[0].delta.tool_calls.
	ToolCalls []ToolCallDelta `json:"tool_calls,omitempty"`
	// Usage is sent as the chunk's usage member.
	Usage *Usage `json:"usage,omitempty"`
	// Raw, when set, is written verbatim instead of an event (it must carry its own
	// "data: " prefixes and blank-line terminators): for edge cases.
	Raw string `json:"raw,omitempty"`
}

// ToolCallDelta is one element of delta.tool_calls. Empty fields are omitted, so a
// call can be streamed as a first delta with ID and Name followed by argument pieces.
type ToolCallDelta struct {
	Index     int    `json:"index"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Usage are OpenAI-style token counters: prompt_tokens, completion_tokens and
// prompt_tokens_details.cached_tokens.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens,omitempty"`
	// Cost, when set, is sent as usage.cost (US dollars), as OpenRouter does.
	Cost *float64 `json:"cost,omitempty"`
}

// UnmarshalJSON reads a turn of a script file; header_delay_ms is in milliseconds.
func (t *Turn) UnmarshalJSON(b []byte) error {
	type plain Turn
	var v struct {
		plain
		HeaderDelayMS float64 `json:"header_delay_ms"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Turn(v.plain)
	t.HeaderDelay = time.Duration(v.HeaderDelayMS * float64(time.Millisecond))
	return nil
}

// UnmarshalJSON reads a chunk of a script file; delay_ms is in milliseconds.
func (c *Chunk) UnmarshalJSON(b []byte) error {
	type plain Chunk
	var v struct {
		plain
		DelayMS float64 `json:"delay_ms"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Chunk(v.plain)
	c.Delay = time.Duration(v.DelayMS * float64(time.Millisecond))
	return nil
}

// LoadScript reads a JSON array of turns (the Turn and Chunk fields in snake_case, with
// header_delay_ms and delay_ms in milliseconds). Errors: the JSON decoder's.
func LoadScript(r io.Reader) ([]Turn, error) {
	var turns []Turn
	if err := json.NewDecoder(r).Decode(&turns); err != nil {
		return nil, fmt.Errorf("providertest: read script: %w", err)
	}
	return turns, nil
}

// TextTurn streams each piece as one token chunk, then finishes with "stop".
func TextTurn(pieces ...string) Turn {
	t := Turn{}
	for _, p := range pieces {
		t.Chunks = append(t.Chunks, Chunk{Text: p})
	}
	return t
}

// BigTurn streams n copies of token as token chunks, then a usage chunk
// (completion_tokens n): the benchmark turn.
func BigTurn(n int, token string) Turn {
	return Turn{Repeat: n, RepeatText: token, Usage: &Usage{PromptTokens: 10, CompletionTokens: n}}
}

// ErrorTurn answers with HTTP status and an OpenAI-style error body
// {"error":{"message":message,"type":"scripted_error","code":null}}.
func ErrorTurn(status int, message string) Turn {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "type": "scripted_error", "code": nil}})
	return Turn{Status: status, Body: string(b)}
}

// ErrorChunk is a raw event carrying an error object mid-stream, as OpenRouter sends
// one: data: {"error":{"message":message,"code":code}}.
func ErrorChunk(code int, message string) Chunk {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": message, "code": code}})
	return Chunk{Raw: "data: " + string(b) + "\n\n"}
}

// EchoTurn is the default answer when the queue is empty: "You said: <text>" in a few
// chunks 20 ms apart, then a usage chunk.
func EchoTurn(text string) Turn {
	answer := "You said: " + text
	words := strings.SplitAfter(answer, " ")
	t := Turn{}
	// At most four chunks, so long messages still stream quickly.
	per := max(1, (len(words)+3)/4)
	for i := 0; i < len(words); i += per {
		piece := strings.Join(words[i:min(i+per, len(words))], "")
		t.Chunks = append(t.Chunks, Chunk{Text: piece, Delay: 20 * time.Millisecond})
	}
	t.Usage = &Usage{PromptTokens: len(strings.Fields(text)) + 5, CompletionTokens: len(words)}
	return t
}

// text returns the turn's joined visible text and reasoning.
func (t *Turn) text() (content, reasoning string) {
	var b, r strings.Builder
	for _, c := range t.Chunks {
		b.WriteString(c.Text)
		r.WriteString(c.Reasoning)
	}
	for i := 0; i < t.Repeat; i++ {
		b.WriteString(t.RepeatText)
	}
	return b.String(), r.String()
}
