package builtin

import (
	"errors"
	"strings"
	"testing"
	"time"

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

// noRetryRuntime is a runtime that never retries (errors are seen at once).
func noRetryRuntime(t *testing.T) *Runtime {
	return New(Options{Log: testLogger(t), RetryDelays: []time.Duration{}})
}

// readsWell fails the test when a user-facing message has a doubled or stray full
// stop, or does not end a sentence.
func readsWell(t *testing.T, msg string) {
	t.Helper()
	for _, bad := range []string{"..", ". .", " .", ":.", ".:", "  "} {
		if strings.Contains(strings.ReplaceAll(msg, "...", "…"), bad) {
			t.Errorf("message has %q: %s", bad, msg)
		}
	}
	if !strings.HasSuffix(msg, ".") && !strings.HasSuffix(msg, "…") {
		t.Errorf("message does not end a sentence: %s", msg)
	}
}

// TestProviderErrorMessages: every HTTP error of real providers reads as sentences
// (the 401 message had a doubled period) and keeps the provider's own words.
func TestProviderErrorMessages(t *testing.T) {
	tests := []struct {
		name, body, words, cond string
		status                  int
	}{
		{"openai 401", `{"error":{"message":"Incorrect API key provided: sk-abc***xyz. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			"You can find your API key", protocol.CondCredentialMissing, 401},
		{"openrouter 401", `{"error":{"message":"No auth credentials found","code":401}}`, "No auth credentials found", protocol.CondCredentialMissing, 401},
		{"groq 401", `{"error":{"message":"Invalid API Key","type":"invalid_request_error","code":"invalid_api_key"}}`, "Invalid API Key", protocol.CondCredentialMissing, 401},
		{"openai 404 model", `{"error":{"message":"The model ` + "`gpt-9`" + ` does not exist or you do not have access to it.","type":"invalid_request_error","param":null,"code":"model_not_found"}}`,
			"does not exist", protocol.CondModelNotFound, 404},
		{"ollama 404 model", `{"error":{"message":"model \"llama9\" not found, try pulling it first","type":"api_error","param":null,"code":null}}`, "try pulling it first", protocol.CondModelNotFound, 404},
		{"404 path", `404 page not found`, "404 page not found", protocol.CondProviderError, 404},
		{"openai 429", `{"error":{"message":"Rate limit reached for gpt-4.1-mini in organization org-x on tokens per min (TPM): Limit 200000, Used 199000, Requested 3000. Please try again in 600ms.","type":"tokens","param":null,"code":"rate_limit_exceeded"}}`,
			"Please try again in 600ms", protocol.CondRateLimited, 429},
		{"502 html", "<html><body>Bad Gateway</body></html>", "Bad Gateway", protocol.CondProviderError, 502},
		{"lm studio 400", `{"error":"Invalid 'messages' field: expected an array."}`, "expected an array", protocol.CondProviderError, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			p.Enqueue(providertest.Turn{Status: tt.status, Body: tt.body})
			params := toolParams(p, "s-err", t.TempDir())
			params.Model = "gpt-9"
			_, err := startChat(t, noRetryRuntime(t), params).result()
			pe := failure(t, err)
			if pe.Condition() != tt.cond || !strings.Contains(pe.Message, tt.words) {
				t.Fatalf("condition %s message %q", pe.Condition(), pe.Message)
			}
			readsWell(t, pe.Message)
		})
	}
}
