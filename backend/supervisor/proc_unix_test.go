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
// zombie in /proc/<pid>/stat (its files, stdin among them, are closed by then).
func processExited(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !processAlive(pid)
	}
	// pid (comm) state ...: the state follows the last ')'.
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// killProcess ends process pid at once (SIGKILL), as a crash would.
func killProcess(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }
