package hermes

import (
	"os/exec"
	"syscall"
)

// setProcessGroup starts the gateway in its own process group (so its tools' processes
// can be killed with it) and asks Linux to SIGKILL it when the sidecar dies (prctl
// PR_SET_PDEATHSIG, prctl(2)): no Hermes outlives a SIGKILLed sidecar.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
