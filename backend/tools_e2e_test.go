package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/pending"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

func TestFileEditShowsDiff(t *testing.T) {
	h := backendtest.New(t, "")
	ws := h.WithWorkspace()
	h.Provider.Enqueue(
		backendtest.ToolTurn("call_1", "write_file", map[string]any{"path": "notes/hello.txt", "content": "hello\nworld\n"}),
		backendtest.ToolTurn("call_2", "patch", map[string]any{"path": "notes/hello.txt", "old_string": "hello", "new_string": "goodbye"}),
		providertest.TextTurn("Edited."),
		providertest.TextTurn("Edit notes"))
	sid := h.NewSession()
	s := h.Start(sid, "write and edit a file")
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	b, err := os.ReadFile(filepath.Join(ws, "notes", "hello.txt"))
	if err != nil || string(b) != "goodbye\nworld\n" {
		t.Fatalf("file = %q, %v", b, err)
	}
	done := backendtest.FramesOf(frames, protocol.EvToolComplete)
	if len(done) != 2 {
		t.Fatalf("%d tool_complete frames:\n%s", len(done), h.Describe(s))
	}
	patch := done[1]
	ed, _ := patch["edit_diff"].(map[string]any)
	if patch["name"] != "patch" || patch["is_error"] != false || ed == nil || ed["added"].(float64) != 1 || ed["removed"].(float64) != 1 ||
		!strings.Contains(patch["result_diff"].(string), "+goodbye") {
		t.Fatalf("patch tool_complete = %v", patch)
	}
	if files := ed["files"].([]any); len(files) != 1 || !strings.HasSuffix(files[0].(string), "hello.txt") {
		t.Fatalf("edit_diff files = %v", files)
	}
	if _, ok := patch["duration"].(float64); !ok {
		t.Fatalf("no duration: %v", patch)
	}
	// The transcript keeps the tool calls and their results, in order.
	var roles []string
	for _, m := range h.Messages(sid) {
		r := m.Role
		if len(m.ToolCalls) > 0 {
			r += "(" + m.ToolCalls[0].Function.Name + ")"
		}
		roles = append(roles, r)
	}
	if got := strings.Join(roles, " "); got != "user assistant(write_file) tool assistant(patch) tool assistant" {
		t.Fatalf("transcript roles = %s", got)
	}
}

