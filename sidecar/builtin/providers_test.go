package builtin

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"talaria/internal/testwait"
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

// llamaChunk is one chunk as llama.cpp's llama-server streams it.
func llamaChunk(delta, finish string) string {
	if finish == "" {
		finish = "null"
	} else {
		finish = `"` + finish + `"`
	}
	return `{"choices":[{"finish_reason":` + finish + `,"index":0,"delta":` + delta + `}],"created":1764547200,"id":"chatcmpl-Qx1","model":"qwen2.5-7b-instruct-q4_k_m.gguf","system_fingerprint":"b6200-1a2b3c","object":"chat.completion.chunk"}`
}

// TestProviderStreamEndsBadly: a stream that ends ([DONE] or the end of the body)
// without a finish reason is an incomplete answer, never a finished one; an error the
// provider sent on the way (llama.cpp's "error:" event, an "event: error", OpenRouter's
// error object) ends the turn with the provider's own words, what streamed kept as
// partial, and no http_status it did not send.
func TestProviderStreamEndsBadly(t *testing.T) {
	tests := []struct {
		name        string
		turn        providertest.Turn
		cond, words string
		code        string
	}{
		{"llama.cpp error event, then [DONE]", wire(
			llamaChunk(`{"role":"assistant","content":null}`, ""),
			llamaChunk(`{"content":"Hel"}`, ""),
			`error: {"code":500,"message":"Failed to parse tool call arguments as JSON","type":"server_error"}`,
			"[DONE]"), protocol.CondProviderError, "Failed to parse tool call arguments", "500"},
		{"llama.cpp error as a data event", wire(
			llamaChunk(`{"content":"Hel"}`, ""),
			`{"error":{"code":500,"message":"Context size has been exceeded.","type":"exceed_context_size_error"}}`,
			"[DONE]"), protocol.CondContextTooLong, "Context size has been exceeded", "500"},
		{"event: error with a JSON body", wire(
			openaiChunk(`{"content":"Hel"}`, ""),
			"event: error\ndata: {\"error\":{\"message\":\"upstream overloaded\",\"type\":\"overloaded_error\"}}\n\n"),
			protocol.CondProviderError, "upstream overloaded", "overloaded_error"},
		{"openrouter error object mid-stream with finish_reason error", wire(
			`: OPENROUTER PROCESSING`,
			`{"id":"gen-1764547200-abc","provider":"DeepInfra","model":"meta-llama/llama-3.3-70b-instruct","object":"chat.completion.chunk","created":1764547200,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
			`{"id":"gen-1764547200-abc","object":"chat.completion.chunk","created":1764547200,"model":"meta-llama/llama-3.3-70b-instruct","provider":"DeepInfra","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`,
			"[DONE]"), protocol.CondProviderError, "Provider disconnected unexpectedly", "server_error"},
		{"[DONE] without a finish reason", wire(
			openaiChunk(`{"role":"assistant","content":"","refusal":null}`, ""),
			openaiChunk(`{"content":"Hel"}`, ""),
			"[DONE]"), protocol.CondStreamInterrupted, "without a finish reason", ""},
		{"end of body without a finish reason", wire(
			ollamaChunk(`{"role":"assistant","content":"Hel"}`, "")),
			protocol.CondStreamInterrupted, "without a finish reason", ""},
		{"connection dropped mid-answer", providertest.Turn{Chunks: []providertest.Chunk{{Raw: "data: " + ollamaChunk(`{"role":"assistant","content":"Hel"}`, "") + "\n\n"}}, Abort: true},
			protocol.CondStreamInterrupted, "broke before the answer was finished", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			p.Enqueue(tt.turn)
			_, err := startChat(t, New(Options{Log: testLogger(t)}), toolParams(p, "s-end", t.TempDir())).result()
			pe := failure(t, err)
			if pe.Condition() != tt.cond || !strings.Contains(pe.Message, tt.words) || pe.Data.ProviderCode != tt.code {
				t.Fatalf("condition %s code %q message %q", pe.Condition(), pe.Data.ProviderCode, pe.Message)
			}
			if pe.Data.HTTPStatus != 0 {
				t.Errorf("http_status %d claimed for an error inside a 200 stream", pe.Data.HTTPStatus)
			}
			if pe.Data.Partial != "Hel" {
				t.Errorf("partial %q", pe.Data.Partial)
			}
			if n := len(p.Requests()); n != 1 {
				t.Errorf("%d requests: an answer that began was retried", n)
			}
			readsWell(t, pe.Message)
		})
	}
}

