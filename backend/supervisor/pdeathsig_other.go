//go:build !linux

package supervisor

import "os/exec"

// setParentDeathSignal is a no-op where the OS has no parent-death signal; the sidecar
// exits on stdin EOF instead.
func setParentDeathSignal(cmd *exec.Cmd) {}
