package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/builtin/danger"
	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
)

// Approvals: the agent's own permission requests (session/request_permission, with the
// options the agent offers) and Talaria's approval of dangerous commands the agent runs
// through terminal/create (the built-in runtime's rules: danger patterns, YOLO,
// session grants, the always-allowlist). Both park a waiter until approval.respond,
// approval.yolo, the timeout or the end of the turn.

// maxApprovalCmd is the most of a command an approval card shows, in bytes (the gate's).
const maxApprovalCmd = gate.MaxApprovalCommand

type waiter struct {
	id        string
	sessionID string
	t         *turn
	options   []protocol.ApprovalOption // an agent's request; nil for a command approval
	key       string                    // a command approval's pattern
	onceOnly  bool                      // answered once or deny only
	clarify   bool                      // an elicitation's clarify card (elicit.go)
	ch        chan answer               // buffered 1; written once, by whoever settles it
}

type answer struct {
	reason   string // answered, timeout, interrupted, yolo
	choice   string
	optionID string
	response json.RawMessage // a clarify's answers (clarify.respond)
	reply    chan error      // a clarify's: buffered 1, whether the answers fit the form
}

func newID(prefix string) string {
	var b [8]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand does not fail
	return prefix + hex.EncodeToString(b[:])
}

// park registers a waiter. It reports false when the turn has already stopped.
func (r *Runtime) park(w *waiter) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w.t.stopped.Load() {
		return false
	}
	r.waiters[w.id] = w
	return true
}

// settle takes a waiter out and gives it its answer; false when it was settled already.
func (r *Runtime) settle(id string, a answer) bool {
	r.mu.Lock()
	w := r.waiters[id]
	delete(r.waiters, id)
	r.mu.Unlock()
	if w == nil {
		return false
	}
	w.ch <- a
	return true
}

// releaseTurn settles every waiter of a turn as interrupted.
func (r *Runtime) releaseTurn(t *turn) {
	r.mu.Lock()
	var ids []string
	for id, w := range r.waiters {
		if w.t == t {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	for _, id := range ids {
		r.settle(id, answer{reason: protocol.ResolvedInterrupted})
	}
}

// wait blocks until the waiter is settled, the timeout passes (settled as timeout), or
// ctx (the agent's request) ends (interrupted).
func (r *Runtime) wait(ctx context.Context, w *waiter, timeout time.Duration) answer {
	if w.t != nil {
		// The user's time on a card is not the agent's silence.
		w.t.waiting.Add(1)
		defer func() {
			w.t.lastHeard.Store(time.Now().UnixNano())
			w.t.waiting.Add(-1)
		}()
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case a := <-w.ch:
		return a
	case <-timer.C:
		r.settle(w.id, answer{reason: protocol.ResolvedTimeout})
	case <-ctx.Done():
		r.settle(w.id, answer{reason: protocol.ResolvedInterrupted})
	case <-w.t.ctx.Done():
		r.settle(w.id, answer{reason: protocol.ResolvedInterrupted})
	}
	return <-w.ch
}

// respondApproval runs approval.respond. Errors: invalid_params for a choice that is
// not one of the four, or not one the approval's options stand for.
func (r *Runtime) respondApproval(p protocol.ApprovalRespondParams) (protocol.OKResult, error) {
	switch p.Choice {
	case protocol.ChoiceOnce, protocol.ChoiceSession, protocol.ChoiceAlways, protocol.ChoiceDeny:
	default:
		return protocol.OKResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("%q is not an approval choice (once, session, always, deny)", p.Choice))
	}
	r.mu.Lock()
	w := r.waiters[p.ApprovalID]
	r.mu.Unlock()
	if w == nil || w.clarify || w.sessionID != p.SessionID {
		return protocol.OKResult{OK: false}, nil
	}
	a := answer{reason: protocol.ResolvedAnswered, choice: p.Choice}
	if w.options != nil {
		opt, ok := pickOption(w.options, p.Choice, p.OptionID)
		if !ok {
			var names []string
			for _, o := range w.options {
				names = append(names, fmt.Sprintf("%s (%s)", o.Name, o.Choice))
			}
			return protocol.OKResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
				fmt.Sprintf("the agent does not offer %q here; its options are: %s", firstNonEmpty(p.OptionID, p.Choice), strings.Join(names, ", ")))
		}
		a.optionID, a.choice = opt.OptionID, opt.Choice
	} else if w.onceOnly && p.Choice != protocol.ChoiceOnce && p.Choice != protocol.ChoiceDeny {
		return protocol.OKResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			"this approval can only be answered once or deny")
	}
	// The grant is made with the settling, under one lock: a late "always" to an
	// approval already timed out or interrupted grants nothing.
	grant := w.options == nil && (p.Choice == protocol.ChoiceSession || p.Choice == protocol.ChoiceAlways)
	r.mu.Lock()
	if r.waiters[p.ApprovalID] != w {
		r.mu.Unlock()
		return protocol.OKResult{OK: false}, nil
	}
	delete(r.waiters, p.ApprovalID)
	if grant {
		r.sessionLocked(w.sessionID).grants[w.key] = true
	}
	r.mu.Unlock()
	w.ch <- a // buffered 1, and only the settler sends
	return protocol.OKResult{OK: true}, nil
}