// TestProviderContextTooLong: each provider's way of saying the conversation does not
// fit the model's context (HTTP 400 bodies, and an error object in a 200 stream)
// becomes context_too_long with a hint to summarise or start a new chat.
func TestProviderContextTooLong(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
	}{
		{"llama.cpp", 400, `{"error":{"code":400,"message":"request (9412 tokens) exceeds the available context size (8192 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":9412,"n_ctx":8192}}`},
		{"llama.cpp older", 400, `{"error":{"code":400,"message":"the request exceeds the available context size, try increasing the context size or enable context shift","type":"invalid_request_error"}}`},
		{"openai", 400, `{"error":{"message":"This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
		{"openai input exceeds window", 400, `{"error":{"message":"Your input exceeds the context window of this model. Please adjust your input and try again.","type":"invalid_request_error","param":"input","code":"context_length_exceeded"}}`},
		{"openrouter", 400, `{"error":{"message":"This endpoint's maximum context length is 131072 tokens. However, you requested about 140000 tokens (139000 of text input, 1000 in the output). Please reduce the length of either one, or use the \"middle-out\" transform to compress your prompt automatically.","code":400,"metadata":{"provider_name":null}}}`},
		{"ollama", 400, `{"error":{"message":"prompt too long; exceeded max context length by 1810 tokens","type":"api_error","param":null,"code":null}}`},
		{"ollama runner", 500, `{"error":{"message":"input exceeds maximum context length","type":"api_error","param":null,"code":null}}`},
		{"lm studio", 400, `{"error":"Trying to keep the first 6793 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input"}`},
		{"groq", 400, `{"error":{"message":"Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`},
		{"vllm", 400, `{"object":"error","message":"This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.","type":"BadRequestError","param":null,"code":400}`},
		{"anthropic via a proxy", 400, `{"error":{"type":"invalid_request_error","message":"prompt is too long: 208000 tokens > 200000 maximum"}}`},
		{"mistral", 400, `{"object":"error","message":"Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length","type":"invalid_request_error","param":null,"code":null}`},
		{"gemini", 400, `[{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}]`},
		{"openrouter in a 200 stream", 200, `{"id":"gen-1","object":"chat.completion.chunk","created":1764547200,"model":"x","error":{"code":400,"message":"This endpoint's maximum context length is 8192 tokens. However, you requested about 9000 tokens."},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			if tt.status == 200 {
				p.Enqueue(wire(tt.body, "[DONE]"))
			} else {
				p.Enqueue(providertest.Turn{Status: tt.status, Body: tt.body})
			}
			_, err := startChat(t, noRetryRuntime(t), toolParams(p, "s-ctx", t.TempDir())).result()
			pe := failure(t, err)
			if pe.Condition() != protocol.CondContextTooLong {
				t.Fatalf("condition %s: %s", pe.Condition(), pe.Message)
			}
			if !strings.Contains(pe.Data.Hint, "new chat") || !strings.Contains(pe.Data.Hint, "Summarise") {
				t.Errorf("hint %q", pe.Data.Hint)
			}
			if want := tt.status; (want == 200 && pe.Data.HTTPStatus != 0) || (want != 200 && pe.Data.HTTPStatus != want) {
				t.Errorf("http_status %d", pe.Data.HTTPStatus)
			}
			readsWell(t, pe.Message)
		})
	}
}

// TestProviderUsage: token counters where each provider puts them: OpenAI's and
// Ollama's final chunk with empty choices, Groq's x_groq.usage, OpenRouter's usage
// with its cost, Moonshot's usage inside the choice.
func TestProviderUsage(t *testing.T) {
	tests := []struct {
		name     string
		turn     providertest.Turn
		in, out  int64
		cost     float64
		reported bool
	}{
		{"openai final chunk with empty choices", wire(
			openaiChunk(`{"role":"assistant","content":"Hi","refusal":null}`, ""),
			openaiChunk(`{}`, "stop"),
			`{"id":"chatcmpl-C1x","object":"chat.completion.chunk","created":1764547200,"model":"gpt-4.1-mini-2025-04-14","service_tier":"default","system_fingerprint":"fp_658b958c37","choices":[],"usage":{"prompt_tokens":19,"completion_tokens":2,"total_tokens":21,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}},"obfuscation":"q"}`,
			"[DONE]"), 19, 2, 0, false},
		{"groq x_groq.usage", wire(
			`{"id":"chatcmpl-7f1","object":"chat.completion.chunk","created":1764547200,"model":"llama-3.3-70b-versatile","system_fingerprint":"fp_3f3b593e33","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"x_groq":{"id":"req_01k0"}}`,
			`{"id":"chatcmpl-7f1","object":"chat.completion.chunk","created":1764547200,"model":"llama-3.3-70b-versatile","system_fingerprint":"fp_3f3b593e33","choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
			`{"id":"chatcmpl-7f1","object":"chat.completion.chunk","created":1764547200,"model":"llama-3.3-70b-versatile","system_fingerprint":"fp_3f3b593e33","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}],"x_groq":{"id":"req_01k0","usage":{"queue_time":0.05,"prompt_tokens":45,"prompt_time":0.002,"completion_tokens":3,"completion_time":0.01,"total_tokens":48,"total_time":0.012}}}`,
			"[DONE]"), 45, 3, 0, false},
		{"openrouter usage with cost", wire(
			`: OPENROUTER PROCESSING`,
			`{"id":"gen-1","provider":"OpenAI","model":"openai/gpt-4o-mini","object":"chat.completion.chunk","created":1764547200,"choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null,"native_finish_reason":null,"logprobs":null}]}`,
			`{"id":"gen-1","provider":"OpenAI","model":"openai/gpt-4o-mini","object":"chat.completion.chunk","created":1764547200,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop","native_finish_reason":"stop","logprobs":null}]}`,
			`{"id":"gen-1","provider":"OpenAI","model":"openai/gpt-4o-mini","object":"chat.completion.chunk","created":1764547200,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null,"native_finish_reason":null,"logprobs":null}],"usage":{"prompt_tokens":12,"completion_tokens":2,"total_tokens":14,"cost":0.0000042,"is_byok":false,"prompt_tokens_details":{"cached_tokens":0},"cost_details":{"upstream_inference_cost":null},"completion_tokens_details":{"reasoning_tokens":0}}}`,
			"[DONE]"), 12, 2, 0.0000042, true},
		{"moonshot usage in the choice", wire(
			`{"id":"cmpl-1","object":"chat.completion.chunk","created":1764547200,"model":"kimi-k2","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}`,
			`{"id":"cmpl-1","object":"chat.completion.chunk","created":1764547200,"model":"kimi-k2","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":8,"completion_tokens":1,"total_tokens":9}}]}`,
			"[DONE]"), 8, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			p.Enqueue(tt.turn)
			run := startChat(t, New(Options{Log: testLogger(t)}), toolParams(p, "s-use", t.TempDir()))
			res := run.mustResult()
			u := res.Usage
			if res.FinalResponse != "Hi" || u.InputTokens != tt.in || u.OutputTokens != tt.out || u.EstimatedCost != tt.cost || u.CostReported != tt.reported {
				t.Fatalf("final %q usage %+v", res.FinalResponse, u)
			}
			if res.Context.LastPromptTokens != tt.in {
				t.Errorf("context %+v", res.Context)
			}
			if len(run.of(protocol.EvUsage)) == 0 {
				t.Errorf("no usage frame")
			}
		})
	}
}

// TestProviderIdleTimeout: a stream that goes silent (after its headers, or before
// them) ends after the idle timeout with stream_interrupted, and is never retried once
// any byte of the answer came, not even a role-only chunk or a keep-alive.
//
// The cases where something must arrive before the stream goes silent run on a manual
// idle timer (manualIdle): it fires once the test has seen what was sent (the text's
// frame, or a read of the chunk's bytes), so a loaded machine slow to read the chunk
// cannot make the timeout come first. The case with no headers at all has nothing to
// wait for and runs on the real timer (a slow machine only makes it fire later).
func TestProviderIdleTimeout(t *testing.T) {
	roleOnly := "data: " + ollamaChunk(`{"role":"assistant","content":""}`, "") + "\n\n"
	// Readiness to go silent: the text's token frame, or the chunk's bytes read.
	sawText := func(run *chatRun, _ *manualIdle) bool { return len(run.of(protocol.EvToken)) > 0 }
	readBytes := func(_ *chatRun, m *manualIdle) bool { return m.resets() > 0 }
	tests := []struct {
		name     string
		turn     providertest.Turn
		param    int // chat.start's stream_idle_timeout_s (0: the runtime's 300 ms)
		silent   func(*chatRun, *manualIdle) bool
		fire     bool // fire the manual timer once silent says so; nil silent: the real timer
		cond     string
		words    string
		partial  string
		requests int
	}{
		{"silent after some text", providertest.Turn{Chunks: []providertest.Chunk{{Text: "Thinking about it"}}, HangAfter: true},
			0, sawText, true, protocol.CondStreamInterrupted, "stopped sending: nothing arrived for 300 ms", "Thinking about it", 1},
		{"silent after a role-only chunk", providertest.Turn{Chunks: []providertest.Chunk{{Raw: roleOnly}}, HangAfter: true},
			0, readBytes, true, protocol.CondStreamInterrupted, "stopped sending", "", 1},
		{"silent after a keep-alive comment", providertest.Turn{Chunks: []providertest.Chunk{{Raw: ": keep-alive\n\n"}}, HangAfter: true},
			0, readBytes, true, protocol.CondStreamInterrupted, "stopped sending", "", 1},
		{"no headers at all", providertest.Turn{HeaderDelay: time.Hour},
			0, nil, false, protocol.CondStreamInterrupted, "did not start answering", "", 1},
		{"the chat.start setting", providertest.Turn{Chunks: []providertest.Chunk{{Text: "a"}}, HangAfter: true},
			1, sawText, true, protocol.CondStreamInterrupted, "nothing arrived for 1 s", "a", 1},
		// The manual timer never fires here: the connection's end decides.
		{"closed after a role-only chunk is not retried", providertest.Turn{Chunks: []providertest.Chunk{{Raw: roleOnly}}, Abort: true},
			0, readBytes, false, protocol.CondStreamInterrupted, "broke before the answer was finished", "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			p.Enqueue(tt.turn, providertest.TextTurn("retried"), providertest.TextTurn("retried"))
			rt := New(Options{Log: testLogger(t), StreamIdleTimeout: 300 * time.Millisecond,
				RetryDelays: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond}})
			m := &manualIdle{}
			if tt.silent != nil {
				rt.idleTimer = m.arm
			}
			params := toolParams(p, "s-idle", t.TempDir())
			params.StreamIdleTimeoutS = tt.param
			run := startChat(t, rt, params)
			if tt.fire {
				testwait.For(t, "the stream's bytes before the silence", func() bool { return tt.silent(run, m) })
				m.fire(t)
			}
			_, err := run.result()
			pe := failure(t, err)
			if pe.Condition() != tt.cond || !strings.Contains(pe.Message, tt.words) || pe.Data.Partial != tt.partial || pe.Data.HTTPStatus != 0 {
				t.Fatalf("condition %s partial %q status %d message %q", pe.Condition(), pe.Data.Partial, pe.Data.HTTPStatus, pe.Message)
			}
			if n := len(p.Requests()); n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
			readsWell(t, pe.Message)
		})
	}
}

