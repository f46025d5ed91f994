//go:build !windows

package supervisor

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// processAlive reports whether process pid exists (signal 0).
func processAlive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// processExited reports whether process pid has ended, reaped or not: gone, or a
// zombie whose every thread has exited. The leader thread shows Z in /proc/<pid>/stat
// while the process's other threads are still being killed, and those still hold its
// files (stdin among them) open: a write to its stdin could still land then. So a
// zombie counts only once /proc/<pid>/task lists the leader alone.
func processExited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !processAlive(pid)
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) || b[i+2] != 'Z' {
		return false
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	return err != nil || len(tasks) <= 1
}

// killProcess ends process pid at once (SIGKILL), as a crash would.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
