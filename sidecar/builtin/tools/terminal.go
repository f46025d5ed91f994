package tools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
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
	// Env are KEY=VALUE pairs added to (and overriding) the sidecar's environment.
	Env []string
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
}

// ErrInterrupted is what Run reports (in CommandResult.Error) when ctx ended.
const interruptedMessage = "interrupted: the turn was stopped and the command's processes were killed"

// Run runs a command with stdin closed (/dev/null), stdout and stderr merged into one
// capped output, in its own process group (Unix) or process tree (Windows). The whole
// group is killed when the timeout passes, when ctx ends (Stop), and when the command
// itself exits (so background jobs it started do not outlive the call). It never
// returns an error: failures are in the result.
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

	cmd := shellCommand(c.Command)
	cmd.Dir = c.Dir
	cmd.Env = mergeEnv(os.Environ(), c.Env)
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
	copied := make(chan struct{})
	go func() {
		io.Copy(out, pr) //nolint:errcheck // a read error ends the output
		close(copied)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	res := CommandResult{}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-timer.C:
		res.TimedOut = true
		res.Error = fmt.Sprintf("timed out after %s: the command and its processes were killed", timeout)
		killTree(cmd)
		waitErr = <-exited
	case <-ctx.Done():
		res.Error = interruptedMessage
		killTree(cmd)
		waitErr = <-exited
	}
	// Whatever the command left running in its group goes too: it would hold the output
	// pipe open and outlive the call.
	killTree(cmd)
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

// mergeEnv adds extra KEY=VALUE pairs to base, replacing variables of the same name.
func mergeEnv(base, extra []string) []string {
	if len(extra) == 0 {
		return base
	}
	names := map[string]bool{}
	for _, kv := range extra {
		names[envName(kv)] = true
	}
	out := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		if !names[envName(kv)] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

func envName(kv string) string {
	for i := 1; i < len(kv); i++ { // from 1: Windows has variables like "=C:"
		if kv[i] == '=' {
			return kv[:i]
		}
	}
	return kv
}
