// Package redact finds known secrets in text, in the forms they travel in (as they
// are, JSON-escaped, base64 and base64url at any alignment, hex, URL-encoded), so both
// ends of the protocol can replace them with [REDACTED] before anything is shown,
// stored or read by a model.
//
// A Set knows secrets two ways: by value (this process was given them) and by keyed
// fingerprint (an earlier process was, and only fingerprints were kept: the host keeps
// them in SQLite, the key in the OS keyring). A fingerprint of a form is its length, a
// keyed rolling hash (to find candidate windows in one pass per length, Rabin-Karp
// style, modulo 2^61-1 with a base drawn from the key) and its HMAC-SHA256 (to confirm
// a candidate). Without the key neither tells anything about the secret: someone with
// the fingerprints but not the key learns how many forms there are and how long they
// are, and cannot test a guess.
//
// A Set is immutable; With* return a new one, so readers need no lock.
package redact

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/bits"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"
)

// Redacted replaces every occurrence of a known secret.
const Redacted = "[REDACTED]"

// MinLen is the shortest secret (bytes) that is redacted; shorter values would blank
// out ordinary text.
const MinLen = 4

// minEncoded is the shortest encoded form kept (base64 cores of short secrets at an
// odd alignment would match random text).
const minEncoded = 8

// KeySize is the size of a fingerprint key in bytes.
const KeySize = 32

// Fingerprint is one form of a secret as kept without the secret: its length in bytes,
// its keyed rolling hash and its HMAC-SHA256 under the key KeyID names.
type Fingerprint struct {
	Length int    `json:"length"`
	Roll   uint64 `json:"roll"`
	MAC    []byte `json:"mac"`
}

// Forms returns the forms a secret may travel in, each once, longest first: the value
// itself; reversed (`rev`); JSON-escaped (Go's escaping, and with every non-ASCII character as \uXXXX as
// Python writes it); base64 and base64url (padded and not, and the characters that
// only the secret determines when it starts at byte 1 or 2 of a 3-byte group, so it is
// found inside a longer encoded text); hex in lower and upper case; URL-encoded (query
// and path escaping, and every byte percent-encoded in upper and lower case). Forms
// shorter than 8 bytes, other than the value itself, are left out. A value shorter
// than MinLen has no forms.
func Forms(secret string) []string {
	if len(secret) < MinLen {
		return nil
	}
	seen := map[string]bool{}
	var out []string
	add := func(f string, raw bool) {
		if f == "" || seen[f] || (!raw && len(f) < minEncoded) {
			return
		}
		seen[f] = true
		out = append(out, f)
	}
	add(secret, true)
	add(reversed(secret), false)
	if b, err := json.Marshal(secret); err == nil {
		add(string(b[1:len(b)-1]), false)
	}
	add(asciiJSON(secret), false)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		add(enc.EncodeToString([]byte(secret)), false)
		add(enc.WithPadding(base64.NoPadding).EncodeToString([]byte(secret)), false)
		for k := 0; k < 3; k++ {
			add(base64Core(enc, secret, k), false)
		}
	}
	h := hex.EncodeToString([]byte(secret))
	add(h, false)
	add(strings.ToUpper(h), false)
	add(url.QueryEscape(secret), false)
	add(url.PathEscape(secret), false)
	var up, low strings.Builder
	for i := 0; i < len(secret); i++ {
		fmt.Fprintf(&up, "%%%02X", secret[i])
		fmt.Fprintf(&low, "%%%02x", secret[i])
	}
	add(up.String(), false)
	add(low.String(), false)
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// reversed is secret with its characters in the opposite order (what `rev` prints).
func reversed(secret string) string {
	r := []rune(secret)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// base64Core is the part of the base64 of a text that depends only on secret when
// secret starts k bytes into a 3-byte group: characters i with 6i >= 8k and
// 6i+6 <= 8(k+len).
func base64Core(enc *base64.Encoding, secret string, k int) string {
	padded := strings.Repeat("\x00", k) + secret
	s := enc.WithPadding(base64.NoPadding).EncodeToString([]byte(padded))
	from := (8*k + 5) / 6
	to := (8 * (k + len(secret))) / 6
	if to > len(s) {
		to = len(s)
	}
	if from >= to {
		return ""
	}
	return s[from:to]
}

// asciiJSON is the JSON string body with every non-ASCII character as \uXXXX.
func asciiJSON(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		return ""
	}
	body := string(b[1 : len(b)-1])
	var sb strings.Builder
	for _, r := range body {
		if r < 0x80 {
			sb.WriteRune(r)
			continue
		}
		if r > 0xFFFF {
			r1, r2 := utf16Pair(r)
			fmt.Fprintf(&sb, `\u%04x\u%04x`, r1, r2)
			continue
		}
		fmt.Fprintf(&sb, `\u%04x`, r)
	}
	return sb.String()
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF
}

