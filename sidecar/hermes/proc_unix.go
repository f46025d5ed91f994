//go:build unix && !linux

package hermes

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the gateway in its own process group; these systems have no
// parent-death signal, so the gateway relies on its stdin reaching EOF when the
// sidecar dies (tui_gateway/entry.py exits then).
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup SIGKILLs the gateway's whole process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
}

// termGroup sends SIGTERM to the gateway's process group.
func termGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
}

// killLeftovers finds nothing here: these systems have no /proc to read environments
// from (see the Linux one), so a gateway's processes outside its group stay.
func killLeftovers(dir string) int { return 0 }
