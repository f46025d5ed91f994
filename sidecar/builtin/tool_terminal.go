package builtin

import (
	"context"
	"errors"
	"strings"
	"time"

	"talaria/sidecar/builtin/danger"
	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
)

// terminalTool is the terminal tool: it runs a shell command in the workspace, confined by the chat's sandbox, after the approval gate.
type terminalTool struct{}

// Def is the terminal tool's definition.
func (terminalTool) Def() ToolDef {
	return ToolDef{
		Name: "terminal", Toolset: ToolsetTerminal,
		Description: "Run a shell command (bash, else sh) in the workspace folder and return its output (stdout and stderr merged, " +
			"long output cut in the middle), exit code and error. Commands run in a sandbox (the result's sandbox field says which): " +
			"by default they may write only the workspace and /tmp (a private one), have no network, and never see secret stores " +
			"such as ~/.ssh. If a command needs more, call it again with escalate (network, write, or full for outside the sandbox) " +
			"and a justification; the user is asked. Stdin is closed, so interactive programs must get their input from flags or " +
			"files. The command and everything it started are killed at the timeout, and when it exits: background jobs (&) do " +
			"not outlive the call. Dangerous commands (recursive deletes, sudo, force pushes ...) wait for the user's approval, " +
			"and some are always refused. Secrets the user gave through request_secret are set as environment variables.",
		Parameters: `{"type":"object","properties":{
"command":{"type":"string","description":"The shell command line to run."},
"timeout":{"type":"integer","description":"Seconds before the command is killed (default 120, at most 600).","minimum":1,"maximum":600},
"escalate":{"type":"string","enum":["network","write","full"],"description":"Only when the sandbox stops the command: network (network access), write (write the workspace in a read-only chat), full (run outside the sandbox). The user is asked."},
"justification":{"type":"string","description":"With escalate: one sentence telling the user why the command needs it."}
},"required":["command"],"additionalProperties":false}`,
	}
}

// KeyArg is the argument the terminal card shows in its title.
func (terminalTool) KeyArg(args map[string]any) string { return stringArg(args, "command") }

func (terminalTool) run(ctx context.Context, t *turn, raw []byte) toolResult {
	var a struct {
		Command       string  `json:"command"`
		Timeout       float64 `json:"timeout"`
		Escalate      string  `json:"escalate"`
		Justification string  `json:"justification"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return errResult("bad arguments for terminal: %v", err)
	}
	return t.terminal(ctx, a.Command, time.Duration(a.Timeout*float64(time.Second)), a.Escalate, a.Justification)
}

// terminal runs a shell command confined by the session's sandbox policy, after the
// shared approval gate (package gate) allowed it: the dangerous-command check and the
// approvals of whatever leaves the sandbox.
func (t *turn) terminal(ctx context.Context, command string, timeout time.Duration, escalate, justification string) toolResult {
	if strings.TrimSpace(command) == "" {
		return errResult("the command is empty")
	}
	ws, err := t.workspace()
	if err != nil {
		return toolResult{value: tools.CommandResult{ExitCode: -1, Error: err.Error()}, preview: err.Error()}
	}
	run, why, err := gate.Run(ctx, &asker{t: t, justification: justification}, gate.Command{Text: command, Policy: t.policy,
		Escalate: escalate, Sandbox: t.r.sandboxStatus(), Danger: danger.Options{Protected: t.policy.Hidden}}, t.approvalTimeout)
	var refused *gate.RefusedError
	var badEscalate *gate.EscalateError
	switch {
	case errors.As(err, &refused):
		t.log.Info("command refused", "pattern", refused.Match.Key)
		shown, _ := tools.Cap(t.r.redactor().String(command), gate.MaxApprovalCommand)
		t.send(protocol.EvApprovalAuto, protocol.ApprovalAutoData{TID: t.callID, Command: shown, Description: refused.Match.Description,
			Pattern: refused.Match.Key, Decision: protocol.AutoRefused, DecidedBy: "hardline"})
		return toolResult{value: tools.CommandResult{ExitCode: -1, Error: why}, preview: why}
	case errors.As(err, &badEscalate):
		return errResult("%s", why)
	case why != "":
		return toolResult{value: tools.CommandResult{ExitCode: -1, Error: why}, preview: why}
	}
	res := tools.Run(ctx, tools.Command{
		Command:     command,
		Dir:         ws.Dir(),
		Env:         t.r.secretEnv(t.p.SessionID),
		Policy:      run,
		Timeout:     timeout,
		OutputLimit: t.r.outputLimit,
		Redact:      t.r.redactor(),
	})
	preview := res.Output
	if res.Error != "" {
		preview = strings.TrimRight(preview, "\n") + "\n[" + res.Error + "]"
	}
	if run.Confined() && res.ExitCode != 0 {
		res.SandboxNote = sandboxNote(run)
	}
	return toolResult{value: res, preview: preview}
}

// sandboxNote tells the model how to ask for more when a confined command failed.
func sandboxNote(p sandbox.Policy) string {
	var needs []string
	if !p.Network {
		needs = append(needs, `network access (escalate "network")`)
	}
	if p.Mode == sandbox.ModeReadOnly {
		needs = append(needs, `writing the workspace (escalate "write")`)
	}
	needs = append(needs, `writing outside the workspace or reading hidden secret stores (escalate "full")`)
	return "This command ran in the sandbox (" + p.String() + "). If it failed because it needs " + strings.Join(needs, ", or ") +
		", call terminal again with that escalate and a justification: the user is asked."
}
