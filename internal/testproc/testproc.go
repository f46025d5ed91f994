//go:build linux

// Package testproc answers tests' questions about live processes from Linux's /proc.
// Imported by tests and their helpers only; it holds no product code.
package testproc

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ListenPort returns the TCP port process pid listens on: the local port of the
// listening socket (state 0A in /proc/net/tcp6 or tcp) whose inode is one of its open
// files (/proc/<pid>/fd).
func ListenPort(pid int) (int, error) {
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, err
	}
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	for _, table := range []string{"tcp6", "tcp"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, table))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] {
				continue
			}
			local := f[1]
			port, err := strconv.ParseInt(local[strings.LastIndexByte(local, ':')+1:], 16, 32)
			if err != nil {
				return 0, err
			}
			return int(port), nil
		}
	}
	return 0, fmt.Errorf("process %d listens on no TCP port", pid)
}

// ChildrenOf returns the pids of pid's live direct children (their parent in
// /proc/<child>/stat).
func ChildrenOf(pid int) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// After the command's closing parenthesis: state, then the parent's pid.
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && f[0] != "Z" {
			out = append(out, child)
		}
	}
	return out
}

// Process is one live process, as /proc shows it.
type Process struct{ PID int }

// Args returns p's command line (/proc/<pid>/cmdline split at NUL); nil once it ended.
func (p Process) Args() []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p.PID))
	if err != nil || len(b) == 0 {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
}

// HasArgs reports whether want appears in p's command line as consecutive arguments.
func (p Process) HasArgs(want ...string) bool {
	args := p.Args()
	for i := 0; i+len(want) <= len(args); i++ {
		if slicesEqual(args[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

// Exe returns the path of p's executable (/proc/<pid>/exe), or "".
func (p Process) Exe() string {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p.PID))
	return exe
}

// Comm returns p's command name (/proc/<pid>/comm), or "".
func (p Process) Comm() string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.PID))
	return strings.TrimSpace(string(b))
}

// Env returns the value of key in p's initial environment (/proc/<pid>/environ; only
// readable for the user's own processes).
func (p Process) Env(key string) (string, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", p.PID))
	if err != nil {
		return "", false
	}
	for _, kv := range strings.Split(string(b), "\x00") {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// Find returns the pids of the live processes match accepts.
func Find(match func(Process) bool) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if match(Process{PID: pid}) {
			out = append(out, pid)
		}
	}
	return out
}

func slicesEqual(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
