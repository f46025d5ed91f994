//go:build !linux

package sandbox

import (
	"context"
	"os/exec"
	"runtime"
)

// Check reports that no confinement is available on this system yet: macOS's
// sandbox-exec profile (SeatbeltProfile, generated but not used yet) and a Windows
// restricted token are designed in docs/sandbox.md but not enabled, so every confined
// policy is refused and the caller asks the user before running a command unconfined.
func Check() Status {
	return Status{Reason: "commands cannot be confined on " + runtime.GOOS + " yet",
		Hint: "every command asks for your approval before it runs; see docs/sandbox.md for the plan"}
}

// Command returns a command that runs argv with env exactly in dir ("" means the
// workspace). Only ModeFullAccess runs here (in its own process group, or process tree
// on Windows); a confined policy returns *UnavailableError. Errors: *PolicyError.
func Command(ctx context.Context, p Policy, argv []string, env []string, dir string) (*exec.Cmd, error) {
	if len(argv) == 0 || argv[0] == "" {
		return nil, &PolicyError{Message: "no command was given"}
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Confined() {
		return nil, &UnavailableError{Status: Check()}
	}
	if dir == "" {
		dir = p.Workspace
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	newGroup(cmd)
	cmd.Cancel = func() error { return Kill(cmd) }
	return cmd, nil
}
