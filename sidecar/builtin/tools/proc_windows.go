//go:build windows

package tools

import (
	"os/exec"
	"strconv"
	"syscall"
)

// shellCommand runs command through cmd.exe in a new process group.
func shellCommand(command string) *exec.Cmd {
	cmd := exec.Command("cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CmdLine:       `cmd.exe /d /s /c "` + command + `"`,
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP,
	}
	return cmd
}

// killTree kills the command and every process it started (taskkill /T).
func killTree(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	if kill.Run() != nil {
		cmd.Process.Kill() //nolint:errcheck // already gone
	}
}
