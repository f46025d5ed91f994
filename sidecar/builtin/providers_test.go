package builtin

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// The wire formats of real providers, byte for byte as they stream them (Ollama's
// OpenAI-compatible /v1 endpoint, llama.cpp's llama-server, LM Studio, OpenAI,
// OpenRouter, Groq), played by the scripted provider into the real runtime.

// wire is a streamed answer written exactly as a provider writes it: each event is one
// "data: <event>" line followed by a blank line; an event that already starts with a
// field name ("error: ...", "event: ...") or ends in "\n\n" is written as it is.
func wire(events ...string) providertest.Turn {
	t := providertest.Turn{Verbatim: true}
	for _, e := range events {
		if !strings.HasSuffix(e, "\n\n") {
			if !strings.HasPrefix(e, "error:") && !strings.HasPrefix(e, "event:") && !strings.HasPrefix(e, ":") {
				e = "data: " + e
			}
			e += "\n\n"
		}
		t.Chunks = append(t.Chunks, providertest.Chunk{Raw: e})
	}
	return t
}

// ollamaChunk is one chat.completion.chunk as Ollama's /v1/chat/completions sends it.
func ollamaChunk(delta, finish string) string {
	if finish == "" {
		finish = "null"
	} else {
		finish = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-414","object":"chat.completion.chunk","created":1764547200,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

// openaiChunk is one chat.completion.chunk as OpenAI sends it.
func openaiChunk(delta, finish string) string {
	if finish == "" {
		finish = "null"
	} else {
		finish = `"` + finish + `"`
	}
	return `{"id":"chatcmpl-C1x","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_658b958c37","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":` + finish + `}],"usage":null,"obfuscation":"xY"}`
}

// TestProviderParallelToolCalls: parallel tool calls are assembled by id whatever
// index they carry: Ollama sends each call whole with its own id at index 0 (in one
// delta or one chunk each); OpenAI streams id and name once per index, then argument
// pieces without an id. Both calls run, with their own names and arguments.
func TestProviderParallelToolCalls(t *testing.T) {
	readA := `{"path":"a.txt"}`
	readB := `{"path":"b.txt"}`
	tests := []struct {
		name string
		turn providertest.Turn
	}{
		{"ollama: one chunk per call, both at index 0", wire(
			ollamaChunk(`{"role":"assistant","content":"","tool_calls":[{"id":"call_k3b9x2qa","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}]}`, ""),
			ollamaChunk(`{"role":"assistant","content":"","tool_calls":[{"id":"call_p0z7m1wd","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b.txt\"}"}}]}`, ""),
			ollamaChunk(`{"role":"assistant","content":""}`, "tool_calls"),
			`{"id":"chatcmpl-414","object":"chat.completion.chunk","created":1764547200,"model":"qwen3:8b","system_fingerprint":"fp_ollama","choices":[],"usage":{"prompt_tokens":310,"completion_tokens":41,"total_tokens":351}}`,
			"[DONE]")},
		{"ollama: both calls in one delta at index 0", wire(
			ollamaChunk(`{"role":"assistant","content":"","tool_calls":[{"id":"call_k3b9x2qa","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}},{"id":"call_p0z7m1wd","index":0,"type":"function","function":{"name":"read_file","arguments":"{\"path\":\"b.txt\"}"}}]}`, ""),
			ollamaChunk(`{"role":"assistant","content":""}`, "tool_calls"),
			"[DONE]")},
		{"openai: id once per index, argument pieces without id", wire(
			openaiChunk(`{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Aa1","type":"function","function":{"name":"read_file","arguments":""}}],"refusal":null}`, ""),
			openaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}`, ""),
			openaiChunk(`{"tool_calls":[{"index":1,"id":"call_Bb2","type":"function","function":{"name":"read_file","arguments":""}}]}`, ""),
			openaiChunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}`, ""),
			openaiChunk(`{"tool_calls":[{"index":1,"function":{"arguments":"{\"path\":\"b.txt\"}"}}]}`, ""),
			openaiChunk(`{}`, "tool_calls"),
			"[DONE]")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			dir := workspace(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
			p.Enqueue(tt.turn, providertest.TextTurn("Both read."))
			rt := New(Options{Log: testLogger(t)})
			run := startChat(t, rt, toolParams(p, "s-par", dir))
			res := run.mustResult()
			if len(res.Messages) != 4 {
				t.Fatalf("rows %+v%s", res.Messages, run.summary())
			}
			calls := res.Messages[0].ToolCalls
			if len(calls) != 2 || calls[0].Function.Name != "read_file" || calls[1].Function.Name != "read_file" ||
				calls[0].Function.Arguments != readA || calls[1].Function.Arguments != readB || calls[0].ID == calls[1].ID {
				t.Fatalf("tool calls %+v", calls)
			}
			done := toolCompletes(t, run)
			if len(done) != 2 || done[0].Preview != "alpha\n" || done[1].Preview != "beta\n" {
				t.Fatalf("tool_complete %+v", done)
			}
			if res.FinalResponse != "Both read." {
				t.Fatalf("final %q", res.FinalResponse)
			}
		})
	}
}

// failure returns a turn's error as a *protocol.Error, failing the test without one.
func failure(t *testing.T, err error) *protocol.Error {
	t.Helper()
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Data == nil {
		t.Fatalf("want a protocol error, got %v", err)
	}
	return pe
}

var _ = json.Marshal
