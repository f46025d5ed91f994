//go:build linux

package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zalando/go-keyring"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestMCPElicitedPasswordNeverStored: an MCP server (the official Go SDK's, over
// streamable HTTP) elicits a user name and a password during a tool call. The user name
// is a question card; the password a vault card whose value reaches the server (it
// echoes it) and nothing else: no frame, no journal entry, no file of the data folder,
// no request to the model; the keychain keeps it under the card's name.
func TestMCPElicitedPasswordNeverStored(t *testing.T) {
	keyring.MockInit()
	const secret = "correct-horse-battery-staple-9"
	got := make(chan map[string]any, 1)
	srv := sdk.NewServer(&sdk.Implementation{Name: "vaulty", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "login", Description: "Logs in."}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &sdk.ElicitParams{Message: "Log in to the vault.", RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"user":     map[string]any{"type": "string", "title": "User name"},
				"password": map[string]any{"type": "string", "title": "Password"},
			},
			"required": []string{"user", "password"},
		}})
		if err != nil {
			return nil, nil, err
		}
		got <- res.Content
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("logged in as %v with %v", res.Content["user"], res.Content["password"])}}}, nil, nil
	})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	// Registered before the harness: its cleanup (the sidecar, which holds the MCP
	// session's stream open) runs first.
	t.Cleanup(hs.Close)

	h, _, _ := mcpHarness(t, func(o *backend.Options) { o.Keyring = vault.OSKeyring{} })
	h.addServer(protocol.MCPServer{Name: "vaulty", Transport: protocol.MCPTransportHTTP, URL: hs.URL}, nil)
	ctx := context.Background()
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "vaulty__login", map[string]any{}), providertest.TextTurn("You are in."))
	sid := h.NewSession()
	s := h.Start(sid, "log me in")
	h.answer(s, sid, 1, protocol.ChoiceOnce)

	var cls []map[string]any
	clarifies := func(n int) {
		if !testwait.Until(func() bool { cls = backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify); return len(cls) >= n }) {
			t.Fatalf("no clarify %d:\n%s", n, h.Describe(s))
		}
	}
	clarifies(1)
	if cls[0]["kind"] != "clarify" || !strings.Contains(fmt.Sprint(cls[0]["questions"]), "User name") {
		t.Fatalf("question card = %v", cls[0])
	}
	if err := h.Svc.Approvals().RespondClarify(ctx, sid, cls[0]["clarify_id"].(string), []any{"ada"}); err != nil {
		t.Fatal(err)
	}
	clarifies(2)
	vaultName, _ := cls[1]["name"].(string)
	if cls[1]["kind"] != "vault" || !regexp.MustCompile(`^MCP_VAULTY_PASSWORD_[0-9A-F]{32}$`).MatchString(vaultName) {
		t.Fatalf("vault card = %v", cls[1])
	}
	if _, err := h.Svc.Approvals().RespondVault(ctx, sid, cls[1]["clarify_id"].(string), backend.VaultAnswer{Value: secret}, true); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	if sent := <-got; sent["user"] != "ada" || sent["password"] != secret {
		t.Fatalf("the server got %v", sent)
	}
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)
	if len(done) != 1 || !strings.Contains(contentText(done[0]), "logged in as ada with [REDACTED]") {
		t.Fatalf("tool result = %v", done)
	}
	if v, err := keyring.Get(vault.Service, "vault:"+vaultName); err != nil || v != secret {
		t.Fatalf("keychain has %q, %v", v, err)
	}
	var leaks []string
	for _, f := range frames {
		if bytes.Contains(f.Data, []byte(secret)) {
			leaks = append(leaks, "frame "+f.Event)
		}
	}
	journal, _ := h.Svc.Turns().StreamSince(ctx, s, 0)
	for _, f := range journal {
		if bytes.Contains(f.Data, []byte(secret)) {
			leaks = append(leaks, "journal "+f.Event)
		}
	}
	for _, r := range h.Provider.Requests() {
		if bytes.Contains(r.Body, []byte(secret)) {
			leaks = append(leaks, "a request to the model")
		}
	}
	v, _ := h.Svc.Chats().GetSession(ctx, sid)
	if b, _ := json.Marshal(v); bytes.Contains(b, []byte(secret)) {
		leaks = append(leaks, "GetSession")
	}
	_ = filepath.WalkDir(h.Svc.Paths.DataDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(secret)) {
				leaks = append(leaks, p)
			}
		}
		return nil
	})
	if len(leaks) > 0 {
		t.Fatalf("the password leaked to: %v", leaks)
	}
}

// TestMCPElicitationDeclinedAndCancelled: the real server-everything's elicitation tool,
// called twice; its first card (marked elicitation) is declined, the second's
// cancelled through DismissElicitation, and the server gets decline then cancel (it
// echoes the action into the tool's result). Another action is refused, the card kept.
func TestMCPElicitationDeclinedAndCancelled(t *testing.T) {
	h, _, srv := mcpHarness(t, nil)
	h.addServer(srv.EverythingServer("every"), nil)
	ctx := context.Background()
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "every__trigger-elicitation-request", map[string]any{}),
		backendtest.ToolTurn("c2", "every__trigger-elicitation-request", map[string]any{}),
		providertest.TextTurn("Noted."))
	sid := h.NewSession()
	s := h.Start(sid, "ask me")
	h.answer(s, sid, 1, protocol.ChoiceOnce)
	var cls []map[string]any
	clarifies := func(n int) {
		if !testwait.Until(func() bool { cls = backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify); return len(cls) >= n }) {
			t.Fatalf("no clarify %d:\n%s", n, h.Describe(s))
		}
	}
	clarifies(1)
	if cls[0]["elicitation"] != true {
		t.Fatalf("the card is not marked an elicitation: %v", cls[0])
	}
	var bad *backend.InvalidAnswerError
	if err := h.Svc.Approvals().DismissElicitation(ctx, sid, cls[0]["clarify_id"].(string), "accept"); !errors.As(err, &bad) {
		t.Fatalf("DismissElicitation(accept) = %v, want an InvalidAnswerError", err)
	}
	if err := h.Svc.Approvals().DismissElicitation(ctx, sid, cls[0]["clarify_id"].(string), protocol.ElicitDecline); err != nil {
		t.Fatal(err)
	}
	h.answer(s, sid, 2, protocol.ChoiceOnce)
	clarifies(2)
	if err := h.Svc.Approvals().DismissElicitation(ctx, sid, cls[1]["clarify_id"].(string), protocol.ElicitCancel); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)
	if len(done) != 2 || !strings.Contains(contentText(done[0]), `"action": "decline"`) || !strings.Contains(contentText(done[1]), `"action": "cancel"`) {
		t.Fatalf("tool results = %v", done)
	}
}
