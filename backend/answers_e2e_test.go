package backend_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"talaria/backend"
	"talaria/backend/backendtest"
	"talaria/backend/vault"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// An answer that never reaches the agent (the real sidecar never reads it: its pipe
// loses the first answer to each card) fails visibly and leaves the card waiting: the
// window's view still shows it, nothing of the answer is kept (no allowlist entry, no
// keychain entry), and answering again is delivered and ends the turn. Covers the
// three answer paths: approvals, clarifies, vault clarifies.
func TestUndeliveredAnswerKeepsTheCard(t *testing.T) {
	keyring.MockInit()
	h := backendtest.NewWith(t, "lose-first-answer", func(o *backend.Options) {
		o.Keyring = vault.OSKeyring{}
		o.ApprovalTimeout = testwait.Timeout
	})
	h.WithWorkspace()
	sid := h.NewSession()
	lost := func(err error) {
		t.Helper()
		var u *backend.UndeliveredAnswerError
		if !errors.As(err, &u) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("an answer the agent never got = %v, want *UndeliveredAnswerError (deadline exceeded)", err)
		}
	}
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	ctx := context.Background()

	// An approval answered "always": lost, then delivered.
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("ok"))
	s := h.Start(sid, "clean up")
	h.WaitEvent(s, protocol.EvApproval)
	id := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]["approval_id"].(string)
	lost(h.Svc.Approvals().RespondApproval(short(), sid, id, protocol.ChoiceAlways))
	if pv, _ := h.Svc.Approvals().GetPending(ctx, sid); pv.ApprovalCount != 1 {
		t.Fatalf("after a lost answer the approval is gone: %+v", pv)
	}
	if rules, _ := h.Svc.Approvals().GetAllowlist(ctx); len(rules) != 0 {
		t.Fatalf("a lost \"always\" was kept in the allowlist: %+v", rules)
	}
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, id, protocol.ChoiceDeny); err != nil {
		t.Fatalf("answering again: %v", err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	if pv, _ := h.Svc.Approvals().GetPending(ctx, sid); pv.ApprovalCount != 0 {
		t.Fatalf("a delivered answer left the card: %+v", pv)
	}

	// A clarify.
	h.Provider.Enqueue(backendtest.ToolTurn("q1", "clarify", map[string]any{"questions": []map[string]any{
		{"question": "Which colour?", "choices": []string{"red", "blue"}}}}), providertest.TextTurn("Blue."))
	s = h.Start(sid, "paint it")
	h.WaitEvent(s, protocol.EvClarify)
	id = backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify)[0]["clarify_id"].(string)
	lost(h.Svc.Approvals().RespondClarify(short(), sid, id, []any{"blue"}))
	if pv, _ := h.Svc.Approvals().GetPending(ctx, sid); pv.ClarifyCount != 1 {
		t.Fatalf("after a lost answer the clarify is gone: %+v", pv)
	}
	if err := h.Svc.Approvals().RespondClarify(ctx, sid, id, []any{"blue"}); err != nil {
		t.Fatalf("answering again: %v", err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)

	// A vault clarify answered with remember: the keychain gets it only once delivered.
	const secret = "tok_Lost_then_Found_77"
	h.Provider.Enqueue(backendtest.ToolTurn("v1", "request_secret", map[string]any{"name": "API_TOKEN", "reason": "to call the API"}),
		providertest.TextTurn("Done."))
	s = h.Start(sid, "call it")
	h.WaitEvent(s, protocol.EvClarify)
	id = backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify)[0]["clarify_id"].(string)
	_, err := h.Svc.Approvals().RespondVault(short(), sid, id, backend.VaultAnswer{Value: secret}, true)
	lost(err)
	if _, err := keyring.Get(vault.Service, "vault:API_TOKEN"); err == nil {
		t.Fatal("a secret the agent never got was saved in the keychain")
	}
	if pv, _ := h.Svc.Approvals().GetPending(ctx, sid); pv.ClarifyCount != 1 {
		t.Fatalf("after a lost answer the secret request is gone: %+v", pv)
	}
	if res, err := h.Svc.Approvals().RespondVault(ctx, sid, id, backend.VaultAnswer{Value: secret}, true); err != nil || res.Kept != backend.KeptKeychain {
		t.Fatalf("answering again: %+v, %v", res, err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	if v, err := keyring.Get(vault.Service, "vault:API_TOKEN"); err != nil || v != secret {
		t.Fatalf("keychain after delivery: %q, %v", v, err)
	}
}

// YOLO's stored flag (what the window shows) never says "guarded" while the running
// turn still auto-approves: turning it off is told to the turn first, and a call that
// never reaches the real sidecar leaves YOLO on; turning it on whose call is lost is
// taken back from the turn before the flag shows it off again, and the turn then asks
// for approval as shown.
func TestYoloFlagFollowsTheTurn(t *testing.T) {
	h := backendtest.NewWith(t, "lose-first-answer", func(o *backend.Options) { o.ApprovalTimeout = testwait.Timeout })
	ws := h.WithWorkspace()
	if err := os.MkdirAll(filepath.Join(ws, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	sid := h.NewSession()
	ctx := context.Background()
	short := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		t.Cleanup(cancel)
		return ctx
	}
	shown := func() bool {
		t.Helper()
		pv, err := h.Svc.Approvals().GetPending(ctx, sid)
		if err != nil {
			t.Fatal(err)
		}
		return pv.Yolo
	}
	if err := h.Svc.Approvals().SetYolo(ctx, sid, true, ""); err != nil || !shown() {
		t.Fatalf("YOLO on between turns: %v, shown %v", err, shown())
	}
	h.Provider.Enqueue(
		backendtest.ToolTurn("q1", "clarify", map[string]any{"questions": []map[string]any{{"question": "Go on?", "choices": []string{"yes", "no"}}}}),
		backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}),
		providertest.TextTurn("not deleted"))
	s := h.Start(sid, "clean up")
	h.WaitEvent(s, protocol.EvClarify) // the turn runs with YOLO on, parked on a question

	if err := h.Svc.Approvals().SetYolo(short(), sid, false, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("YOLO off that never reached the turn = %v", err)
	}
	if !shown() {
		t.Fatal("YOLO shown off while the turn was never told: it still auto-approves")
	}
	if err := h.Svc.Approvals().SetYolo(ctx, sid, false, ""); err != nil || shown() {
		t.Fatalf("YOLO off: %v, shown %v", err, shown())
	}
	if err := h.Svc.Approvals().SetYolo(short(), sid, true, ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("YOLO on that never reached the turn = %v", err)
	}
	if shown() {
		t.Fatal("a YOLO on that failed (and was taken back) is still shown on")
	}

	// The turn is guarded, as shown: the dangerous command waits for approval.
	id := backendtest.FramesOf(h.Snapshot(s), protocol.EvClarify)[0]["clarify_id"].(string)
	_ = h.Svc.Approvals().RespondClarify(short(), sid, id, []any{"yes"}) // the first answer is lost
	if err := h.Svc.Approvals().RespondClarify(ctx, sid, id, []any{"yes"}); err != nil {
		t.Fatal(err)
	}
	h.WaitEvent(s, protocol.EvApproval)
	ap := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]["approval_id"].(string)
	_ = h.Svc.Approvals().RespondApproval(short(), sid, ap, protocol.ChoiceDeny)
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, ap, protocol.ChoiceDeny); err != nil {
		t.Fatal(err)
	}
	h.CheckFrames(s, h.WaitEnd(s), protocol.EvDone)
	if _, err := os.Stat(filepath.Join(ws, "build")); err != nil {
		t.Fatal("the command ran without approval")
	}
}