// manualIdle arms model calls' idle timeouts that fire only when the test calls fire.
type manualIdle struct {
	mu     sync.Mutex
	timers []*manualTimer
}

type manualTimer struct {
	m       *manualIdle
	f       func()
	resets  int
	stopped bool
}

func (m *manualIdle) arm(_ time.Duration, f func()) idleWatch {
	m.mu.Lock()
	defer m.mu.Unlock()
	tm := &manualTimer{m: m, f: f}
	m.timers = append(m.timers, tm)
	return tm
}

func (tm *manualTimer) Reset(time.Duration) bool {
	tm.m.mu.Lock()
	defer tm.m.mu.Unlock()
	tm.resets++
	return !tm.stopped
}

func (tm *manualTimer) Stop() bool {
	tm.m.mu.Lock()
	defer tm.m.mu.Unlock()
	was := !tm.stopped
	tm.stopped = true
	return was
}

// resets counts the pushes back of every timer armed so far (one per read of bytes).
func (m *manualIdle) resets() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, tm := range m.timers {
		n += tm.resets
	}
	return n
}

// fire runs the function of the one timer armed so far, as its expiry would.
func (m *manualIdle) fire(t *testing.T) {
	t.Helper()
	m.mu.Lock()
	if len(m.timers) != 1 || m.timers[0].stopped {
		m.mu.Unlock()
		t.Fatalf("%d idle timers armed (the last stopped: %v), want one running", len(m.timers), len(m.timers) > 0 && m.timers[len(m.timers)-1].stopped)
	}
	f := m.timers[0].f
	m.mu.Unlock()
	f()
}

