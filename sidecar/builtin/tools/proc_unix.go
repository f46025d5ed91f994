//go:build unix

package tools

import (
	"os/exec"
	"syscall"
)

var shellPath = func() string {
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "/bin/sh"
}()

// shellCommand runs command through bash (or sh) in a new process group.
func shellCommand(command string) *exec.Cmd {
	cmd := exec.Command(shellPath, "-c", command)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// killTree kills the command's process group (its pgid is its pid).
func killTree(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) //nolint:errcheck // ESRCH: the group is already gone
}
