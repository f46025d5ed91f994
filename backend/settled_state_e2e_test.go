package backend_test

import (
	"context"
	"testing"

	"talaria/backend/backendtest"
	"talaria/internal/testwait"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestSettledTurnsLeaveNoState: once their turns have settled, sessions leave nothing in
// the host's per-session and per-turn state (issue 24, item 5): no live stream, no
// pending-queue entry (also for a session whose approval was asked and answered, and one
// whose approval was left when its turn was cancelled), no extra bus subscriber. Turns
// in 30 sessions through the real sidecar.
func TestSettledTurnsLeaveNoState(t *testing.T) {
	h := backendtest.New(t, "")
	h.WithWorkspace()
	ctx := context.Background()
	subs := h.Svc.Bus.Subscribers()
	for range 30 {
		sid := h.NewSession()
		h.Provider.Enqueue(providertest.TextTurn("answer ", "one"))
		h.WaitEnd(send(h, sid, "question"))
	}
	// An approval answered: its session is forgotten once the turn settles.
	sid := h.NewSession()
	h.Provider.Enqueue(backendtest.ToolTurn("c1", "terminal", map[string]any{"command": "rm -rf build"}), providertest.TextTurn("ok"))
	s := h.Start(sid, "clean up")
	h.WaitEvent(s, protocol.EvApproval)
	if n := h.Svc.Runner.Pending().Sessions(); n != 1 {
		t.Fatalf("an approval waits in one session, the pending queues hold %d", n)
	}
	id := backendtest.FramesOf(h.Snapshot(s), protocol.EvApproval)[0]["approval_id"].(string)
	if err := h.Svc.Approvals().RespondApproval(ctx, sid, id, protocol.ChoiceDeny); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(s)
	// An approval left waiting when its turn is cancelled.
	sid2 := h.NewSession()
	h.Provider.Enqueue(backendtest.ToolTurn("c2", "terminal", map[string]any{"command": "rm -rf dist"}))
	s2 := h.Start(sid2, "clean up more")
	h.WaitEvent(s2, protocol.EvApproval)
	if err := h.Svc.Turns().Cancel(s2); err != nil {
		t.Fatal(err)
	}
	h.WaitEnd(s2)

	testwait.For(t, "no live stream", func() bool { return len(h.Svc.Runner.LiveStreams()) == 0 })
	if n := h.Svc.Runner.Pending().Sessions(); n != 0 {
		t.Fatalf("after every turn settled the pending queues still hold %d sessions", n)
	}
	if n := h.Svc.Bus.Subscribers(); n != subs {
		t.Fatalf("bus subscribers %d after the turns, %d before", n, subs)
	}
}