const (
	filterBits  = 1 << 14
	filterMask  = filterBits - 1
	filterWords = filterBits / 64
)

// Set is what redaction knows. The zero value and nil redact nothing.
type Set struct {
	key    []byte
	keyID  string
	base   uint64
	values []string // forms of known values, longest first
	// originals are the known values themselves, in the order learnt.
	originals []string
	// fps are fingerprints of forms no known value accounts for, by length then roll.
	fps map[int]map[uint64][][]byte
	// filters are, per length, a bitset of roll&filterMask: most windows are turned
	// down by one bit test instead of a map lookup.
	filters map[int]*[filterWords]uint64
	all     map[string]bool // every fingerprint MAC (hex), kept or covered
	maxLen  int
}

// New returns a Set whose fingerprints are keyed by key (KeySize random bytes; nil for
// a Set that knows values only).
func New(key []byte) *Set {
	s := &Set{fps: map[int]map[uint64][][]byte{}, all: map[string]bool{}}
	if len(key) > 0 {
		s.key = append([]byte(nil), key...)
		m := hmac.New(sha256.New, s.key)
		m.Write([]byte("talaria redaction key id"))
		s.keyID = hex.EncodeToString(m.Sum(nil)[:8])
		m = hmac.New(sha256.New, s.key)
		m.Write([]byte("talaria redaction rolling base"))
		s.base = binary.BigEndian.Uint64(m.Sum(nil)[:8])%(mod-257) + 257
	}
	return s
}

// KeyID names the Set's key ("" without one), so fingerprints of another key are told
// apart.
func (s *Set) KeyID() string {
	if s == nil {
		return ""
	}
	return s.keyID
}

// Key returns a copy of the Set's key (nil without one).
func (s *Set) Key() []byte {
	if s == nil || s.key == nil {
		return nil
	}
	return append([]byte(nil), s.key...)
}

// Empty reports whether s redacts nothing.
func (s *Set) Empty() bool { return s == nil || len(s.values) == 0 && len(s.fps) == 0 }

// MaxLen is the length of the longest form s can find (0 when empty): text held back
// this long minus one byte is enough to find a secret split across pieces.
func (s *Set) MaxLen() int {
	if s == nil {
		return 0
	}
	return s.maxLen
}

func (s *Set) clone() *Set {
	n := &Set{key: s.key, keyID: s.keyID, base: s.base, values: append([]string(nil), s.values...), originals: append([]string(nil), s.originals...),
		fps: make(map[int]map[uint64][][]byte, len(s.fps)), all: make(map[string]bool, len(s.all)), maxLen: s.maxLen}
	for l, m := range s.fps {
		mm := make(map[uint64][][]byte, len(m))
		for r, macs := range m {
			mm[r] = append([][]byte(nil), macs...)
		}
		n.fps[l] = mm
	}
	n.rebuildFilters()
	for k := range s.all {
		n.all[k] = true
	}
	return n
}