// pickOption finds the option the user chose: by id when given (it must stand for
// choice), else the first one standing for choice; "session" takes an allow_always
// option when no option stands for it.
func pickOption(opts []protocol.ApprovalOption, choice, optionID string) (protocol.ApprovalOption, bool) {
	if optionID != "" {
		for _, o := range opts {
			if o.OptionID == optionID && (o.Choice == choice || choice == protocol.ChoiceSession && o.Kind == protocol.OptionAllowAlways) {
				return o, true
			}
		}
		return protocol.ApprovalOption{}, false
	}
	for _, o := range opts {
		if o.Choice == choice {
			return o, true
		}
	}
	if choice == protocol.ChoiceSession {
		for _, o := range opts {
			if o.Kind == protocol.OptionAllowAlways {
				return o, true
			}
		}
	}
	return protocol.ApprovalOption{}, false
}

// setYolo sets a session's YOLO and, when turning it on, lets every approval of the
// session parked now through once. It returns how many it released.
func (r *Runtime) setYolo(sessionID string, on bool) int {
	r.mu.Lock()
	r.sessionLocked(sessionID).yolo = on
	var ids []string
	if on {
		for id, w := range r.waiters {
			if w.sessionID == sessionID && !w.clarify {
				ids = append(ids, id)
			}
		}
	}
	r.mu.Unlock()
	n := 0
	for _, id := range ids {
		if r.settle(id, answer{reason: protocol.ResolvedYolo, choice: protocol.ChoiceOnce}) {
			n++
		}
	}
	return n
}

func (r *Runtime) yolo(sessionID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sessionLocked(sessionID).yolo
}

// optionChoice is the approval choice an ACP option kind stands for.
func optionChoice(kind string) string {
	switch kind {
	case protocol.OptionAllowOnce:
		return protocol.ChoiceOnce
	case protocol.OptionAllowAlways:
		return protocol.ChoiceAlways
	}
	return protocol.ChoiceDeny
}