// TestProviderTruncated: finish_reason "length" (the output limit) and
// "content_filter" end the turn truncated: a truncated frame, the text so far as the
// last row, the result's truncated; tool calls cut with the answer are not run.
func TestProviderTruncated(t *testing.T) {
	tests := []struct {
		name, reason string
		turn         providertest.Turn
		text         string
	}{
		{"openai length", protocol.TruncatedLength, wire(
			openaiChunk(`{"role":"assistant","content":"","refusal":null}`, ""),
			openaiChunk(`{"content":"The first half"}`, ""),
			openaiChunk(`{}`, "length"),
			"[DONE]"), "The first half"},
		{"llama.cpp length", protocol.TruncatedLength, wire(
			llamaChunk(`{"content":"The first half"}`, ""),
			llamaChunk(`{}`, "length"),
			"[DONE]"), "The first half"},
		{"ollama length", protocol.TruncatedLength, wire(
			ollamaChunk(`{"role":"assistant","content":"The first half"}`, ""),
			ollamaChunk(`{"role":"assistant","content":""}`, "length"),
			"[DONE]"), "The first half"},
		{"openai content_filter", protocol.TruncatedContentFilter, wire(
			openaiChunk(`{"content":"The first half"}`, ""),
			openaiChunk(`{}`, "content_filter"),
			"[DONE]"), "The first half"},
		{"length inside a tool call", protocol.TruncatedLength, wire(
			openaiChunk(`{"role":"assistant","content":"The first half","tool_calls":[{"index":0,"id":"call_Z","type":"function","function":{"name":"write_file","arguments":"{\"path\":\"x.txt\",\"content\":\"ab"}}]}`, ""),
			openaiChunk(`{}`, "length"),
			"[DONE]"), "The first half"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			p.Enqueue(tt.turn)
			dir := t.TempDir()
			run := startChat(t, New(Options{Log: testLogger(t)}), toolParams(p, "s-cut", dir))
			res := run.mustResult()
			if res.Status != protocol.StatusCompleted || res.Truncated != tt.reason || res.FinalResponse != tt.text {
				t.Fatalf("result %+v", res)
			}
			if n := len(res.Messages); n != 1 || res.Messages[0].Content != tt.text || len(res.Messages[0].ToolCalls) != 0 {
				t.Fatalf("rows %+v", res.Messages)
			}
			var d protocol.TruncatedData
			run.waitFor(protocol.EvTruncated, 1, &d)
			if d.Reason != tt.reason || d.Message == "" {
				t.Fatalf("truncated frame %+v", d)
			}
			readsWell(t, d.Message)
			if len(run.of(protocol.EvTool)) != 0 || len(p.Requests()) != 1 {
				t.Fatalf("a cut tool call ran: %s", run.summary())
			}
		})
	}
}