// WithValues returns s knowing values too (each in all its forms) and the
// fingerprints of the new forms, for the caller to keep (nil without a key).
func (s *Set) WithValues(values ...string) (*Set, []Fingerprint) {
	if s == nil {
		s = New(nil)
	}
	n := s.clone()
	have := map[string]bool{}
	for _, v := range n.values {
		have[v] = true
	}
	var fresh []Fingerprint
	known := map[string]bool{}
	for _, o := range n.originals {
		known[o] = true
	}
	for _, v := range values {
		if len(v) >= MinLen && !known[v] {
			known[v] = true
			n.originals = append(n.originals, v)
		}
		for _, f := range Forms(v) {
			if have[f] {
				continue
			}
			have[f] = true
			n.values = append(n.values, f)
			n.maxLen = max(n.maxLen, len(f))
			if n.key != nil {
				fp := n.fingerprint([]byte(f))
				n.cover(fp)
				fresh = append(fresh, fp)
			}
		}
	}
	sort.SliceStable(n.values, func(i, j int) bool { return len(n.values[i]) > len(n.values[j]) })
	n.rebuildFilters()
	return n, fresh
}

// WithFingerprints returns s knowing fingerprints too (of s's key; ones made under
// another key never match).
func (s *Set) WithFingerprints(fps ...Fingerprint) *Set {
	if s == nil {
		s = New(nil)
	}
	if s.key == nil || len(fps) == 0 {
		return s
	}
	n := s.clone()
	for _, fp := range fps {
		id := hex.EncodeToString(fp.MAC)
		if n.all[id] || fp.Length <= 0 || len(fp.MAC) != sha256.Size {
			continue
		}
		n.all[id] = true
		m := n.fps[fp.Length]
		if m == nil {
			m = map[uint64][][]byte{}
			n.fps[fp.Length] = m
		}
		m[fp.Roll] = append(m[fp.Roll], append([]byte(nil), fp.MAC...))
		n.maxLen = max(n.maxLen, fp.Length)
	}
	n.rebuildFilters()
	return n
}

func (s *Set) rebuildFilters() {
	s.filters = make(map[int]*[filterWords]uint64, len(s.fps))
	for l, m := range s.fps {
		f := new([filterWords]uint64)
		for r := range m {
			f[(r&filterMask)/64] |= 1 << (r & 63)
		}
		s.filters[l] = f
	}
}

// cover records that a known value accounts for fp: it need not be scanned for.
func (s *Set) cover(fp Fingerprint) {
	id := hex.EncodeToString(fp.MAC)
	s.all[id] = true
	if m := s.fps[fp.Length]; m != nil {
		macs := m[fp.Roll]
		for i, mac := range macs {
			if hmac.Equal(mac, fp.MAC) {
				m[fp.Roll] = append(macs[:i:i], macs[i+1:]...)
				break
			}
		}
		if len(m[fp.Roll]) == 0 {
			delete(m, fp.Roll)
		}
		if len(m) == 0 {
			delete(s.fps, fp.Length)
		}
	}
}

// Fingerprints returns the fingerprints of the forms of the values s knows (nil
// without a key): what a new process needs to go on redacting them.
func (s *Set) Fingerprints() []Fingerprint {
	if s == nil || s.key == nil {
		return nil
	}
	var out []Fingerprint
	for _, v := range s.values {
		out = append(out, s.fingerprint([]byte(v)))
	}
	for l, m := range s.fps {
		for r, macs := range m {
			for _, mac := range macs {
				out = append(out, Fingerprint{Length: l, Roll: r, MAC: mac})
			}
		}
	}
	return out
}

func (s *Set) fingerprint(form []byte) Fingerprint {
	m := hmac.New(sha256.New, s.key)
	m.Write(form)
	return Fingerprint{Length: len(form), Roll: s.roll(form), MAC: m.Sum(nil)}
}

