// Package gate is the one approval gate of the sidecar: what a shell command (the
// built-in runtime's terminal tool, an ACP agent's terminal/create) or a write in a
// read-only chat needs before it runs, and how the answers to those approvals are
// read. Both runtimes call it, so the rules hold alike whichever runtime runs a turn:
//
//   - the dangerous-command check (package danger): a hardline pattern is refused,
//     with or without approval; any other pattern asks;
//   - sandbox escalation: what a command asks beyond the chat's sandbox policy
//     (network, write, full) asks, and a confined policy where no sandbox is available
//     runs unconfined only after a once-only approval;
//   - grants: YOLO allows everything but hardline patterns; a session grant or the
//     host's always-allowlist allows a pattern unless it is once-only;
//   - fail closed: an answer the gate does not know, a timeout or an interrupted turn
//     is a refusal, never a yes.
//
// Parking a waiter, sending the frames and waiting belong to each runtime (its Asker);
// the gate decides what is asked, in which order, and what the answers mean.
package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"talaria/sidecar/builtin/danger"
	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
)

// MaxApprovalCommand is the most of a command an approval frame shows, in bytes.
const MaxApprovalCommand = 16 << 10

// maxJustification is the most of a justification an approval frame shows, in bytes.
const maxJustification = 1000

// Escalations a command may ask for beyond the chat's sandbox policy (the terminal
// tool's escalate argument). "" asks for none.
const (
	EscalateNetwork = "network" // this command with network access
	EscalateWrite   = "write"   // this command may write the workspace (read-only chats)
	EscalateFull    = "full"    // this command outside the sandbox
)

// Ask is one thing a command or a write needs the user's yes for: a dangerous-command
// pattern, or leaving the chat's sandbox.
type Ask struct {
	// Key is the pattern: a danger key or a protocol.PatternSandbox*/PatternUnsandboxed.
	Key string
	// Description says what the command does, for the card and the refusal message.
	Description string
	// SpanStart and SpanEnd are byte offsets into the command of the part that
	// matched (both 0 when none).
	SpanStart, SpanEnd int
	// OnceOnly asks are allowed only once at a time (or by YOLO): never by a session
	// grant or the allowlist, and they offer once or deny.
	OnceOnly bool
	// Sandbox says how the command runs if allowed, e.g. "workspace-write, no network".
	Sandbox string
}

// Command is what Check looks at: a shell command and the sandbox it would run in.
type Command struct {
	// Text is the command line as the user is shown it.
	Text string
	// Policy is the chat's sandbox policy.
	Policy sandbox.Policy
	// Escalate is one of the Escalate* constants or "".
	Escalate string
	// Sandbox is whether confinement is available on this machine.
	Sandbox sandbox.Status
	// Danger are the options of the dangerous-command check (the protected paths).
	Danger danger.Options
}

// Plan is what a command needs to run: the policy it runs under if every ask is
// allowed, and the asks, in the order they are asked (danger patterns first).
type Plan struct {
	Run  sandbox.Policy
	Asks []Ask
}

// RefusedError is a command that matched a hardline pattern: it is never run.
type RefusedError struct {
	Match danger.Match
}

// Error is the message for the agent.
func (e *RefusedError) Error() string {
	return fmt.Sprintf("refused: this command %s; it is never run, with or without approval. Do not try it another way.", e.Match.Description)
}

// EscalateError is an escalate value that is none of the Escalate* constants.
type EscalateError struct {
	Value string
}

// Error is the message for the agent, which names the accepted values.
func (e *EscalateError) Error() string {
	v := e.Value
	if len(v) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut] + "…"
	}
	return fmt.Sprintf("escalate must be %q, %q or %q, not %q", EscalateNetwork, EscalateWrite, EscalateFull, v)
}

