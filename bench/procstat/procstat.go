// Package procstat reads a process's CPU time and resident memory from Linux's /proc,
// and finds the WebKitGTK web process that renders a Wails window (a child of the app
// process). The window benchmarks (app/drivers/bench.go, bench/webkit) use it; it is Linux
// only: elsewhere every function returns ErrUnsupported.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// ErrUnsupported is returned off Linux.
var ErrUnsupported = errors.New("procstat: /proc is read on Linux only")

// clockTicks is the kernel's USER_HZ (sysconf(_SC_CLK_TCK)); 100 on every Linux
// architecture Go supports.
const clockTicks = 100

// Sample is one reading of a process.
type Sample struct {
	PID int
	// CPU is user + system time since the process started.
	CPU time.Duration
	// RSS is the resident set size in bytes (VmRSS).
	RSS int64
	At  time.Time
}

// Read samples process pid. Errors: ErrUnsupported, or the process is gone.
func Read(pid int) (Sample, error) {
	if runtime.GOOS != "linux" {
		return Sample{}, ErrUnsupported
	}
	at := time.Now()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Sample{}, err
	}
	// The command name (field 2) is in parentheses and may hold spaces: split after it.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Sample{}, fmt.Errorf("procstat: odd /proc/%d/stat", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return Sample{}, fmt.Errorf("procstat: short /proc/%d/stat", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return Sample{}, fmt.Errorf("procstat: odd times in /proc/%d/stat", pid)
	}
	rss, err := rssOf(pid)
	if err != nil {
		return Sample{}, err
	}
	return Sample{PID: pid, CPU: time.Duration(ut+st) * time.Second / clockTicks, RSS: rss, At: at}, nil
}

func rssOf(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("procstat: odd VmRSS %q", v)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("procstat: no VmRSS for %d", pid)
}

// Children returns the pids whose parent is pid.
func Children(pid int) ([]int, error) {
	if runtime.GOOS != "linux" {
		return nil, ErrUnsupported
	}
	dirs, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		return nil, err
	}
	var out []int
	for _, d := range dirs {
		b, err := os.ReadFile(d)
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			if p, err := strconv.Atoi(filepath.Base(filepath.Dir(d))); err == nil {
				out = append(out, p)
			}
		}
	}
	return out, nil
}

// Name is the process's command name (/proc/pid/comm, at most 15 bytes).
func Name(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
	return strings.TrimSpace(string(b))
}

// WebProcess finds the WebKitWebProcess among the descendants of pid (the app),
// waiting up to timeout for it to appear.
func WebProcess(pid int, timeout time.Duration) (int, error) {
	deadline := time.Now().Add(timeout)
	for {
		queue := []int{pid}
		for len(queue) > 0 {
			p := queue[0]
			queue = queue[1:]
			kids, err := Children(p)
			if err != nil {
				return 0, err
			}
			for _, k := range kids {
				if strings.HasPrefix(Name(k), "WebKitWebProces") {
					return k, nil
				}
				queue = append(queue, k)
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("procstat: no WebKitWebProcess under pid %d after %s", pid, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Threads returns the time each of process pid's threads has spent on a CPU, by thread
// id, from /proc/<pid>/task/<tid>/schedstat (nanoseconds, where /proc/<pid>/stat counts
// in 10 ms ticks: an idle minute's few ticks are too coarse to compare). Threads that
// end between two readings are not in the second (see RunBetween). Errors:
// ErrUnsupported, or the process is gone.
func Threads(pid int) (map[int]time.Duration, error) {
	if runtime.GOOS != "linux" {
		return nil, ErrUnsupported
	}
	dir := fmt.Sprintf("/proc/%d/task", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[int]time.Duration, len(ents))
	for _, e := range ents {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "schedstat"))
		if err != nil {
			continue // the thread ended meanwhile
		}
		f := strings.Fields(string(b))
		if len(f) == 0 {
			continue
		}
		ns, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		out[tid] = time.Duration(ns)
	}
	return out, nil
}

// RunBetween is the CPU time the threads of two Threads readings spent between them:
// each thread's growth, and the whole time of a thread new in after. A thread that
// ended between the readings is not counted (its time after before is lost), so on a
// process whose threads come and go it reads low; an idle app's threads stay.
func RunBetween(before, after map[int]time.Duration) time.Duration {
	var d time.Duration
	for tid, t := range after {
		if t0, ok := before[tid]; ok {
			if t > t0 {
				d += t - t0
			}
		} else {
			d += t
		}
	}
	return d
}
