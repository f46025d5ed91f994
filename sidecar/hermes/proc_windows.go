//go:build windows

package hermes

import "os/exec"

// setProcessGroup: Windows has no process groups of this kind; the gateway exits when
// its stdin reaches EOF.
func setProcessGroup(cmd *exec.Cmd) {}

// killGroup kills the gateway process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// termGroup: no SIGTERM on Windows; the kill that follows ends the gateway.
func termGroup(cmd *exec.Cmd) {}

// killLeftovers finds nothing here: these systems have no /proc to read environments
// from (see the Linux one), so a gateway's processes outside its group stay.
func killLeftovers(dir string) int { return 0 }