func TestDangerousCommandApproval(t *testing.T) {
	// The approvals this test answers wait as long as any test waits: a stalled machine
	// never expires one (the expiry has its own test below).
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = testwait.Timeout })
	ws := h.WithWorkspace()
	if err := os.MkdirAll(filepath.Join(ws, "build", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	exists := func() bool { _, err := os.Stat(filepath.Join(ws, "build")); return err == nil }
	sid := h.NewSession()
	ctx := context.Background()

	// Deny: the command does not run and the model is told.
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("ok, not deleting"))
	s := h.Start(sid, "clean up")
	h.WaitEvent(s, protocol.EvApproval)
	ap := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]
	if ap["command"] != "rm -rf build" || ap["pattern"] == "" || ap["pending_count"].(float64) != 1 {
		t.Fatalf("approval = %v", ap)
	}
	pv, _ := h.Svc.Approvals().GetPending(ctx, sid)
	if pv.ApprovalCount != 1 || !bytes.Contains(pv.Approval, []byte(ap["approval_id"].(string))) {
		t.Fatalf("pending view = %+v", pv)
	}
	// An answer naming another id fails closed: stale, nothing sent.
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, "no-such-id", "once"); !errors.Is(err, pending.ErrStale) {
		t.Fatalf("stale answer = %v", err)
	}
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), "deny"); err != nil {
		t.Fatal(err)
	}
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), "once"); !errors.Is(err, pending.ErrStale) {
		t.Fatalf("second answer = %v", err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	if !exists() {
		t.Fatal("denied command ran")
	}
	reqs := backendtest.StreamRequests(h.Provider.Requests())
	if tm := backendtest.ToolMessages(reqs, 1); len(tm) != 1 || !strings.Contains(strings.ToLower(tm[0]), "denied") {
		t.Fatalf("model was told %q", tm)
	}

	// Session: allowed once for the session, the same pattern passes next time.
	h.Provider.Enqueue(backendtest.ToolTurn("c3", "terminal", map[string]any{"command": "rm -rf build/x"}), providertest.TextTurn("deleted x"))
	s = h.Start(sid, "delete x")
	h.WaitEvent(s, protocol.EvApproval)
	ap = backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap["approval_id"].(string), "session"); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(s)
	if _, err := os.Stat(filepath.Join(ws, "build", "x")); err == nil {
		t.Fatal("approved command did not run")
	}
	h.Provider.Enqueue(backendtest.ToolTurn("c4", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("deleted build"))
	s = h.Start(sid, "delete build")
	frames := h.WaitEnd(s)
	if n := len(backendtest.FramesOf(frames, protocol.EvApproval)); n != 0 || exists() {
		t.Fatalf("session-allowed pattern asked again (%d approvals) or did not run (exists %v)", n, exists())
	}
}

// An approval nobody answers is denied with reason timeout once the approval timeout
// (1 s here, the sidecar's clock) has passed; a slow machine only makes it later.
func TestDangerousCommandApprovalTimesOut(t *testing.T) {
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = time.Second })
	ws := h.WithWorkspace()
	if err := os.MkdirAll(filepath.Join(ws, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	sid := h.NewSession()
	h.Provider.Enqueue(backendtest.ToolTurn("c2", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("timed out"))
	s := h.Start(sid, "clean up again")
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	res := backendtest.FramesOf(frames, protocol.EvApprovalResolved)
	if _, err := os.Stat(filepath.Join(ws, "build")); len(res) != 1 || res[0]["reason"] != protocol.ResolvedTimeout || err != nil {
		t.Fatalf("timeout: resolved %v, build: %v", res, err)
	}
	if tm := backendtest.ToolMessages(backendtest.StreamRequests(h.Provider.Requests()), 1); len(tm) != 1 || !strings.Contains(tm[0], "nobody answered") {
		t.Fatalf("model was told %q", tm)
	}
}

func TestClarifyRoundTrip(t *testing.T) {
	h := backendtest.New(t, "")
	h.WithWorkspace()
	h.Provider.Enqueue(backendtest.ToolTurn("q1", "clarify", map[string]any{"questions": []map[string]any{
		{"question": "Which colour?", "choices": []string{"red", "blue"}},
		{"question": "Which sizes?", "choices": []string{"S", "M", "L"}, "multi_select": true},
	}}), providertest.TextTurn("Blue it is."), providertest.TextTurn("Colours"))
	sid := h.NewSession()
	s := h.Start(sid, "paint it")
	h.WaitEvent(s, protocol.EvClarify)
	cl := backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify)[0]
	if cl["kind"] != "clarify" || len(cl["questions"].([]any)) != 2 {
		t.Fatalf("clarify = %v", cl)
	}
	id := cl["clarify_id"].(string)
	if err := h.Svc.Approvals().RespondClarify(context.Background(), sid, id, []any{"blue"}); err == nil {
		t.Fatal("one answer for two questions was accepted")
	}
	if err := h.Svc.Approvals().RespondClarify(context.Background(), sid, id, []any{"blue", []any{"S", "L"}}); err != nil {
		t.Fatal(err)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	if r := backendtest.FramesOf(frames, protocol.EvClarifyResolved); len(r) != 1 || r[0]["pending_count"].(float64) != 0 {
		t.Fatalf("clarify_resolved = %v", r)
	}
	tm := backendtest.ToolMessages(backendtest.StreamRequests(h.Provider.Requests()), 1)
	if len(tm) != 1 || !strings.Contains(tm[0], "blue") || !strings.Contains(tm[0], "L") {
		t.Fatalf("model got %q", tm)
	}
}

func TestVaultRoundTripNeverLeaksTheSecret(t *testing.T) {
	keyring.MockInit()
	const secret = "ghp_Sup3rSecretValue_42"
	h := backendtest.NewWith(t, "", func(o *backend.Options) { o.Keyring = vault.OSKeyring{} })
	h.WithWorkspace()
	ctx := context.Background()
	h.Provider.Enqueue(
		backendtest.ToolTurn("v1", "request_secret", map[string]any{"name": "GITHUB_TOKEN", "reason": "to push the branch"}),
		backendtest.ToolTurn("v2", "terminal", map[string]any{"command": "echo token=$GITHUB_TOKEN"}),
		providertest.TextTurn("Pushed."))
	h.Provider.EnqueueAux(providertest.TextTurn("Push"))
	sid := h.NewSession()
	s := h.Start(sid, "push it")
	h.WaitEvent(s, protocol.EvClarify)
	cl := backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify)[0]
	if cl["kind"] != "vault" || cl["name"] != "GITHUB_TOKEN" || cl["saved_available"] != false || cl["keyring_available"] != true {
		t.Fatalf("vault clarify = %v", cl)
	}
	res, err := h.Svc.Approvals().RespondVault(ctx, sid, cl["clarify_id"].(string), backend.VaultAnswer{Value: secret}, true)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); bytes.Contains(b, []byte(secret)) || res.Kept != "keychain" {
		t.Fatalf("reply = %s", b)
	}
	frames := h.WaitEnd(s)
	h.CheckFrames(s, frames, protocol.EvDone)
	// The command saw the secret; its output reached nobody unredacted.
	term := backendtest.FramesOf(frames, protocol.EvToolComplete)
	if len(term) != 2 || !strings.Contains(term[1]["preview"].(string), "token=[REDACTED]") {
		t.Fatalf("terminal result = %v", term)
	}
	if v, err := keyring.Get(vault.Service, "vault:GITHUB_TOKEN"); err != nil || v != secret {
		t.Fatalf("keychain has %q, %v", v, err)
	}

	// Search everything for the secret: frames, journal, SQLite files, logs, the model's requests.
	leaks := []string{}
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
		t.Fatalf("the secret leaked to: %v", leaks)
	}

	// Next time the saved one can be used without typing it.
	h.Provider.Enqueue(backendtest.ToolTurn("v3", "request_secret", map[string]any{"name": "GITHUB_TOKEN", "reason": "again"}), providertest.TextTurn("ok"))
	s = h.Start(sid, "again")
	h.WaitEvent(s, protocol.EvClarify)
	cl = backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify)[0]
	if cl["saved_available"] != true {
		t.Fatalf("saved secret not offered: %v", cl)
	}
	if _, err := h.Svc.Approvals().RespondVault(ctx, sid, cl["clarify_id"].(string), backend.VaultAnswer{UseSaved: true}, false); err != nil {
		t.Fatal(err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
}