// mod is the Mersenne prime 2^61-1 the rolling hash works modulo.
const mod = 1<<61 - 1

func mulmod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	// (hi*2^64 + lo) mod (2^61-1): 2^64 = 2^3 * 2^61 ≡ 8.
	r := (lo & mod) + (lo >> 61) + (hi << 3 & mod) + (hi >> 58)
	for r >= mod {
		r -= mod
	}
	return r
}

func (s *Set) roll(b []byte) uint64 {
	var h uint64
	for _, c := range b {
		h = mulmod(h, s.base) + uint64(c)
		if h >= mod {
			h -= mod
		}
	}
	return h
}

// Span is a byte range [Start, End) of a found secret.
type Span struct{ Start, End int }

// Find returns the spans of known secrets in b, sorted, overlapping ones merged.
func (s *Set) Find(b []byte) []Span {
	if s.Empty() || len(b) == 0 {
		return nil
	}
	var spans []Span
	for _, v := range s.values {
		if len(v) > len(b) {
			continue
		}
		vb := []byte(v)
		for i := 0; ; {
			j := bytes.Index(b[i:], vb)
			if j < 0 {
				break
			}
			spans = append(spans, Span{i + j, i + j + len(v)})
			i += j + 1
		}
	}
	for l, m := range s.fps {
		if l > len(b) {
			continue
		}
		spans = append(spans, s.scan(b, l, m)...)
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start < spans[j].Start })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.Start < last.End {
			last.End = max(last.End, sp.End)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// scan finds the windows of length l whose rolling hash and HMAC match a fingerprint.
func (s *Set) scan(b []byte, l int, m map[uint64][][]byte) []Span {
	var out []Span
	// base^(l-1): the weight of the byte leaving the window.
	top := uint64(1)
	for i := 0; i < l-1; i++ {
		top = mulmod(top, s.base)
	}
	h := s.roll(b[:l])
	mac := hmac.New(sha256.New, s.key)
	filter := s.filters[l]
	base := s.base
	for i := 0; ; i++ {
		if filter[(h&filterMask)>>6]&(1<<(h&63)) != 0 {
			if macs, ok := m[h]; ok {
				mac.Reset()
				mac.Write(b[i : i+l])
				sum := mac.Sum(nil)
				for _, want := range macs {
					if hmac.Equal(sum, want) {
						out = append(out, Span{i, i + l})
						break
					}
				}
			}
		}
		if i+l >= len(b) {
			break
		}
		// Remove b[i], shift, add b[i+l].
		h = h + mod - mulmod(uint64(b[i]), top)
		if h >= mod {
			h -= mod
		}
		h = mulmod(h, base) + uint64(b[i+l])
		if h >= mod {
			h -= mod
		}
	}
	return out
}

// Redact returns b with every known secret replaced by [REDACTED]; b itself when
// nothing matched.
func (s *Set) Redact(b []byte) []byte {
	spans := s.Find(b)
	if len(spans) == 0 {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b))
	pos := 0
	for _, sp := range spans {
		out.Write(b[pos:sp.Start])
		out.WriteString(Redacted)
		pos = sp.End
	}
	out.Write(b[pos:])
	return out.Bytes()
}

// String is Redact for a string.
func (s *Set) String(t string) string {
	if s.Empty() {
		return t
	}
	return string(s.Redact([]byte(t)))
}

// Window renders b[from:to] with every secret that overlaps the window replaced whole,
// so a cut never shows part of a secret as long as b holds each overlapping occurrence
// completely.
func (s *Set) Window(b []byte, from, to int) string {
	spans := s.Find(b)
	var sb strings.Builder
	pos := from
	for _, sp := range spans {
		if sp.End <= from || sp.Start >= to {
			continue
		}
		if sp.Start > pos {
			sb.Write(b[pos:sp.Start])
		}
		sb.WriteString(Redacted)
		pos = max(pos, sp.End)
	}
	if pos < to {
		sb.Write(b[pos:to])
	}
	return sb.String()
}

