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
	"talaria/backend/pending"
	"talaria/backend/turn"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// toolTurn scripts a model turn that calls one tool.
func toolTurn(id, name string, args any) providertest.Turn {
	b, _ := json.Marshal(args)
	return providertest.Turn{Chunks: []providertest.Chunk{
		{ToolCalls: []providertest.ToolCallDelta{{Index: 0, ID: id, Name: name}}},
		{ToolCalls: []providertest.ToolCallDelta{{Index: 0, Arguments: string(b)}}},
	}}
}

// withWorkspace points the session's tools at a fresh folder.
func (h *harness) withWorkspace() string {
	h.t.Helper()
	ws := h.t.TempDir()
	if _, err := h.svc.SaveSettings(context.Background(), backend.SettingsInput{ProviderName: "scripted",
		BaseURL: h.provider.BaseURL(), Model: "scripted-model", Workspace: ws}); err != nil {
		h.t.Fatal(err)
	}
	return ws
}

// toolMessages returns the tool messages the runtime sent the model in request i.
func toolMessages(reqs []providertest.Request, i int) []string {
	var out []string
	for _, m := range reqs[i].Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

func framesOf(frames []turn.Frame, event string) []map[string]any {
	var out []map[string]any
	for _, f := range frames {
		if f.Event == event {
			var m map[string]any
			_ = json.Unmarshal(f.Data, &m)
			out = append(out, m)
		}
	}
	return out
}

func TestFileEditShowsDiff(t *testing.T) {
	h := newHarness(t, "")
	ws := h.withWorkspace()
	h.provider.Enqueue(
		toolTurn("call_1", "write_file", map[string]any{"path": "notes/hello.txt", "content": "hello\nworld\n"}),
		toolTurn("call_2", "patch", map[string]any{"path": "notes/hello.txt", "old_string": "hello", "new_string": "goodbye"}),
		providertest.TextTurn("Edited."),
		providertest.TextTurn("Edit notes"))
	sid := h.newSession()
	s := h.start(sid, "write and edit a file")
	frames := h.waitEnd(s)
	h.checkFrames(s, frames, protocol.EvDone)
	b, err := os.ReadFile(filepath.Join(ws, "notes", "hello.txt"))
	if err != nil || string(b) != "goodbye\nworld\n" {
		t.Fatalf("file = %q, %v", b, err)
	}
	done := framesOf(frames, protocol.EvToolComplete)
	if len(done) != 2 {
		t.Fatalf("%d tool_complete frames:\n%s", len(done), h.describe(s))
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
	for _, m := range h.messages(sid) {
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
	h := newHarnessWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = testwait.Timeout })
	ws := h.withWorkspace()
	if err := os.MkdirAll(filepath.Join(ws, "build", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	exists := func() bool { _, err := os.Stat(filepath.Join(ws, "build")); return err == nil }
	sid := h.newSession()
	ctx := context.Background()

	// Deny: the command does not run and the model is told.
	h.provider.Enqueue(toolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("ok, not deleting"))
	s := h.start(sid, "clean up")
	h.waitEvent(s, protocol.EvApproval)
	ap := framesOf(h.snapshot(s), protocol.EvApproval)[0]
	if ap["command"] != "rm -rf build" || ap["pattern"] == "" || ap["pending_count"].(float64) != 1 {
		t.Fatalf("approval = %v", ap)
	}
	pv, _ := h.svc.GetPending(ctx, sid)
	if pv.ApprovalCount != 1 || !bytes.Contains(pv.Approval, []byte(ap["approval_id"].(string))) {
		t.Fatalf("pending view = %+v", pv)
	}
	// An answer naming another id fails closed: stale, nothing sent.
	if err := h.svc.RespondApproval(ctx, sid, "no-such-id", "once"); !errors.Is(err, pending.ErrStale) {
		t.Fatalf("stale answer = %v", err)
	}
	if err := h.svc.RespondApproval(ctx, sid, ap["approval_id"].(string), "deny"); err != nil {
		t.Fatal(err)
	}
	if err := h.svc.RespondApproval(ctx, sid, ap["approval_id"].(string), "once"); !errors.Is(err, pending.ErrStale) {
		t.Fatalf("second answer = %v", err)
	}
	h.checkFrames(s, h.waitEnd(s), protocol.EvDone)
	if !exists() {
		t.Fatal("denied command ran")
	}
	reqs := streamRequests(h.provider.Requests())
	if tm := toolMessages(reqs, 1); len(tm) != 1 || !strings.Contains(strings.ToLower(tm[0]), "denied") {
		t.Fatalf("model was told %q", tm)
	}

	// Session: allowed once for the session, the same pattern passes next time.
	h.provider.Enqueue(toolTurn("c3", "terminal", map[string]any{"command": "rm -rf build/x"}), providertest.TextTurn("deleted x"))
	s = h.start(sid, "delete x")
	h.waitEvent(s, protocol.EvApproval)
	ap = framesOf(h.snapshot(s), protocol.EvApproval)[0]
	if err := h.svc.RespondApproval(ctx, sid, ap["approval_id"].(string), "session"); err != nil {
		t.Fatal(err)
	}
	h.waitEnd(s)
	if _, err := os.Stat(filepath.Join(ws, "build", "x")); err == nil {
		t.Fatal("approved command did not run")
	}
	h.provider.Enqueue(toolTurn("c4", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("deleted build"))
	s = h.start(sid, "delete build")
	frames := h.waitEnd(s)
	if n := len(framesOf(frames, protocol.EvApproval)); n != 0 || exists() {
		t.Fatalf("session-allowed pattern asked again (%d approvals) or did not run (exists %v)", n, exists())
	}
}

// An approval nobody answers is denied with reason timeout once the approval timeout
// (1 s here, the sidecar's clock) has passed; a slow machine only makes it later.
func TestDangerousCommandApprovalTimesOut(t *testing.T) {
	h := newHarnessWith(t, "", func(o *backend.Options) { o.ApprovalTimeout = time.Second })
	ws := h.withWorkspace()
	if err := os.MkdirAll(filepath.Join(ws, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	sid := h.newSession()
	h.provider.Enqueue(toolTurn("c2", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("timed out"))
	s := h.start(sid, "clean up again")
	frames := h.waitEnd(s)
	h.checkFrames(s, frames, protocol.EvDone)
	res := framesOf(frames, protocol.EvApprovalResolved)
	if _, err := os.Stat(filepath.Join(ws, "build")); len(res) != 1 || res[0]["reason"] != protocol.ResolvedTimeout || err != nil {
		t.Fatalf("timeout: resolved %v, build: %v", res, err)
	}
	if tm := toolMessages(streamRequests(h.provider.Requests()), 1); len(tm) != 1 || !strings.Contains(tm[0], "nobody answered") {
		t.Fatalf("model was told %q", tm)
	}
}

func TestClarifyRoundTrip(t *testing.T) {
	h := newHarness(t, "")
	h.withWorkspace()
	h.provider.Enqueue(toolTurn("q1", "clarify", map[string]any{"questions": []map[string]any{
		{"question": "Which colour?", "choices": []string{"red", "blue"}},
		{"question": "Which sizes?", "choices": []string{"S", "M", "L"}, "multi_select": true},
	}}), providertest.TextTurn("Blue it is."), providertest.TextTurn("Colours"))
	sid := h.newSession()
	s := h.start(sid, "paint it")
	h.waitEvent(s, protocol.EvClarify)
	cl := framesOf(h.snapshot(s), protocol.EvClarify)[0]
	if cl["kind"] != "clarify" || len(cl["questions"].([]any)) != 2 {
		t.Fatalf("clarify = %v", cl)
	}
	id := cl["clarify_id"].(string)
	if err := h.svc.RespondClarify(context.Background(), sid, id, []any{"blue"}); err == nil {
		t.Fatal("one answer for two questions was accepted")
	}
	if err := h.svc.RespondClarify(context.Background(), sid, id, []any{"blue", []any{"S", "L"}}); err != nil {
		t.Fatal(err)
	}
	frames := h.waitEnd(s)
	h.checkFrames(s, frames, protocol.EvDone)
	if r := framesOf(frames, protocol.EvClarifyResolved); len(r) != 1 || r[0]["pending_count"].(float64) != 0 {
		t.Fatalf("clarify_resolved = %v", r)
	}
	tm := toolMessages(streamRequests(h.provider.Requests()), 1)
	if len(tm) != 1 || !strings.Contains(tm[0], "blue") || !strings.Contains(tm[0], "L") {
		t.Fatalf("model got %q", tm)
	}
}

func TestVaultRoundTripNeverLeaksTheSecret(t *testing.T) {
	keyring.MockInit()
	const secret = "ghp_Sup3rSecretValue_42"
	h := newHarnessWith(t, "", func(o *backend.Options) { o.Keyring = vault.OSKeyring{} })
	h.withWorkspace()
	ctx := context.Background()
	h.provider.Enqueue(
		toolTurn("v1", "request_secret", map[string]any{"name": "GITHUB_TOKEN", "reason": "to push the branch"}),
		toolTurn("v2", "terminal", map[string]any{"command": "echo token=$GITHUB_TOKEN"}),
		providertest.TextTurn("Pushed."))
	h.provider.EnqueueAux(providertest.TextTurn("Push"))
	sid := h.newSession()
	s := h.start(sid, "push it")
	h.waitEvent(s, protocol.EvClarify)
	cl := framesOf(h.snapshot(s), protocol.EvClarify)[0]
	if cl["kind"] != "vault" || cl["name"] != "GITHUB_TOKEN" || cl["saved_available"] != false || cl["keyring_available"] != true {
		t.Fatalf("vault clarify = %v", cl)
	}
	res, err := h.svc.RespondVault(ctx, sid, cl["clarify_id"].(string), backend.VaultAnswer{Value: secret}, true)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); bytes.Contains(b, []byte(secret)) || res.Kept != "keychain" {
		t.Fatalf("reply = %s", b)
	}
	frames := h.waitEnd(s)
	h.checkFrames(s, frames, protocol.EvDone)
	// The command saw the secret; its output reached nobody unredacted.
	term := framesOf(frames, protocol.EvToolComplete)
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
	journal, _ := h.svc.StreamSince(ctx, s, 0)
	for _, f := range journal {
		if bytes.Contains(f.Data, []byte(secret)) {
			leaks = append(leaks, "journal "+f.Event)
		}
	}
	for _, r := range h.provider.Requests() {
		if bytes.Contains(r.Body, []byte(secret)) {
			leaks = append(leaks, "a request to the model")
		}
	}
	v, _ := h.svc.GetSession(ctx, sid)
	if b, _ := json.Marshal(v); bytes.Contains(b, []byte(secret)) {
		leaks = append(leaks, "GetSession")
	}
	_ = filepath.WalkDir(h.svc.Paths.DataDir, func(p string, d os.DirEntry, err error) error {
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
	h.provider.Enqueue(toolTurn("v3", "request_secret", map[string]any{"name": "GITHUB_TOKEN", "reason": "again"}), providertest.TextTurn("ok"))
	s = h.start(sid, "again")
	h.waitEvent(s, protocol.EvClarify)
	cl = framesOf(h.snapshot(s), protocol.EvClarify)[0]
	if cl["saved_available"] != true {
		t.Fatalf("saved secret not offered: %v", cl)
	}
	if _, err := h.svc.RespondVault(ctx, sid, cl["clarify_id"].(string), backend.VaultAnswer{UseSaved: true}, false); err != nil {
		t.Fatal(err)
	}
	h.checkFrames(s, h.waitEnd(s), protocol.EvDone)
}