// Check decides what c needs: a *RefusedError for a hardline pattern (nothing is
// asked), an *EscalateError for an unknown escalation, else the plan. The escalation
// changes the policy only where the chat's policy does not allow it already.
func Check(c Command) (Plan, error) {
	matches := danger.CheckWith(c.Text, c.Danger)
	for _, m := range matches {
		if m.Hardline {
			return Plan{Run: c.Policy}, &RefusedError{Match: m}
		}
	}
	run := c.Policy
	var asks []Ask
	switch strings.TrimSpace(c.Escalate) {
	case "":
	case EscalateNetwork:
		if run.Confined() && !run.Network {
			run.Network = true
			asks = append(asks, Ask{Key: protocol.PatternSandboxNetwork, Description: "needs network access, which this chat's sandbox does not allow"})
		}
	case EscalateWrite:
		if run.Mode == sandbox.ModeReadOnly {
			run.Mode = sandbox.ModeWorkspaceWrite
			asks = append(asks, Ask{Key: protocol.PatternSandboxWrite, Description: writeDescription})
		}
	case EscalateFull:
		if run.Confined() {
			run.Mode = sandbox.ModeFullAccess
			asks = append(asks, Ask{Key: protocol.PatternSandboxFull, OnceOnly: true,
				Description: "runs outside the sandbox: it can read and change any of your files (secret stores included) and use the network"})
		}
	default:
		return Plan{Run: c.Policy}, &EscalateError{Value: c.Escalate}
	}
	if run.Confined() && !c.Sandbox.Available {
		run.Mode = sandbox.ModeFullAccess
		asks = append(asks, Ask{Key: protocol.PatternUnsandboxed, OnceOnly: true,
			Description: "would run without a sandbox, because " + c.Sandbox.Reason + "; it could read and change any of your files"})
	}
	how := run.String()
	if !run.Confined() {
		how = "outside the sandbox"
	}
	all := make([]Ask, 0, len(matches)+len(asks))
	for _, m := range matches {
		all = append(all, Ask{Key: m.Key, Description: m.Description, SpanStart: m.Start, SpanEnd: m.End, Sandbox: how})
	}
	for _, a := range asks {
		a.Sandbox = how
		all = append(all, a)
	}
	return Plan{Run: run, Asks: all}, nil
}

const writeDescription = "writes to the workspace, which this chat's sandbox keeps read-only"

// Write is the ask of a file tool writing path in a chat whose policy is read-only,
// and the command text its card shows ("<verb> <path>"); ok is false when policy
// allows writing the workspace (nothing to ask).
func Write(policy sandbox.Policy, verb, path string) (command string, a Ask, ok bool) {
	if policy.Mode != sandbox.ModeReadOnly {
		return "", Ask{}, false
	}
	command = verb + " " + path
	return command, Ask{Key: protocol.PatternSandboxWrite, Sandbox: "workspace-write, no network", Description: writeDescription,
		SpanStart: len(verb) + 1, SpanEnd: len(verb) + 1 + len(path)}, true
}

// Who allowed an approval without asking (ApprovalAutoData.DecidedBy).
const (
	ByYolo      = "yolo"
	ByGrant     = "session grant"
	ByAllowlist = "always-list"
)

// AllowedBy applies the grant rule to an ask: YOLO allows everything; a session grant
// or the allowlist allows an ask that is not once-only. It returns who allowed it
// (ByYolo, ByGrant, ByAllowlist), or "" when the user must be asked.
func AllowedBy(onceOnly, yolo, granted, listed bool) string {
	switch {
	case yolo:
		return ByYolo
	case onceOnly:
		return ""
	case granted:
		return ByGrant
	case listed:
		return ByAllowlist
	}
	return ""
}

// Outcome is how an approval ended: Reason is a protocol.Resolved* value, or Auto
// when it was allowed without asking; Choice the user's choice when answered.
type Outcome struct {
	Reason string
	Choice string
}

// Auto is the Outcome reason of an ask a grant, the allowlist or YOLO allowed.
const Auto = "auto"

// Allows reports whether o lets the command go on. It fails closed: only Auto, YOLO
// and an answer with an allowing choice (once, session, always, always_server) allow.
func (o Outcome) Allows() bool {
	switch o.Reason {
	case Auto, protocol.ResolvedYolo:
		return true
	case protocol.ResolvedAnswered:
		switch o.Choice {
		case protocol.ChoiceOnce, protocol.ChoiceSession, protocol.ChoiceAlways, protocol.ChoiceAlwaysServer:
			return true
		}
	}
	return false
}

