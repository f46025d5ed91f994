//go:build windows

package tools

import (
	"os/exec"
	"syscall"
)

// shellArgv runs command through cmd.exe (its command line is set by shellAdjust).
func shellArgv(command string) []string { return []string{"cmd.exe"} }

// shellAdjust passes the command line to cmd.exe verbatim: cmd.exe does its own quoting.
func shellAdjust(cmd *exec.Cmd, command string) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CmdLine = `cmd.exe /d /s /c "` + command + `"`
}
