//go:build unix

package tools

import (
	"os/exec"
)

var shellPath = func() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}()

// shellArgv runs command through bash (or sh).
func shellArgv(command string) []string { return []string{shellPath, "-c", command} }

// shellAdjust has nothing to adjust on Unix.
func shellAdjust(cmd *exec.Cmd, command string) {}
