//go:build !windows

package supervisor

import "syscall"

// processAlive reports whether process pid exists (signal 0).
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// killProcess ends process pid at once (SIGKILL), as a crash would.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
