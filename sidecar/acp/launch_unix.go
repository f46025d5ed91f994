//go:build unix

package acp

import (
	"os"
	"syscall"
)

// exitOf is a process's exit code, or -1 and the signal that killed it.
func exitOf(st *os.ProcessState) (int, string) {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -1, unixSignalName(ws.Signal())
	}
	return st.ExitCode(), ""
}

func unixSignalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGKILL:
		return "SIGKILL"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGSEGV:
		return "SIGSEGV"
	case syscall.SIGABRT:
		return "SIGABRT"
	case syscall.SIGPIPE:
		return "SIGPIPE"
	}
	return s.String()
}
