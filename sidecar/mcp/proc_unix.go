//go:build !windows

package mcp

import (
	"os/exec"
	"syscall"
)

const isWindows = false

// setProcAttr puts a command in its own process group (so killGroup reaches what it
// starts) and, on Linux, asks for SIGKILL when the sidecar dies.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
}

// killGroup sends SIGKILL to the command's process group (and the process itself).
func killGroup(cmd *exec.Cmd) {
	if cmd == nil || cmd.Process == nil {
		return
	}
	pid := cmd.Process.Pid
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	_ = cmd.Process.Kill()
}
