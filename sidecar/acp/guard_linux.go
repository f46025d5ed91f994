package acp

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the guard the parent of every orphan among its descendants
// (PR_SET_CHILD_SUBREAPER), so an agent's child that left its process group is still
// found and killed.
func becomeSubreaper() {
	unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) //nolint:errcheck // best effort: the group kill still works
}

// agentProcAttr puts the agent in a process group of its own and has the kernel kill
// it if the guard dies.
func agentProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// reapOrphans kills and reaps the guard's remaining children (orphans reparented to
// it), for at most d.
func reapOrphans(d time.Duration) {
	deadline := time.Now().Add(d)
	self := os.Getpid()
	for {
		kids := children(self)
		for _, pid := range kids {
			syscall.Kill(pid, syscall.SIGKILL) //nolint:errcheck // ESRCH: gone
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		if len(kids) == 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// children lists the processes whose parent is pid, from /proc.
func children(pid int) []int {
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == pid {
			if p, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}
