package supervisor

import (
	"os/exec"
	"syscall"
)

// setParentDeathSignal asks Linux to SIGKILL the sidecar when the app dies, so a
// kill -9 of the app leaves no orphan (prctl PR_SET_PDEATHSIG, see prctl(2)). The
// sidecar also exits on stdin EOF, which covers the other platforms.
func setParentDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
