//go:build unix && !linux

package sandbox

import (
	"os/exec"
	"syscall"
)

// envKeys are the variables of this process Env keeps.
var envKeys = []string{"PATH", "HOME", "LANG"}

const defaultPath = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"

func runtimeDirs() []string { return nil }

func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// Kill sends SIGKILL to the command's process group. A command that was not started,
// or is gone, is no error.
func Kill(cmd *exec.Cmd) error {
	if cmd == nil || cmd.Process == nil {
		return nil
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}
