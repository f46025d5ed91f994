package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"talaria/sidecar/sandbox"
)

// Terminal limits.
const (
	DefaultCommandTimeout = 120 * time.Second
	MaxCommandTimeout     = 600 * time.Second
	DefaultOutputLimit    = 64 << 10
)

// Command is one shell command to run.
type Command struct {
	// Command is the shell text, run with bash -c when bash is installed, else sh -c
	// (cmd /C on Windows).
	Command string
	// Dir is the working directory (the workspace).
	Dir string
	// Env are KEY=VALUE pairs added to the command's minimal environment (sandbox.Env:
	// PATH, HOME, LANG; nothing else of the sidecar's), e.g. the session's secrets.
	Env []string
	// Policy confines the command (its Workspace defaults to Dir). A confined policy
	// where no sandbox is available is not run: the result's error says so, and the
	// caller decides (asks the user, then runs it with sandbox.ModeFullAccess).
	Policy sandbox.Policy
	// Timeout bounds the run (DefaultCommandTimeout when 0, at most MaxCommandTimeout).
	Timeout time.Duration
	// OutputLimit bounds the output kept, in bytes (DefaultOutputLimit when 0): the first
	// and last halves are kept around a line saying how much was left out.
	OutputLimit int
	// Redact replaces secret values in the output (nil: none).
	Redact *Redactor
}

// CommandResult is the terminal tool's result. ExitCode is -1 when the command did
// not exit by itself (it could not start, timed out, was interrupted or killed by a
// signal); Error says why, and is "" when the command ran to its end (whatever its exit
// code).
type CommandResult struct {
	Output   string `json:"output"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error"`
	TimedOut bool   `json:"timed_out,omitempty"`
	// Truncated is set when output was left out to stay within the limit.
	Truncated bool `json:"truncated,omitempty"`
	// Sandbox says how the command was confined, e.g. "workspace-write, no network"
	// ("" when it did not start).
	Sandbox string `json:"sandbox,omitempty"`
	// SandboxNote tells the model how to ask for more when a confined command failed.
	SandboxNote string `json:"sandbox_note,omitempty"`
}

// ErrInterrupted is what Run reports (in CommandResult.Error) when ctx ended.
const interruptedMessage = "interrupted: the turn was stopped and the command's processes were killed"

// Run runs a command confined under c.Policy (package sandbox: on Linux a bubblewrap
// sandbox with its own PID namespace) with stdin closed (/dev/null), stdout and stderr
// merged into one capped output, in its own process group (Unix) or process tree
// (Windows). Everything it started is killed when the timeout passes, when ctx ends
// (Stop), when the command itself exits (so background jobs do not outlive the call),
// and when the sidecar dies. It never returns an error: failures are in the result.
func Run(ctx context.Context, c Command) CommandResult {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	timeout = min(timeout, MaxCommandTimeout)
	limit := c.OutputLimit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	out := newHeadTail(limit, c.Redact.maxLen())

	policy := c.Policy
	if policy.Workspace == "" {
		policy.Workspace = c.Dir
	}
	cmd, err := sandbox.Command(context.WithoutCancel(ctx), policy, shellArgv(c.Command), sandbox.Env(c.Env...), c.Dir)
	if err != nil {
		return CommandResult{ExitCode: -1, Error: "not run: " + err.Error()}
	}
	shellAdjust(cmd, c.Command)
	cmd.Stdin = nil // os/exec connects the null device
	pr, pw, err := os.Pipe()
	if err != nil {
		return CommandResult{ExitCode: -1, Error: "could not create the output pipe: " + err.Error()}
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return CommandResult{ExitCode: -1, Error: "could not start the shell: " + err.Error()}
	}
	pw.Close()
	how := policy.String()
	if !sandbox.Check().Available {
		how = "unconfined (no sandbox is available)"
	}
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr) //nolint:errcheck // a read error ends the output
		close(copied)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	res := CommandResult{Sandbox: how}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timer.C:
		res.TimedOut = true
		res.Error = fmt.Sprintf("timed out after %s: the command and its processes were killed", timeout)
		sandbox.Kill(cmd) //nolint:errcheck // ESRCH: already gone
		waitErr = <-exited
	case <-ctx.Done():
		res.Error = interruptedMessage
		sandbox.Kill(cmd) //nolint:errcheck // ESRCH: already gone
		waitErr = <-exited
	}
	// Whatever the command left running in its group (its PID namespace) goes too: it
	// would hold the output pipe open and outlive the call.
	sandbox.Kill(cmd) //nolint:errcheck // ESRCH: already gone
	// The pipe closes once every holder is gone; a process that left the group (setsid)
	// may keep it open, so the wait for the rest of the output is bounded.
	pr.SetReadDeadline(time.Now().Add(2 * time.Second)) //nolint:errcheck // pipes support deadlines on Unix; elsewhere Close unblocks
	select {
	case <-copied:
	case <-time.After(2500 * time.Millisecond):
	}
	pr.Close()
	select { // Close unblocks the read where deadlines are not supported
	case <-copied:
	case <-time.After(500 * time.Millisecond):
	}

	res.ExitCode = -1
	if cmd.ProcessState != nil {
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if res.Error == "" && waitErr != nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			res.Error = waitErr.Error()
		} else if res.ExitCode < 0 {
			res.Error = "the command was killed by a signal: " + ee.Error()
		}
	}
	if res.TimedOut || res.Error == interruptedMessage {
		res.ExitCode = -1
	}
	res.Output, res.Truncated = out.String(c.Redact)
	return res
}
