//go:build unix && !linux

package acp

import (
	"syscall"
	"time"
)

// becomeSubreaper has no equivalent here: the group kill is what ends the agent.
func becomeSubreaper() {}

// agentProcAttr puts the agent in a process group of its own.
func agentProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// reapOrphans reaps the guard's exited children for at most d.
func reapOrphans(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return
		}
	}
}