// askPermission answers the agent's session/request_permission: an approval card with
// exactly its options. YOLO allows at once (the first allow_once option, else the
// first allow option). A timeout picks the first reject_once option (else cancels);
// a stopped turn cancels, as ACP requires of a client that sent session/cancel.
func (t *turn) askPermission(ctx context.Context, req sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
	cancelled := sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}
	selected := func(id string) sdk.RequestPermissionResponse {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{Outcome: "selected", OptionId: sdk.PermissionOptionId(id)}}}
	}
	opts := make([]protocol.ApprovalOption, 0, len(req.Options))
	for _, o := range req.Options {
		opts = append(opts, protocol.ApprovalOption{OptionID: string(o.OptionId), Name: o.Name, Kind: string(o.Kind), Choice: optionChoice(string(o.Kind))})
	}
	if len(opts) == 0 {
		return cancelled
	}
	first := func(kinds ...string) string {
		for _, k := range kinds {
			for _, o := range opts {
				if o.Kind == k {
					return o.OptionID
				}
			}
		}
		return ""
	}
	t.mu.Lock()
	diff := t.m.notePermission(req.ToolCall)
	t.mu.Unlock()
	if t.r.yolo(t.p.SessionID) {
		if id := first(protocol.OptionAllowOnce, protocol.OptionAllowAlways); id != "" {
			t.r.log.Info("permission allowed by YOLO", "session_id", t.p.SessionID)
			return selected(id)
		}
	}
	w := &waiter{id: newID("ap_"), sessionID: t.p.SessionID, t: t, options: opts, ch: make(chan answer, 1)}
	if !t.r.park(w) {
		return cancelled
	}
	title := displayTitle(deref(req.ToolCall.Title), t.p.Workspace)
	command := permissionCommand(req.ToolCall, title)
	kind := ""
	if req.ToolCall.Kind != nil {
		kind = string(*req.ToolCall.Kind)
	}
	shown, _ := tools.Cap(command, maxApprovalCmd)
	var choices []string
	for _, o := range opts {
		if !slices.Contains(choices, o.Choice) {
			choices = append(choices, o.Choice)
		}
	}
	t.send(protocol.EvApproval, protocol.ApprovalData{
		ApprovalID: w.id, Command: shown, Description: permissionDescription(t.a.name(t.r.opts.Agent), kind),
		TimeoutS: int(t.approvalTimeout / time.Second), Choices: choices, Title: title, Options: opts, Diff: diff,
		ToolCallID: string(req.ToolCall.ToolCallId),
	})
	t.r.log.Info("permission asked", "approval_id", w.id, "kind", kind, "options", len(opts))
	a := t.r.wait(ctx, w, t.approvalTimeout)
	resolved := protocol.ResolvedData{ApprovalID: w.id, Reason: a.reason}
	var resp sdk.RequestPermissionResponse
	switch a.reason {
	case protocol.ResolvedAnswered:
		resolved.Choice = a.choice
		resp = selected(a.optionID)
		for _, o := range opts {
			if o.OptionID == a.optionID && o.Kind == protocol.OptionAllowAlways {
				t.r.mu.Lock()
				m := t.r.sessionLocked(t.p.SessionID)
				if m.agentAlways == nil {
					m.agentAlways = map[string]bool{}
				}
				m.agentAlways[kind] = true
				t.r.mu.Unlock()
			}
		}
	case protocol.ResolvedYolo:
		if id := first(protocol.OptionAllowOnce, protocol.OptionAllowAlways); id != "" {
			resp = selected(id)
		} else {
			resp = cancelled
		}
	case protocol.ResolvedTimeout:
		if id := first(protocol.OptionRejectOnce, protocol.OptionRejectAlways); id != "" {
			resp = selected(id)
		} else {
			resp = cancelled
		}
	default:
		resp = cancelled
	}
	if !allows(resp, opts) {
		t.mu.Lock()
		t.m.refusePermission(req.ToolCall)
		t.mu.Unlock()
	}
	t.send(protocol.EvApprovalResolved, resolved)
	t.r.log.Info("permission resolved", "approval_id", w.id, "reason", a.reason, "choice", a.choice)
	return resp
}

// allows reports whether resp selects one of opts' allow options.
func allows(resp sdk.RequestPermissionResponse, opts []protocol.ApprovalOption) bool {
	if resp.Outcome.Selected == nil {
		return false
	}
	for _, o := range opts {
		if o.OptionID == string(resp.Outcome.Selected.OptionId) {
			return o.Kind == protocol.OptionAllowOnce || o.Kind == protocol.OptionAllowAlways
		}
	}
	return false
}

