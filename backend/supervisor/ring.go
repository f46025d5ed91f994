package supervisor

import (
	"bytes"
	"sync"
)

// LineRing is an io.Writer that keeps the last N complete lines written to it (the
// sidecar's stderr, for the Diagnostics view). A line longer than 4 KiB is cut.
type LineRing struct {
	mu      sync.Mutex
	lines   []string
	next    int
	full    bool
	partial []byte
}

const maxRingLine = 4 << 10

// NewLineRing keeps up to n lines.
func NewLineRing(n int) *LineRing { return &LineRing{lines: make([]string, n)} }

// Write records p; it never fails.
func (r *LineRing) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			r.partial = append(r.partial, p...)
			if len(r.partial) > maxRingLine {
				r.partial = r.partial[:maxRingLine]
			}
			break
		}
		line := append(r.partial, p[:i]...)
		if len(line) > maxRingLine {
			line = line[:maxRingLine]
		}
		r.lines[r.next] = string(line)
		r.next = (r.next + 1) % len(r.lines)
		if r.next == 0 {
			r.full = true
		}
		r.partial = r.partial[:0]
		p = p[i+1:]
	}
	return n, nil
}

// Lines returns the kept lines, oldest first.
func (r *LineRing) Lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.lines[:r.next]...)
	}
	return append(append([]string(nil), r.lines[r.next:]...), r.lines[:r.next]...)
}

// lineWatch is an io.Writer that calls fn with each complete line written to it (a line
// longer than 4 KiB is cut); fn runs on the writer's goroutine, outside any lock of
// lineWatch's.
type lineWatch struct {
	mu      sync.Mutex
	partial []byte
	fn      func(line string)
}

// Write splits p into lines for fn; it never fails.
func (w *lineWatch) Write(p []byte) (int, error) {
	var lines []string
	w.mu.Lock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.partial) < maxRingLine {
				w.partial = append(w.partial, p[:min(len(p), maxRingLine-len(w.partial))]...)
			}
			break
		}
		line := append(w.partial, p[:i]...)
		lines = append(lines, string(line[:min(len(line), maxRingLine)]))
		w.partial = w.partial[:0]
		p = p[i+1:]
	}
	w.mu.Unlock()
	for _, l := range lines {
		w.fn(l)
	}
	return n, nil
}
