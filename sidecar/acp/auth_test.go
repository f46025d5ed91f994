package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"talaria/sidecar/acp/acptest"
	"talaria/sidecar/protocol"
)

// openCodeSignedOut starts the real sidecar driving a real OpenCode whose model is one
// of its built-in providers (Anthropic) with no key anywhere: OpenCode opens sessions
// but answers a prompt with ACP's "authentication required". The ACP lines exchanged
// are written to the returned transcript.
func openCodeSignedOut(t *testing.T) (*sidecarProc, string, string) {
	t.Helper()
	oc, err := acptest.NewOpenCode(t.TempDir(), "http://127.0.0.1:9/v1", "http://127.0.0.1:9/v1", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"autoupdate": false, "share": "disabled",
		"model": "anthropic/claude-sonnet-4-5", "small_model": "anthropic/claude-sonnet-4-5", "enabled_providers": []string{"anthropic"},
		"provider": map[string]any{"anthropic": map[string]any{"env": []string{"TALARIA_TEST_NO_SUCH_KEY"}, "options": map[string]any{"baseURL": "http://127.0.0.1:9/v1"}}}})
	var env []string
	for _, e := range oc.Env {
		if !strings.HasPrefix(e, "OPENCODE_CONFIG_CONTENT=") {
			env = append(env, e)
		}
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	transcript := filepath.Join(t.TempDir(), "lines.acp")
	env = append(env, "OPENCODE_CONFIG_CONTENT="+string(cfg), "TALARIA_ACP_TRANSCRIPT="+transcript)
	s := startSidecar(t, env, append([]string{oc.Binary}, oc.Args()...)...)
	return s, ws, transcript
}

// requests counts the requests of method sent to the agent in a transcript.
func requests(t *testing.T, transcript, method string) int {
	t.Helper()
	b, err := os.ReadFile(transcript)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "> ") && strings.Contains(l, `"method":"`+method+`"`) {
			n++
		}
	}
	return n
}

// TestOpenCodeSignIn: a turn OpenCode refuses for want of credentials fails with
// credential_missing, saying how it offers to sign in; agent.authenticate with a
// method it did not offer is refused without asking it; with its own method
// (opencode-login) OpenCode's authenticate is called and answers; agent.logout, which
// OpenCode 1.18 does not advertise, is refused without asking it.
func TestOpenCodeSignIn(t *testing.T) {
	t.Parallel() // its own sidecar, agent and folders
	s, ws, transcript := openCodeSignedOut(t)
	var info protocol.AgentInfoResult
	s.call(protocol.MethodAgentInfo, nil, &info)
	if len(info.AuthMethods) != 1 || info.AuthMethods[0].ID != "opencode-login" || info.Capabilities.Logout {
		t.Fatalf("agent.info = %+v", info)
	}

	id := s.start(protocol.MethodChatStart, protocol.ChatStartParams{SessionID: "s1", StreamID: "st1", Workspace: ws, UserMessage: "hi"})
	_, rerr := s.wait(id)
	if rerr == nil || rerr.Condition() != protocol.CondCredentialMissing || !strings.Contains(rerr.Message, "needs you to sign in") ||
		rerr.Data.Hint != "It offers: Run `opencode auth login` in the terminal." {
		t.Fatalf("the signed-out turn's error = %+v (data %+v)", rerr, rerr.Data)
	}

	_, rerr = s.wait(s.start(protocol.MethodAgentAuthenticate, protocol.AuthenticateParams{MethodID: "github"}))
	if rerr == nil || rerr.Condition() != protocol.CondInvalidParams || !strings.Contains(rerr.Message, "opencode-login") {
		t.Fatalf("authenticate with a method not offered: %+v", rerr)
	}
	if n := requests(t, transcript, "authenticate"); n != 0 {
		t.Fatalf("%d authenticate requests for a method the agent did not offer", n)
	}
	s.call(protocol.MethodAgentAuthenticate, protocol.AuthenticateParams{MethodID: "opencode-login"}, nil)
	if n := requests(t, transcript, "authenticate"); n != 1 {
		t.Fatalf("%d authenticate requests, want 1", n)
	}

	_, rerr = s.wait(s.start(protocol.MethodAgentLogout, nil))
	if rerr == nil || rerr.Condition() != protocol.CondMethodNotFound || !strings.Contains(rerr.Message, "sign out") {
		t.Fatalf("logout of an agent without it: %+v", rerr)
	}
	if n := requests(t, transcript, "logout"); n != 0 {
		t.Fatalf("%d logout requests to an agent that does not offer it", n)
	}
}