// TestProviderInlineThink: a reasoning model served without a reasoning parser
// (llama-server --reasoning-format none: Qwen3, DeepSeek-R1) streams its reasoning in
// the answer's content between <think> and </think>, the tags cut across chunks. It is
// shown and kept as reasoning; the answer, its frames and the saved row are the text
// after the block.
// A model whose chat template opens the reasoning block itself (DeepSeek-R1's distills
// on llama-server with --reasoning-format none) streams only its closing tag: the text
// streams as the answer (the tag cannot be foreseen), and the saved row and the final
// answer are split at it. A </think> inside code stays the answer's own.
func TestProviderCloseOnlyThink(t *testing.T) {
	for _, c := range []struct {
		name, reasoning, answer string
		chunks                  []string
	}{
		{"template opened", "The user says hi.\n", "Hi there.", []string{"The user says hi.\n</thi", "nk>\n\nHi", " there."}},
		{"tag in code", "", "Close it with `</think>` and go on.", []string{"Close it with `</think>`", " and go on."}},
		{"no tag", "", "Plain answer.", []string{"Plain ", "answer."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := providertest.Start()
			defer p.Close()
			chunks := []string{llamaChunk(`{"role":"assistant","content":null}`, "")}
			for _, text := range c.chunks {
				b, _ := json.Marshal(map[string]string{"content": text})
				chunks = append(chunks, llamaChunk(string(b), ""))
			}
			chunks = append(chunks, llamaChunk(`{}`, "stop"), "[DONE]")
			p.Enqueue(wire(chunks...))
			run := startChat(t, New(Options{Log: testLogger(t)}), toolParams(p, "s-closeonly", t.TempDir()))
			res := run.mustResult()
			if res.FinalResponse != c.answer {
				t.Fatalf("final %q, want %q", res.FinalResponse, c.answer)
			}
			last := res.Messages[len(res.Messages)-1]
			if last.Role != "assistant" || last.Content != c.answer || last.Reasoning != c.reasoning {
				t.Fatalf("saved row content %q reasoning %q, want %q and %q", last.Content, last.Reasoning, c.answer, c.reasoning)
			}
		})
	}
}

