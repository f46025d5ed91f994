//go:build unix

package builtin

import (
	"encoding/json"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// testSecret has characters JSON escapes, to catch a leak in any encoding.
const testSecret = `Zx9-SECRET-"quoted"<tag>&-VALUE`

func TestVaultRoundTrip(t *testing.T) {
	p := providertest.Start()
	defer p.Close()
	rt := New(Options{})
	dir := t.TempDir()
	p.Enqueue(
		providertest.CallTurn("I need a token.", providertest.Call("v", "request_secret", map[string]any{"name": "GITHUB_TOKEN", "reason": "to call the GitHub API"})),
		providertest.CallTurn("", providertest.Call("t", "terminal", map[string]any{"command": `echo "token=$GITHUB_TOKEN"; printf %s "$GITHUB_TOKEN" | wc -c; echo "$GITHUB_TOKEN" > tok.txt`})),
		providertest.CallTurn("", providertest.Call("r", "read_file", map[string]any{"path": "tok.txt"}), providertest.Call("s", "search_files", map[string]any{"pattern": "SECRET"})),
		providertest.TextTurn("done"),
	)
	run := startChat(t, rt, toolParams(p, "s1", dir))
	var cl protocol.ClarifyData
	run.waitFor(protocol.EvClarify, 1, &cl)
	if cl.Kind != protocol.ClarifyKindVault || cl.Name != "GITHUB_TOKEN" || cl.Reason != "to call the GitHub API" || cl.SavedHint != "vault:GITHUB_TOKEN" ||
		cl.Questions == nil || cl.Choices == nil {
		t.Fatalf("vault clarify %+v", cl)
	}
	for _, bad := range []string{`"plain"`, `{"value":""}`, `{"value":1}`, `{}`, `["x"]`, `{"value":"a\u0000b"}`} {
		if ok, err := respond(rt, "s1", cl.ClarifyID, bad); ok || err == nil || strings.Contains(err.Error(), "a\x00b") {
			t.Fatalf("response %s: %v %v", bad, ok, err)
		}
	}
	val, _ := json.Marshal(map[string]string{"value": testSecret})
	if ok, err := respond(rt, "s1", cl.ClarifyID, string(val)); !ok || err != nil {
		t.Fatalf("answer %v %v", ok, err)
	}
	res := run.mustResult()

	// The model was told only that the variable is set, and read its uses redacted.
	reqs := p.Requests()
	if tr, _ := reqs[1].ToolResult("v"); !strings.Contains(tr.Content, "GITHUB_TOKEN is set") {
		t.Fatalf("tool message %s", tr.Content)
	}
	tr, _ := reqs[2].ToolResult("t")
	var out struct{ Output string }
	json.Unmarshal([]byte(tr.Content), &out)
	if strings.ReplaceAll(out.Output, " ", "") != "token=[REDACTED]\n31\n" {
		t.Fatalf("terminal output %q", out.Output)
	}
	for _, req := range reqs {
		assertNoSecret(t, "provider request", string(req.Body))
	}
	for _, f := range run.list() {
		assertNoSecret(t, "frame "+f.event, string(f.data))
	}
	b, _ := json.Marshal(res)
	assertNoSecret(t, "result", string(b))
	if !strings.Contains(string(b), "[REDACTED]") {
		t.Fatalf("nothing was redacted: %s", b)
	}
	// The secret stays for the session's later turns, and only for its terminal.
	if env := rt.secretEnv("s1"); len(env) != 1 || env[0] != "GITHUB_TOKEN="+testSecret {
		t.Fatal("the secret is not kept for the session")
	}
	if env := rt.secretEnv("s2"); len(env) != 0 {
		t.Fatal("the secret leaked into another session")
	}
	if !rt.evict("s1") || len(rt.secretEnv("s1")) != 0 || !rt.redactor().Empty() {
		t.Fatal("chat.evict kept the secret")
	}
}

// assertNoSecret fails when text holds the test secret in any encoding a writer of
// JSON may have used, or a recognisable piece of it.
func assertNoSecret(t *testing.T, what, text string) {
	t.Helper()
	plain, _ := json.Marshal(testSecret)
	for _, form := range []string{testSecret, strings.Trim(string(plain), `"`), `\"quoted\"\u003ctag\u003e`, "Zx9-SECRET", "SECRET-"} {
		if strings.Contains(text, form) {
			t.Fatalf("the secret (%q) is in the %s: %s", form, what, text)
		}
	}
}
