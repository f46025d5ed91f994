// Package crashlog keeps the app process's crash reports, as sidecar.log keeps the
// agent process's output: a fatal Go panic or runtime error in the window process is
// written by the Go runtime (runtime/debug.SetCrashOutput) to a file in the crash
// folder as well as to stderr, and the next start files it as crash-<UTC time>.log for
// the Diagnostics view (issue 26, item 9a).
//
// The folder holds at most one current.log (the running process's, empty unless it is
// crashing) and the last MaxKept crash-*.log files. A crash report holds what Go prints
// on a crash: the panic value and the goroutines' stacks (no memory contents).
package crashlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strings"
	"time"
)

// MaxKept is how many crash reports the folder keeps (the oldest go first).
const MaxKept = 10

// maxRead is how much of a report Latest reads (the panic and the first stacks).
const maxRead = 64 << 10

const (
	currentName = "current.log"
	prefix      = "crash-"
	suffix      = ".log"
	timeLayout  = "20060102T150405.000Z"
)

// Crash is one crash report of the app process.
type Crash struct {
	Path    string `json:"path"`    // the report's file; "" when there is none
	At      int64  `json:"at"`      // when it was written (the file's time), epoch ms
	Summary string `json:"summary"` // its first line, e.g. "panic: …" or "fatal error: …"
	Text    string `json:"text"`    // its start, up to 64 KiB
}

// Recorder is the crash output of the running process (Install).
type Recorder struct {
	dir string
	f   *os.File
}

// Install makes dir the crash folder of this process: a report the last run left in
// current.log is filed as crash-<time>.log (and the oldest beyond MaxKept removed),
// then the Go runtime writes this process's fatal panics and errors to a fresh
// current.log as well as to stderr. Call it once, early, in the app process only (not
// in the sidecar, whose stderr goes to sidecar.log). Errors: the folder or the file
// cannot be made; the process then runs without a crash log.
func Install(dir string) (*Recorder, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("cannot create the crash folder %s: %w", dir, err)
	}
	fileLast(dir)
	f, err := os.OpenFile(filepath.Join(dir, currentName), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot open the crash log: %w", err)
	}
	if err := debug.SetCrashOutput(f, debug.CrashOptions{}); err != nil {
		f.Close()
		return nil, fmt.Errorf("cannot set the crash output: %w", err)
	}
	return &Recorder{dir: dir, f: f}, nil
}

// Close ends the crash output of a process that shuts down cleanly: current.log, empty,
// is removed.
func (r *Recorder) Close() error {
	if r == nil {
		return nil
	}
	_ = debug.SetCrashOutput(nil, debug.CrashOptions{})
	err := r.f.Close()
	if rerr := os.Remove(filepath.Join(r.dir, currentName)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// Record files a crash report the Go runtime does not write itself (the window's web
// process ending, which the process survives): text as crash-<UTC now>.log in dir, the
// oldest beyond MaxKept removed. It returns the report's path. Errors: the folder or
// the file cannot be written.
func Record(dir, text string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("cannot create the crash folder %s: %w", dir, err)
	}
	now := time.Now().UTC()
	path := filepath.Join(dir, prefix+now.Format(timeLayout)+suffix)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, os.ErrExist) {
		path = filepath.Join(dir, prefix+now.Format(timeLayout)+fmt.Sprintf("-%d", now.UnixNano())+suffix)
		f, err = os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	}
	if err != nil {
		return "", fmt.Errorf("cannot write a crash report: %w", err)
	}
	if _, err := f.WriteString(text); err != nil {
		f.Close()
		return "", fmt.Errorf("cannot write a crash report: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("cannot write a crash report: %w", err)
	}
	prune(dir) // current.log is this process's: left alone
	return path, nil
}

// fileLast files a non-empty current.log left by a run that crashed (or removes an
// empty one), then keeps the newest MaxKept reports.
func fileLast(dir string) {
	cur := filepath.Join(dir, currentName)
	if fi, err := os.Stat(cur); err == nil {
		if fi.Size() == 0 {
			os.Remove(cur)
		} else {
			name := prefix + fi.ModTime().UTC().Format(timeLayout) + suffix
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				name = prefix + fi.ModTime().UTC().Format(timeLayout) + fmt.Sprintf("-%d", time.Now().UnixNano()) + suffix
			}
			os.Rename(cur, filepath.Join(dir, name))
		}
	}
	prune(dir)
}

// prune keeps the newest MaxKept filed reports.
func prune(dir string) {
	reports := list(dir)
	for len(reports) > MaxKept {
		os.Remove(reports[0])
		reports = reports[1:]
	}
}

// list returns the filed reports, oldest first (their names sort by time).
func list(dir string) []string {
	m, _ := filepath.Glob(filepath.Join(dir, prefix+"*"+suffix))
	sort.Strings(m)
	return m
}

// Latest returns the newest crash report in dir: a non-empty current.log (a run that
// crashed, not yet filed by the next Install) before the filed ones. ok is false when
// there is none.
func Latest(dir string) (c Crash, ok bool) {
	cands := list(dir)
	if fi, err := os.Stat(filepath.Join(dir, currentName)); err == nil && fi.Size() > 0 {
		cands = append(cands, filepath.Join(dir, currentName))
	}
	for i := len(cands) - 1; i >= 0; i-- {
		if c, ok := read(cands[i]); ok {
			return c, true
		}
	}
	return Crash{}, false
}

func read(path string) (Crash, bool) {
	f, err := os.Open(path)
	if err != nil {
		return Crash{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return Crash{}, false
	}
	b, _ := io.ReadAll(io.LimitReader(f, maxRead))
	text := strings.ToValidUTF8(string(b), "�")
	if strings.TrimSpace(text) == "" {
		return Crash{}, false
	}
	c := Crash{Path: path, At: fi.ModTime().UnixMilli(), Text: text}
	for _, line := range strings.Split(text, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			c.Summary = line
			break
		}
	}
	if r := []rune(c.Summary); len(r) > 500 {
		c.Summary = string(r[:500]) + "…"
	}
	return c, true
}
