//go:build windows

package sandbox

import (
	"os/exec"
	"strconv"
	"syscall"
)

// envKeys are the variables of this process Env keeps.
var envKeys = []string{"PATH", "HOME", "LANG", "SystemRoot", "SystemDrive", "windir", "COMSPEC", "PATHEXT", "USERPROFILE", "TEMP", "TMP"}

const defaultPath = `C:\Windows\system32;C:\Windows`

func runtimeDirs() []string { return nil }

func newGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}

// Kill ends the command and every process it started (taskkill /T /F). A command that
// was not started, or is gone, is no error.
func Kill(cmd *exec.Cmd) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	if kill.Run() != nil {
		_ = cmd.Process.Kill()
	}
	return nil
}
