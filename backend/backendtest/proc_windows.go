package backendtest

import (
	"os"

	"golang.org/x/sys/windows"
)

// ProcessAlive reports whether process pid is still running.
func ProcessAlive(pid int) bool {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	var code uint32
	const stillActive = 259 // STILL_ACTIVE
	return windows.GetExitCodeProcess(h, &code) == nil && code == stillActive
}

// KillProcess ends process pid at once (TerminateProcess), as a crash would.
func KillProcess(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}