func TestProviderInlineThink(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	p.Enqueue(wire(
		llamaChunk(`{"role":"assistant","content":null}`, ""),
		llamaChunk(`{"content":"<th"}`, ""),
		llamaChunk(`{"content":"ink>\nThe user says hi; "}`, ""),
		llamaChunk(`{"content":"greet back.\n</"}`, ""),
		llamaChunk(`{"content":"think>\n\n"}`, ""),
		llamaChunk(`{"content":"Hi"}`, ""),
		llamaChunk(`{"content":" there."}`, ""),
		llamaChunk(`{}`, "stop"),
		"[DONE]"))
	run := startChat(t, New(Options{Log: testLogger(t)}), toolParams(p, "s-think", t.TempDir()))
	res := run.mustResult()
	if res.FinalResponse != "Hi there." {
		t.Fatalf("final %q", res.FinalResponse)
	}
	var reasoning, tokens strings.Builder
	for _, f := range run.list() {
		var d protocol.TextData
		switch f.event {
		case protocol.EvReasoning:
			_ = json.Unmarshal(f.data, &d)
			reasoning.WriteString(d.Text)
		case protocol.EvToken:
			_ = json.Unmarshal(f.data, &d)
			tokens.WriteString(d.Text)
		}
	}
	if reasoning.String() != "\nThe user says hi; greet back.\n" || tokens.String() != "Hi there." {
		t.Fatalf("reasoning frames %q, token frames %q", reasoning.String(), tokens.String())
	}
	last := res.Messages[len(res.Messages)-1]
	if last.Role != "assistant" || last.Content != "Hi there." || last.Reasoning != "\nThe user says hi; greet back.\n" {
		t.Fatalf("saved row %+v", last)
	}
}
