package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/builtin/danger"
	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
)

// Approvals: the agent's own permission requests (session/request_permission, with the
// options the agent offers) and Talaria's approval of dangerous commands the agent runs
// through terminal/create (the built-in runtime's rules: danger patterns, YOLO,
// session grants, the always-allowlist). Both park a waiter until approval.respond,
// approval.yolo, the timeout or the end of the turn.

const maxApprovalCmd = 16 << 10

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

// ask is one thing a terminal/create or a file write needs the user's yes for: a
// dangerous-command pattern, or leaving the chat's sandbox. onceOnly asks are never
// allowed by a session grant or the allowlist (only YOLO), and offer once or deny.
type ask struct {
	key, description   string
	spanStart, spanEnd int
	onceOnly           bool
	sandbox            string // how the command runs if allowed
}

// approveCommand applies Talaria's rules to a command the agent runs through
// terminal/create under policy run: hardline patterns are refused; any other dangerous
// pattern, and running without a sandbox where none is available, needs an approval
// (the built-in runtime's cards) unless YOLO, a session grant or the allowlist allows
// it. It returns "" when the command may run, else why not (for the agent), and the
// policy it runs under.
func (t *turn) approveCommand(ctx context.Context, command string) (sandbox.Policy, string) {
	run := t.policy
	matches := danger.Check(command)
	for _, m := range matches {
		if m.Hardline {
			t.r.log.Info("command refused", "pattern", m.Key)
			return run, fmt.Sprintf("refused: this command %s; it is never run, with or without approval. Do not try it another way.", m.Description)
		}
	}
	var asks []ask
	if st := t.r.sandboxStatus(); run.Confined() && !st.Available {
		run.Mode = sandbox.ModeFullAccess
		asks = append(asks, ask{key: protocol.PatternUnsandboxed, onceOnly: true,
			description: "would run without a sandbox, because " + st.Reason + "; it could read and change any of your files"})
	}
	how := run.String()
	if !run.Confined() {
		how = "outside the sandbox"
	}
	var all []ask
	for _, m := range matches {
		all = append(all, ask{key: m.Key, description: m.Description, spanStart: m.Start, spanEnd: m.End, sandbox: how})
	}
	for _, a := range asks {
		a.sandbox = how
		all = append(all, a)
	}
	for _, a := range all {
		if why := t.approve(ctx, command, a); why != "" {
			return run, why
		}
	}
	return run, ""
}

// approve asks the user about one ask unless it is allowed already. It returns "" when
// the call may go on, else the message for the agent.
func (t *turn) approve(ctx context.Context, command string, a ask) string {
	t.r.mu.Lock()
	mem := t.r.sessionLocked(t.p.SessionID)
	allowed := mem.yolo || (!a.onceOnly && (mem.grants[a.key] || t.allow[a.key]))
	t.r.mu.Unlock()
	if allowed {
		return ""
	}
	w := &waiter{id: newID("ap_"), sessionID: t.p.SessionID, t: t, key: a.key, onceOnly: a.onceOnly, ch: make(chan answer, 1)}
	if !t.r.park(w) {
		return "interrupted: the turn was stopped; it was not run."
	}
	shown, _ := tools.Cap(command, maxApprovalCmd)
	frame := protocol.ApprovalData{ApprovalID: w.id, Command: shown, Description: a.description,
		Pattern: a.key, TimeoutS: int(t.approvalTimeout / time.Second), Sandbox: a.sandbox}
	if a.onceOnly {
		frame.Choices = []string{protocol.ChoiceOnce, protocol.ChoiceDeny}
	}
	if a.spanEnd > a.spanStart && a.spanEnd <= len(shown) {
		frame.SpanStart, frame.SpanEnd = a.spanStart, a.spanEnd
	}
	t.send(protocol.EvApproval, frame)
	t.r.log.Info("approval requested", "approval_id", w.id, "pattern", a.key)
	ans := t.r.wait(ctx, w, t.approvalTimeout)
	resolved := protocol.ResolvedData{ApprovalID: w.id, Reason: ans.reason}
	if ans.reason == protocol.ResolvedAnswered {
		resolved.Choice = ans.choice
	}
	t.send(protocol.EvApprovalResolved, resolved)
	switch {
	case ans.reason == protocol.ResolvedYolo:
	case ans.reason == protocol.ResolvedAnswered && ans.choice != protocol.ChoiceDeny:
	case ans.reason == protocol.ResolvedAnswered:
		return fmt.Sprintf("denied: the user did not allow this (it %s); it was not run. Do not run it another way; ask the user or choose a different approach.", a.description)
	case ans.reason == protocol.ResolvedTimeout:
		return fmt.Sprintf("denied: nobody answered the approval request within %d seconds (it %s); it was not run.", int(t.approvalTimeout/time.Second), a.description)
	default:
		return "interrupted: the turn was stopped while this waited for approval; it was not run."
	}
	return ""
}

// approveWrite asks before fs/write_text_file writes in a read-only session.
func (t *turn) approveWrite(ctx context.Context, path string) string {
	if t.policy.Mode != sandbox.ModeReadOnly {
		return ""
	}
	const verb = "write "
	return t.approve(ctx, verb+path, ask{key: protocol.PatternSandboxWrite, sandbox: "workspace-write, no network",
		description: "writes to the workspace, which this chat's sandbox keeps read-only", spanStart: len(verb), spanEnd: len(verb) + len(path)})
}
