package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

// TestLineTailRedactsSecretAcrossCut: an agent stderr line whose secret straddles the
// maxStderrLine cut must reach neither the forwarded log nor the tail with any part of
// the secret's prefix (security review #9: redact before truncating). The redactor is
// a plain replacer: the property tested is the cut's order, not how secrets are learnt.
func TestLineTailRedactsSecretAcrossCut(t *testing.T) {
	secret := "sk-test-0123456789abcdefSECRETVALUE"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	var out bytes.Buffer
	tail := newLineTail(4, &out, redact)
	// A line longer than maxStderrLine is cut to preview's 200 bytes: put the secret
	// across that cut, after enough filler to make the line long.
	line := strings.Repeat("x", 190) + secret + strings.Repeat("y", maxStderrLine) + "\n"
	tail.consume(strings.NewReader(line))
	prefix := secret[:10]
	if strings.Contains(out.String(), prefix) {
		t.Fatalf("forwarded stderr keeps the secret's prefix %q", prefix)
	}
	for _, l := range tail.Last(4) {
		if strings.Contains(l, prefix) {
			t.Fatalf("tail keeps the secret's prefix %q", prefix)
		}
	}
}

// TestLineTailBoundsALineWithoutEnd: an agent writing 32 MiB on stderr with no newline
// is read to the end (its pipe keeps draining), the tail keeps a cut line, and the next
// line arrives whole (the reader once grew the line without bound).
func TestLineTailBoundsALineWithoutEnd(t *testing.T) {
	var out bytes.Buffer
	tail := newLineTail(4, &out, nil)
	r := io.MultiReader(strings.NewReader(strings.Repeat("z", 32<<20)), strings.NewReader("\nthe error\n"))
	tail.consume(r)
	got := tail.Last(4)
	if len(got) != 2 || len(got[0]) > maxStderrLine+16 || !strings.HasSuffix(got[0], "[...]") || got[1] != "the error" {
		t.Fatalf("tail after a 32 MiB line: %d lines, first %d bytes; %q", len(got), len(got[0]), got[len(got)-1])
	}
}

// TestFramesAreRedactedOfKnownSecrets: every frame a turn emits, and its result, is
// redacted of the agent's secrets and the chat's MCP secrets, also where JSON escapes
// them (a quote, '<'); with no secret known a frame goes through untouched.
func TestFramesAreRedactedOfKnownSecrets(t *testing.T) {
	const agentKey, mcpKey = `sk-"quoted"<key>-1234`, "ghp_mcp_frame_secret"
	r := New(Options{Agent: Command{Path: "unused"}, Secrets: []string{agentKey}})
	var got []string
	emit := r.redactingEmit(func(ev string, data any) error {
		b, _ := json.Marshal(data)
		got = append(got, string(b))
		return nil
	})
	r.learnMCPSecrets([]protocol.MCPServer{{Name: "gh", Transport: protocol.MCPTransportStdio, Command: "x",
		Env: map[string]string{"GITHUB_TOKEN": mcpKey}, SecretKeys: []string{"GITHUB_TOKEN"}}})
	emit(protocol.EvToken, protocol.TextData{Text: "the key is " + agentKey + " and " + mcpKey})
	if len(got) != 1 || strings.Contains(got[0], "quoted") || strings.Contains(got[0], "ghp_mcp") || strings.Count(got[0], "[REDACTED]") != 2 {
		t.Fatalf("frame = %v", got)
	}
	res := protocol.ChatResult{Messages: []protocol.ChatMessage{{Role: "assistant", Content: "echo " + mcpKey}}}
	if err := r.redactJSON(&res); err != nil || res.Messages[0].Content != "echo [REDACTED]" {
		t.Fatalf("result = %+v, %v", res, err)
	}
	plain := New(Options{Agent: Command{Path: "unused"}})
	var kept any
	plain.redactingEmit(func(_ string, data any) error { kept = data; return nil })(protocol.EvToken, protocol.TextData{Text: "x"})
	if _, ok := kept.(protocol.TextData); !ok {
		t.Fatalf("with no secret the frame's data was re-encoded: %T", kept)
	}
}

// TestSessionEventsAreRedactedOfKnownSecrets: a chat's state sent between turns
// ($/session_event: the agent's modes, commands, title) is redacted as a turn's frames
// are: an agent naming its key in a command's description does not put it in the chat.
func TestSessionEventsAreRedactedOfKnownSecrets(t *testing.T) {
	const agentKey = "sk-session-event-key-0987"
	r := New(Options{Agent: Command{Path: "unused"}, Secrets: []string{agentKey}})
	var got []string
	r.SetNotify(func(method string, params any) error {
		b, _ := json.Marshal(params)
		got = append(got, method+" "+string(b))
		return nil
	})
	r.sendSessionEvent("s1", protocol.EvAgentTitle, protocol.AgentTitleData{Title: "using " + agentKey})
	if len(got) != 1 || strings.Contains(got[0], agentKey) || !strings.Contains(got[0], "using [REDACTED]") {
		t.Fatalf("session events: %q", got)
	}
}
