package builtin

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"talaria/sidecar/protocol"
)

func TestToolAccumulator(t *testing.T) {
	tests := []struct {
		name   string
		deltas []string // each a JSON array of tool_calls deltas, one per chunk
		want   []protocol.ToolCall
	}{
		{"openai shape: id and name first, then argument pieces", []string{
			`[{"index":0,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]`,
			`[{"index":0,"function":{"arguments":"{\"pa"}}]`,
			`[{"index":0,"function":{"arguments":"th\":\"x\"}"}}]`,
		}, []protocol.ToolCall{{ID: "call_a", Type: "function", Function: protocol.ToolFunction{Name: "read_file", Arguments: `{"path":"x"}`}}}},
		{"two calls interleaved, sorted by index", []string{
			`[{"index":1,"id":"b","function":{"name":"g","arguments":"{"}}]`,
			`[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]`,
			`[{"index":1,"function":{"arguments":"}"}}]`,
		}, []protocol.ToolCall{
			{ID: "a", Type: "function", Function: protocol.ToolFunction{Name: "f", Arguments: "{}"}},
			{ID: "b", Type: "function", Function: protocol.ToolFunction{Name: "g", Arguments: "{}"}},
		}},
		{"whole call in one delta, object arguments, no id", []string{
			`[{"index":0,"function":{"name":"f","arguments":{"a":1}}}]`,
		}, []protocol.ToolCall{{ID: "call_0", Type: "function", Function: protocol.ToolFunction{Name: "f", Arguments: `{"a":1}`}}}},
		{"no index: a new id starts a call", []string{
			`[{"id":"x","function":{"name":"f","arguments":"1"}}]`,
			`[{"function":{"arguments":"2"}}]`,
			`[{"id":"y","function":{"name":"g","arguments":"3"}}]`,
		}, []protocol.ToolCall{
			{ID: "x", Type: "function", Function: protocol.ToolFunction{Name: "f", Arguments: "12"}},
			{ID: "y", Type: "function", Function: protocol.ToolFunction{Name: "g", Arguments: "3"}},
		}},
		{"name repeated whole in every delta", []string{
			`[{"index":0,"id":"c","function":{"name":"run","arguments":"{"}}]`,
			`[{"index":0,"function":{"name":"run","arguments":"}"}}]`,
		}, []protocol.ToolCall{{ID: "c", Type: "function", Function: protocol.ToolFunction{Name: "run", Arguments: "{}"}}}},
		{"ollama: distinct ids at one index are distinct calls; a later delta without id continues the latest", []string{
			`[{"index":0,"id":"call_x","function":{"name":"f","arguments":"{}"}}]`,
			`[{"index":0,"id":"call_y","function":{"name":"g","arguments":"{"}}]`,
			`[{"index":0,"function":{"arguments":"}"}}]`,
		}, []protocol.ToolCall{
			{ID: "call_x", Type: "function", Function: protocol.ToolFunction{Name: "f", Arguments: "{}"}},
			{ID: "call_y", Type: "function", Function: protocol.ToolFunction{Name: "g", Arguments: "{}"}},
		}},
		{"none", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var acc toolAccumulator
			for _, d := range tt.deltas {
				var deltas []toolCallDelta
				if err := json.Unmarshal([]byte(d), &deltas); err != nil {
					t.Fatal(err)
				}
				for _, x := range deltas {
					acc.add(x)
				}
			}
			got, _ := json.Marshal(acc.result())
			want, _ := json.Marshal(tt.want)
			if string(got) != string(want) {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		})
	}
}

func TestProviderMessage(t *testing.T) {
	tests := []struct {
		body, msg, code string
	}{
		{`{"error":{"message":"bad","type":"invalid_request_error","code":"model_not_found"}}`, "bad", "model_not_found"},
		{`{"error":{"message":"bad","type":"invalid_request_error","code":null}}`, "bad", "invalid_request_error"},
		{`{"error":{"message":"rate","code":429}}`, "rate", "429"},
		{`{"error":"plain"}`, "plain", ""},
		{`{"message":"m"}`, "m", ""},
		{`{"detail":"d"}`, "d", ""},
		{`{"detail":[{"loc":["body"]}]}`, `{"detail":[{"loc":["body"]}]}`, ""},
		{"  Bad Gateway \n", "Bad Gateway", ""},
		{"", "", ""},
		{strings.Repeat("é", 400), strings.Repeat("é", 250) + "…", ""},
	}
	for _, tt := range tests {
		msg, code := providerMessage([]byte(tt.body))
		if msg != tt.msg || code != tt.code {
			t.Errorf("providerMessage(%.40q) = %q, %q; want %q, %q", tt.body, msg, code, tt.msg, tt.code)
		}
	}
}

func TestModelMissing(t *testing.T) {
	tests := map[string]bool{
		`model "llama3.2:1b" not found, try pulling it first`:                      true,
		"The model `gpt-4.1-mini` does not exist or you do not have access to it.": true,
		"openai/gpt-9 is not a valid model ID":                                     true,
		"Unknown model: foo":                                                       true,
		"This model's maximum context length is 8192 tokens.":                      false,
		"Invalid API key":          false,
		"messages: field required": false,
	}
	for msg, want := range tests {
		if got := modelMissing(msg, ""); got != want {
			t.Errorf("modelMissing(%q) = %v, want %v", msg, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"7", 7, true},
		{" 1.5 ", 1.5, true},
		{"-3", 0, true},
		{now.Add(42 * time.Second).Format(http.TimeFormat), 42, true},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"soon", 0, false},
	}
	for _, tt := range tests {
		got, ok := retryAfter(tt.in, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("retryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestIsLoopbackHost(t *testing.T) {
	tests := map[string]bool{
		"127.0.0.1": true, "127.1.2.3": true, "::1": true, "localhost": true, "LocalHost": true,
		"ollama.localhost": true, "0.0.0.0": true, "192.168.1.10": false, "api.openai.com": false, "": false,
	}
	for host, want := range tests {
		if got := isLoopbackHost(host); got != want {
			t.Errorf("isLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

// TestToolRegistry: every built-in tool has a unique name, a toolset enabled_toolsets
// can select, a description and an object schema, and is found by its name.
func TestToolRegistry(t *testing.T) {
	toolsets := map[string]bool{ToolsetTerminal: true, ToolsetFile: true, ToolsetTodo: true, ToolsetClarify: true, ToolsetVault: true}
	seen := map[string]bool{}
	for _, tl := range registry {
		d := tl.Def()
		var schema struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal([]byte(d.Parameters), &schema); err != nil || schema.Type != "object" {
			t.Errorf("%s: schema %v %q", d.Name, err, schema.Type)
		}
		if seen[d.Name] || !toolsets[d.Toolset] || d.Description == "" || toolNamed(d.Name) != tl {
			t.Errorf("%s: duplicate %v, toolset %q, description %q", d.Name, seen[d.Name], d.Toolset, d.Description)
		}
		seen[d.Name] = true
	}
	if toolNamed("no_such_tool") != nil || len(toolsJSON(offeredTools(nil))) != len(registry) {
		t.Error("the registry offers what it does not hold")
	}
}
