package tools

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Redacted replaces every occurrence of a known secret value.
const Redacted = "[REDACTED]"

// Redactor replaces known secret values in text. The zero value redacts nothing; a
// Redactor is immutable once built and safe for concurrent use.
type Redactor struct {
	secrets []string // longest first, so a secret containing another is replaced whole
}

// NewRedactor returns a Redactor for the given values; empty values are ignored.
func NewRedactor(values ...string) *Redactor {
	r := &Redactor{}
	seen := map[string]bool{}
	for _, v := range values {
		if v != "" && !seen[v] {
			seen[v] = true
			r.secrets = append(r.secrets, v)
		}
	}
	sort.Slice(r.secrets, func(i, j int) bool { return len(r.secrets[i]) > len(r.secrets[j]) })
	return r
}

// Empty reports whether r redacts nothing.
func (r *Redactor) Empty() bool { return r == nil || len(r.secrets) == 0 }

// maxLen is the length of the longest secret.
func (r *Redactor) maxLen() int {
	if r.Empty() {
		return 0
	}
	return len(r.secrets[0])
}

// String replaces every secret in s with [REDACTED].
func (r *Redactor) String(s string) string {
	if r.Empty() {
		return s
	}
	return r.window([]byte(s), 0, len(s))
}

// window renders b[from:to] with every secret occurrence that overlaps the window
// replaced by [REDACTED] whole, so a cut never shows part of a secret as long as b
// holds each overlapping occurrence completely.
func (r *Redactor) window(b []byte, from, to int) string {
	if r.Empty() {
		return string(b[from:to])
	}
	s := string(b)
	type span struct{ start, end int }
	var spans []span
	for _, sec := range r.secrets {
		for i := 0; ; {
			j := strings.Index(s[i:], sec)
			if j < 0 {
				break
			}
			spans = append(spans, span{i + j, i + j + len(sec)})
			i += j + 1
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	var sb strings.Builder
	pos := from
	for k := 0; k < len(spans); k++ {
		sp := spans[k]
		// Merge overlapping occurrences into one.
		for k+1 < len(spans) && spans[k+1].start < sp.end {
			sp.end = max(sp.end, spans[k+1].end)
			k++
		}
		if sp.end <= from || sp.start >= to {
			continue
		}
		if sp.start > pos {
			sb.WriteString(s[pos:sp.start])
		}
		sb.WriteString(Redacted)
		pos = max(pos, sp.end)
	}
	if pos < to {
		sb.WriteString(s[pos:to])
	}
	return sb.String()
}

// headTail keeps the first and the last bytes of a stream written to it, up to a limit
// in all, counting what it drops. It keeps a margin beyond each half, as long as the
// longest secret, so that redaction at the cut sees whole occurrences.
type headTail struct {
	mu     sync.Mutex
	limit  int
	margin int
	head   []byte
	tail   []byte // ring buffer of the bytes after head
	start  int    // index of the oldest byte in tail once full
	total  int64
}

func newHeadTail(limit, margin int) *headTail {
	if limit < 2 {
		limit = 2
	}
	return &headTail{limit: limit, margin: margin}
}

func (h *headTail) headCap() int { return h.limit/2 + h.margin }
func (h *headTail) tailCap() int { return h.limit - h.limit/2 + h.margin }

func (h *headTail) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	h.total += int64(n)
	if room := h.headCap() - len(h.head); room > 0 {
		k := min(room, len(p))
		h.head = append(h.head, p[:k]...)
		p = p[k:]
	}
	c := h.tailCap()
	for len(p) > 0 {
		if len(h.tail) < c {
			k := min(c-len(h.tail), len(p))
			h.tail = append(h.tail, p[:k]...)
			p = p[k:]
			continue
		}
		if len(p) >= c {
			copy(h.tail, p[len(p)-c:])
			h.start = 0
			break
		}
		k := copy(h.tail[h.start:], p)
		if k < len(p) {
			copy(h.tail, p[k:])
		}
		h.start = (h.start + len(p)) % c
		break
	}
	return n, nil
}

func (h *headTail) tailBytes() []byte {
	if len(h.tail) < h.tailCap() {
		return h.tail
	}
	out := make([]byte, 0, len(h.tail))
	out = append(out, h.tail[h.start:]...)
	return append(out, h.tail[:h.start]...)
}

// String returns what was written: whole when it fits the limit, else the first and
// the last limit/2 bytes around a line saying how many bytes were left out; secrets
// redacted, invalid UTF-8 replaced. It reports whether bytes were left out.
func (h *headTail) String(r *Redactor) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tail := h.tailBytes()
	if h.total <= int64(h.limit) {
		all := append(append([]byte{}, h.head...), tail...)
		return valid(r.window(all, 0, len(all))), false
	}
	half, keepTail := h.limit/2, h.limit-h.limit/2
	omitted := h.total - int64(half) - int64(keepTail)
	var headText, tailText string
	if h.total <= int64(len(h.head)+len(tail)) {
		// Nothing was dropped yet: cut one buffer, so an occurrence in the gap is seen whole.
		all := append(append([]byte{}, h.head...), tail...)
		headText = r.window(all, 0, half)
		tailText = r.window(all, len(all)-keepTail, len(all))
	} else {
		headText = r.window(h.head, 0, half)
		tailText = r.window(tail, len(tail)-keepTail, len(tail))
	}
	return valid(headText) + fmt.Sprintf("\n[... %d bytes of output omitted ...]\n", omitted) + valid(tailText), true
}

// valid replaces invalid UTF-8 (a cut inside a character, binary output) with U+FFFD.
func valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Cap cuts s to at most n bytes on a character boundary, adding a note of how much was
// cut; it reports whether it cut.
func Cap(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[... %d more bytes ...]", len(s)-cut), true
}