// permissionCommand is what the card shows as the thing to approve: the command of an
// execute call, else the title, else the files.
func permissionCommand(tc sdk.ToolCallUpdate, title string) string {
	if in, ok := tc.RawInput.(map[string]any); ok {
		for _, k := range []string{"command", "cmd"} {
			switch v := in[k].(type) {
			case string:
				if v != "" {
					return v
				}
			case []any:
				var parts []string
				for _, p := range v {
					if s, ok := p.(string); ok {
						parts = append(parts, s)
					}
				}
				if len(parts) > 0 {
					return strings.Join(parts, " ")
				}
			}
		}
	}
	if title != "" {
		return title
	}
	var paths []string
	for _, l := range tc.Locations {
		paths = append(paths, l.Path)
	}
	return strings.Join(paths, ", ")
}

func permissionDescription(agent, kind string) string {
	what := map[string]string{"read": "read files", "edit": "change files", "delete": "delete files", "move": "move files",
		"search": "search", "execute": "run a command", "fetch": "fetch from the network", "switch_mode": "switch mode"}[kind]
	if what == "" {
		return agent + " asks for permission"
	}
	return agent + " asks for permission to " + what
}

// approveCommand runs a command the agent runs through terminal/create under the
// shared approval gate (package gate), with the chat's policy: hardline patterns are
// refused; any other dangerous pattern, and running without a sandbox where none is
// available, needs an approval (the built-in runtime's cards) unless YOLO, a session
// grant or the allowlist allows it. It returns the policy the command runs under, and
// "" when it may run, else why not (for the agent). A command naming a path the
// chat's sandbox hides (policy.Hidden) is refused like a hardline pattern.
func (t *turn) approveCommand(ctx context.Context, command string) (sandbox.Policy, string) {
	// The paths the sandbox hides (the app's data folder) are protected as for the
	// built-in runtime's terminal tool: a command naming one is refused.
	run, why, err := gate.Run(ctx, t, gate.Command{Text: command, Policy: t.policy, Sandbox: t.r.sandboxStatus(),
		Danger: danger.Options{Protected: t.policy.Hidden}}, t.approvalTimeout)
	var refused *gate.RefusedError
	if errors.As(err, &refused) {
		t.r.log.Info("command refused", "pattern", refused.Match.Key)
	}
	return run, why
}

// Ask is the ACP runtime's side of the shared gate: it allows a without asking when
// YOLO, a session grant or the allowlist does, else sends an approval card and waits
// for the answer, the approval timeout or the end of the turn.
func (t *turn) Ask(ctx context.Context, command string, a gate.Ask) gate.Outcome {
	t.r.mu.Lock()
	mem := t.r.sessionLocked(t.p.SessionID)
	by := gate.AllowedBy(a.OnceOnly, mem.yolo, mem.grants[a.Key], t.allow[a.Key])
	t.r.mu.Unlock()
	if by != "" {
		return gate.Outcome{Reason: gate.Auto}
	}
	w := &waiter{id: newID("ap_"), sessionID: t.p.SessionID, t: t, key: a.Key, onceOnly: a.OnceOnly, ch: make(chan answer, 1)}
	if !t.r.park(w) {
		return gate.Outcome{Reason: protocol.ResolvedInterrupted}
	}
	t.send(protocol.EvApproval, gate.Frame(w.id, command, a, nil, t.approvalTimeout, ""))
	t.r.log.Info("approval requested", "approval_id", w.id, "pattern", a.Key)
	ans := t.r.wait(ctx, w, t.approvalTimeout)
	resolved := protocol.ResolvedData{ApprovalID: w.id, Reason: ans.reason}
	if ans.reason == protocol.ResolvedAnswered {
		resolved.Choice = ans.choice
	}
	t.send(protocol.EvApprovalResolved, resolved)
	return gate.Outcome{Reason: ans.reason, Choice: ans.choice}
}

// approveWrite asks before fs/write_text_file writes in a read-only session. It
// returns "" when the write may go on, else the message for the agent.
func (t *turn) approveWrite(ctx context.Context, path string) string {
	command, a, ok := gate.Write(t.policy, "write", path)
	if !ok {
		return ""
	}
	return gate.Approve(ctx, t, command, []gate.Ask{a}, t.approvalTimeout)
}