// Denial is the message for the agent when o does not allow a, or "" when it does.
// timeout is the approval timeout the message names.
func Denial(o Outcome, a Ask, timeout time.Duration) string {
	if o.Allows() {
		return ""
	}
	switch o.Reason {
	case protocol.ResolvedAnswered:
		return fmt.Sprintf("denied: the user did not allow this (it %s); it was not run. Do not run it another way; ask the user or choose a different approach.", a.Description)
	case protocol.ResolvedTimeout:
		return fmt.Sprintf("denied: nobody answered the approval request within %d seconds (it %s); it was not run.", int(timeout/time.Second), a.Description)
	}
	return "interrupted: the turn was stopped while this waited for approval; it was not run."
}

// Asker is a runtime's side of an approval: it allows a without asking when a grant
// rule does (AllowedBy), else parks a waiter, sends the approval frame (Frame), waits
// for the answer, the timeout or the end of the turn, and sends the resolved frame.
type Asker interface {
	Ask(ctx context.Context, command string, a Ask) Outcome
}

// Approve asks the asks in order and stops at the first that is not allowed. It
// returns "" when every ask is allowed, else the message for the agent.
func Approve(ctx context.Context, asker Asker, command string, asks []Ask, timeout time.Duration) string {
	for _, a := range asks {
		if why := Denial(asker.Ask(ctx, command, a), a, timeout); why != "" {
			return why
		}
	}
	return ""
}

// ErrNoAsker is what Run reports for a nil Asker: nothing can be approved, so nothing
// runs.
var ErrNoAsker = errors.New("gate: no one to ask for approval; the command was not run")

// Run is Check then Approve: the policy the command runs under and "" when it may run,
// else the message for the agent (a refusal, an unknown escalation, a denial). It also
// returns Check's error, so that a caller can tell a hardline refusal apart.
func Run(ctx context.Context, asker Asker, c Command, timeout time.Duration) (sandbox.Policy, string, error) {
	plan, err := Check(c)
	if err != nil {
		return plan.Run, err.Error(), err
	}
	if asker == nil {
		if len(plan.Asks) > 0 {
			return plan.Run, ErrNoAsker.Error(), ErrNoAsker
		}
		return plan.Run, "", nil
	}
	return plan.Run, Approve(ctx, asker, c.Text, plan.Asks, timeout), nil
}

// Redactor replaces secret values in text; *tools.Redactor is one. nil redacts nothing.
type Redactor interface {
	String(s string) string
}

// Frame is the approval frame of a for command: the command redacted and cut to
// MaxApprovalCommand bytes, the span moved onto the redacted text (dropped when it
// falls outside), once-or-deny choices for a once-only ask, and the justification
// (redacted, at most 1000 bytes) for a sandbox escalation.
func Frame(id, command string, a Ask, red Redactor, timeout time.Duration, justification string) protocol.ApprovalData {
	clean := func(s string) string { return s }
	if red != nil {
		clean = red.String
	}
	shown, _ := tools.Cap(clean(command), MaxApprovalCommand)
	frame := protocol.ApprovalData{ApprovalID: id, Command: shown, Description: a.Description, Pattern: a.Key,
		TimeoutS: int(timeout / time.Second), Sandbox: a.Sandbox}
	if a.OnceOnly {
		frame.Choices = []string{protocol.ChoiceOnce, protocol.ChoiceDeny}
	}
	if a.SpanEnd > a.SpanStart && a.SpanEnd <= len(command) {
		// Offsets into the command as shown: redaction may change lengths before them.
		frame.SpanStart, frame.SpanEnd = len(clean(command[:a.SpanStart])), len(clean(command[:a.SpanEnd]))
		if frame.SpanEnd > len(shown) {
			frame.SpanEnd = len(shown)
		}
		if frame.SpanStart >= frame.SpanEnd {
			frame.SpanStart, frame.SpanEnd = 0, 0
		}
	}
	if j := strings.TrimSpace(justification); j != "" && isEscalation(a.Key) {
		frame.Justification, _ = tools.Cap(clean(j), maxJustification)
	}
	return frame
}

func isEscalation(key string) bool {
	return key == protocol.PatternSandboxNetwork || key == protocol.PatternSandboxWrite || key == protocol.PatternSandboxFull
}
