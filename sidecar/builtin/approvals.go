package builtin

import (
	"context"
	"time"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
)

// The built-in runtime's side of the shared approval gate (package gate): asking the
// user, or telling the window a grant allowed it, and waiting for the answer.

// asker is the built-in runtime's side of the shared approval gate for one tool call;
// justification is the model's reason for a sandbox escalation, shown on its card.
type asker struct {
	t             *turn
	justification string
}

// Ask allows a without asking when YOLO, a session grant or the allowlist does (an
// approval_auto frame says so), else sends an approval frame and waits for the
// answer, the approval timeout or the end of the turn.
func (k *asker) Ask(ctx context.Context, command string, a gate.Ask) gate.Outcome {
	t := k.t
	w := &waiter{id: newID("ap_"), sessionID: t.p.SessionID, kind: kindApproval, key: a.Key, onceOnly: a.OnceOnly, ch: make(chan answer, 1)}
	red := t.r.redactor()
	if t.r.park(w, a.Key, t.allow) {
		shown, _ := tools.Cap(red.String(command), gate.MaxApprovalCommand)
		decision := protocol.AutoAllowed
		if w.allowedBy == gate.ByYolo {
			decision = protocol.AutoYolo
		}
		t.send(protocol.EvApprovalAuto, protocol.ApprovalAutoData{TID: t.callID, Command: shown, Description: a.Description,
			Pattern: a.Key, Decision: decision, DecidedBy: w.allowedBy, Sandbox: a.Sandbox})
		return gate.Outcome{Reason: gate.Auto}
	}
	t.send(protocol.EvApproval, gate.Frame(w.id, command, a, red, t.approvalTimeout, k.justification))
	t.log.Info("approval requested", "approval_id", w.id, "pattern", a.Key)
	ans, reason := t.wait(ctx, w, t.approvalTimeout)
	resolved := protocol.ResolvedData{ApprovalID: w.id, Reason: reason}
	if reason == protocol.ResolvedAnswered {
		resolved.Choice = ans.choice
	}
	t.send(protocol.EvApprovalResolved, resolved)
	t.log.Info("approval resolved", "approval_id", w.id, "pattern", a.Key, "reason", reason, "choice", ans.choice)
	return gate.Outcome{Reason: reason, Choice: ans.choice}
}

// approveWrite asks before a file tool writes in a read-only session.
func (t *turn) approveWrite(ctx context.Context, tool, path string) (bool, toolResult) {
	command, a, ok := gate.Write(t.policy, tool, path)
	if !ok {
		return true, toolResult{}
	}
	if msg := gate.Approve(ctx, &asker{t: t}, command, []gate.Ask{a}, t.approvalTimeout); msg != "" {
		return false, errResult("%s", msg)
	}
	return true, toolResult{}
}

// wait blocks until the waiter is answered, the timeout passes or ctx ends, and
// returns the answer and the resolution reason.
func (t *turn) wait(ctx context.Context, w *waiter, timeout time.Duration) (answer, string) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-w.ch:
		if ctx.Err() != nil {
			return answer{}, protocol.ResolvedInterrupted
		}
		return a, a.reason
	case <-timer.C:
		if t.r.withdraw(w) {
			return answer{}, protocol.ResolvedTimeout
		}
		a := <-w.ch
		return a, a.reason
	case <-ctx.Done():
		if !t.r.withdraw(w) {
			<-w.ch // answered at the same moment; the turn is stopping anyway
		}
		return answer{}, protocol.ResolvedInterrupted
	}
}
