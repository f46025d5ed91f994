//go:build !windows

package backendtest

import "syscall"

// ProcessAlive reports whether process pid exists (signal 0).
func ProcessAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// KillProcess ends process pid at once (SIGKILL), as a crash would.
func KillProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
