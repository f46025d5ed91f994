//go:build unix

package sidecar

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestMainToolsApprovalAndVault drives a whole tool turn through Main, the way the host
// does: a vault prompt answered with a secret, a command using it, a dangerous command
// approved; then it searches every byte the sidecar wrote to stdout and stderr (at
// debug level) and every request the model got for the secret.
func TestMainToolsApprovalAndVault(t *testing.T) {
	const secret = `Qk7-VAULT-"sec"<ret>&-42`
	p := providertest.Start()
	defer p.Close()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "build"), 0o755)
	p.Enqueue(
		providertest.CallTurn("", providertest.Call("v", "request_secret", map[string]any{"name": "DEPLOY_TOKEN", "reason": "deploy"})),
		providertest.CallTurn("", providertest.Call("t", "terminal", map[string]any{"command": `echo "using $DEPLOY_TOKEN"; env | grep DEPLOY`})),
		providertest.CallTurn("", providertest.Call("d", "terminal", map[string]any{"command": "rm -rf build"})),
		providertest.TextTurn("All done."),
	)
	s := start(t, "--log-level", "debug")
	params, _ := json.Marshal(protocol.ChatStartParams{
		SessionID: "sess", StreamID: "st", Workspace: dir, Model: "scripted-model", UserMessage: "deploy it",
		Provider: protocol.Provider{Name: "Scripted", BaseURL: p.BaseURL()},
	})
	s.send(`{"jsonrpc":"2.0","id":1,"method":"chat.start","params":%s}`, params)
	var events []string
	answers := map[string]string{}
	var result protocol.ChatResult
	// The replies to clarify.respond and approval.respond are written by their own
	// requests' goroutines: either may come after chat.start's reply, so the loop reads
	// until it has all three (the frames are chat.start's, in order, all before its reply).
	for result.Status == "" || len(answers) < 2 {
		env := s.next()
		switch {
		case env.Method == protocol.MethodFrame:
			var f protocol.FrameParams
			json.Unmarshal(env.Params, &f)
			events = append(events, f.Event)
			switch f.Event {
			case protocol.EvClarify:
				var cl protocol.ClarifyData
				json.Unmarshal(f.Data, &cl)
				val, _ := json.Marshal(map[string]string{"value": secret})
				s.send(`{"jsonrpc":"2.0","id":"c","method":"clarify.respond","params":{"session_id":"sess","clarify_id":%q,"response":%s}}`, cl.ClarifyID, val)
			case protocol.EvApproval:
				var ap protocol.ApprovalData
				json.Unmarshal(f.Data, &ap)
				if ap.Pattern != "recursive_delete" {
					t.Fatalf("approval %+v", ap)
				}
				s.send(`{"jsonrpc":"2.0","id":"a","method":"approval.respond","params":{"session_id":"sess","approval_id":%q,"choice":"once"}}`, ap.ApprovalID)
			}
		case string(env.ID) == "1":
			if err := json.Unmarshal(env.Result, &result); err != nil || env.Error != nil {
				t.Fatalf("chat.start reply %+v", env)
			}
		default:
			answers[string(env.ID)] = string(env.Result)
		}
	}
	if answers[`"c"`] != `{"ok":true}` || answers[`"a"`] != `{"ok":true}` {
		t.Fatalf("answers %v", answers)
	}
	want := "tool,clarify,clarify_resolved,tool_complete,tool,tool_complete,tool,approval,approval_resolved,tool_complete,token"
	if got := strings.Join(events, ","); got != want {
		t.Fatalf("events %s", got)
	}
	if result.FinalResponse != "All done." || len(result.Messages) != 7 {
		t.Fatalf("result %+v", result)
	}
	if _, err := os.Stat(filepath.Join(dir, "build")); !os.IsNotExist(err) {
		t.Fatal("the approved command did not run")
	}
	tr, _ := p.Requests()[2].ToolResult("t")
	if !strings.Contains(tr.Content, "using [REDACTED]") || !strings.Contains(tr.Content, "DEPLOY_TOKEN=[REDACTED]") {
		t.Fatalf("terminal result %s", tr.Content)
	}
	s.in.Close()
	if code := s.exit(); code != 0 {
		t.Fatalf("exit %d", code)
	}

	escaped, _ := json.Marshal(secret)
	forms := []string{secret, strings.Trim(string(escaped), `"`), "Qk7-VAULT", `\"sec\"\u003cret\u003e`, `"sec"<ret>`}
	var provider strings.Builder
	for _, r := range p.Requests() {
		provider.Write(r.Body)
	}
	for what, text := range map[string]string{"stdout": s.stdout.String(), "stderr": s.stderr.String(), "provider requests": provider.String()} {
		for _, form := range forms {
			if strings.Contains(text, form) {
				t.Errorf("the secret (%q) is in %s", form, what)
			}
		}
	}
	if !strings.Contains(s.stderr.String(), "secret requested") || !strings.Contains(s.stdout.String(), "[REDACTED]") {
		t.Fatalf("the run did not go as planned:\n%s", s.stderr.String())
	}
}