// Stream redacts text that arrives in pieces (a model's deltas) so that a secret split
// across pieces is found: Push returns what is safe to show now, redacted, holding back
// the end of the text that could be the start of a secret: the longest end that is the
// beginning of a form of a known value (exact: ordinary text is rarely held), and, when
// the Set knows secrets by fingerprint only, up to their longest length minus one byte
// (at most MaxHold). Release gives up the fingerprint part of what is held (for a
// caller whose stream went quiet); Flush returns all of it. It never cuts inside a
// UTF-8 character.
type Stream struct {
	held []byte
}

// MaxHold bounds what a Stream holds back for fingerprints, in bytes.
const MaxHold = 16 << 10

// fpMaxLen is the longest length of the fingerprints s scans for (0 when none).
func (s *Set) fpMaxLen() int {
	if s == nil {
		return 0
	}
	n := 0
	for l := range s.fps {
		n = max(n, l)
	}
	return n
}

// prefixHold is the length of the longest end of b that is the beginning (shorter than
// the whole) of a form of a known value.
func (s *Set) prefixHold(b []byte) int {
	if s == nil {
		return 0
	}
	best := 0
	for _, v := range s.values {
		for k := min(len(v)-1, len(b)); k > best; k-- {
			if bytes.HasSuffix(b, []byte(v[:k])) {
				best = k
				break
			}
		}
	}
	return best
}

// Push adds text and returns the part that is safe to show, redacted.
func (st *Stream) Push(s *Set, text string) string {
	buf := append(st.held, text...)
	if s.Empty() {
		st.held = nil
		return string(buf)
	}
	hold := max(s.prefixHold(buf), min(s.fpMaxLen()-1, MaxHold))
	return st.cut(s, buf, hold)
}

// Release returns the held text that only fingerprints held back, redacted, keeping
// what could be the start of a known value.
func (st *Stream) Release(s *Set) string {
	if len(st.held) == 0 {
		return ""
	}
	return st.cut(s, st.held, s.prefixHold(st.held))
}

func (st *Stream) cut(s *Set, buf []byte, hold int) string {
	cut := len(buf) - hold
	if cut <= 0 {
		st.held = buf
		return ""
	}
	spans := s.Find(buf)
	for _, sp := range spans {
		if sp.Start < cut && sp.End > cut {
			cut = sp.End
		}
	}
	for cut > 0 && cut < len(buf) && !utf8.RuneStart(buf[cut]) {
		cut--
	}
	out := renderSpans(buf[:cut], spans)
	st.held = append([]byte(nil), buf[cut:]...)
	return out
}

// Flush returns what is held back, redacted, and empties the stream.
func (st *Stream) Flush(s *Set) string {
	buf := st.held
	st.held = nil
	if len(buf) == 0 {
		return ""
	}
	return string(s.Redact(buf))
}

// Held reports how many bytes the stream holds back.
func (st *Stream) Held() int { return len(st.held) }

// renderSpans writes b with the spans that lie inside it replaced.
func renderSpans(b []byte, spans []Span) string {
	var sb strings.Builder
	pos := 0
	for _, sp := range spans {
		if sp.Start >= len(b) {
			break
		}
		end := min(sp.End, len(b))
		sb.Write(b[pos:sp.Start])
		sb.WriteString(Redacted)
		pos = end
	}
	sb.Write(b[pos:])
	return sb.String()
}

// Values returns the values s knows (for a new Set with another key to know them too).
func (s *Set) Values() []string {
	if s == nil {
		return nil
	}
	return append([]string(nil), s.originals...)
}

// Knows reports whether s knows value itself.
func (s *Set) Knows(value string) bool {
	if s == nil {
		return false
	}
	for _, o := range s.originals {
		if o == value {
			return true
		}
	}
	return false
}
