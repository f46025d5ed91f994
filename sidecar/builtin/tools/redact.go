package tools

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"talaria/sidecar/protocol/redact"
)

// Redacted replaces every occurrence of a known secret.
const Redacted = redact.Redacted

// Redactor replaces known secrets in text, in their encoded forms too (package
// redact: base64, hex, URL-encoding ...), by value and by fingerprint. The zero value
// and nil redact nothing; a Redactor is immutable and safe for concurrent use.
type Redactor struct {
	set *redact.Set
}

// NewRedactor returns a Redactor for the given values; values shorter than
// redact.MinLen are ignored.
func NewRedactor(values ...string) *Redactor {
	set, _ := redact.New(nil).WithValues(values...)
	return &Redactor{set: set}
}

// RedactorOf returns a Redactor over a redaction set.
func RedactorOf(set *redact.Set) *Redactor { return &Redactor{set: set} }

// Empty reports whether r redacts nothing.
func (r *Redactor) Empty() bool { return r == nil || r.set.Empty() }

// maxLen is the length of the longest form r finds.
func (r *Redactor) maxLen() int {
	if r.Empty() {
		return 0
	}
	return r.set.MaxLen()
}

// String replaces every secret in s with [REDACTED].
func (r *Redactor) String(s string) string {
	if r.Empty() {
		return s
	}
	return r.set.String(s)
}

// window renders b[from:to] with every secret occurrence that overlaps the window
// replaced by [REDACTED] whole, so a cut never shows part of a secret as long as b
// holds each overlapping occurrence completely.
func (r *Redactor) window(b []byte, from, to int) string {
	if r.Empty() {
		return string(b[from:to])
	}
	return r.set.Window(b, from, to)
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
