package redact

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"math/big"
	"net/url"
	"strings"
	"testing"
)

const canary = "tok_CANARY-7f3a9Zq!x/y+z=&é"

func key(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	rand.Read(k)
	return k
}

// encodings are the ways a command or a model may print the canary inside other text.
func encodings(secret string) map[string]string {
	b := []byte(secret)
	return map[string]string{
		"raw":            "value=" + secret + ";",
		"reversed":       "rev: " + reversed(secret) + "\n",
		"base64":         "echo " + base64.StdEncoding.EncodeToString(b) + " done",
		"base64 newline": base64.StdEncoding.EncodeToString(append(b, '\n')),
		"base64 offset1": base64.StdEncoding.EncodeToString(append([]byte("x"), b...)),
		"base64 offset2": base64.StdEncoding.EncodeToString(append([]byte("xy"), b...)),
		"base64 inside":  base64.StdEncoding.EncodeToString([]byte("Authorization: Bearer " + secret + "\r\nHost: x")),
		"base64url":      base64.RawURLEncoding.EncodeToString(append([]byte("k="), b...)),
		"hex":            "0x" + hex.EncodeToString(b),
		"HEX":            strings.ToUpper(hex.EncodeToString(b)),
		"hex inside":     hex.EncodeToString([]byte("[" + secret + "]")),
		"query":          "https://x.io/?t=" + url.QueryEscape(secret) + "&a=1",
		"path":           "/" + url.PathEscape(secret) + "/",
		"json":           `{"t":"` + strings.Trim(jsonOf(secret), `"`) + `"}`,
	}
}

func jsonOf(s string) string {
	b, _ := (&strings.Builder{}), 0
	_ = b
	q := []byte{'"'}
	for _, r := range s {
		switch r {
		case '"', '\\':
			q = append(q, '\\', byte(r))
		case '&':
			q = append(q, []byte(`\u0026`)...)
		default:
			q = append(q, string(r)...)
		}
	}
	return string(append(q, '"'))
}

func TestFormsAreFound(t *testing.T) {
	s, _ := New(key(t)).WithValues(canary)
	for name, text := range encodings(canary) {
		got := s.String(text)
		if !strings.Contains(got, Redacted) {
			t.Errorf("%s: not redacted: %q", name, got)
		}
		for _, leak := range encodings(canary) {
			_ = leak
		}
	}
}

// TestFingerprintsAfterRestart: a Set that knows only the fingerprints (the value is
// forgotten, as after a restart) redacts every form just the same, and one with another
// key redacts nothing.
func TestFingerprintsAfterRestart(t *testing.T) {
	k := key(t)
	_, fps := New(k).WithValues(canary)
	if len(fps) < 10 {
		t.Fatalf("%d fingerprints", len(fps))
	}
	restarted := New(k).WithFingerprints(fps...)
	for name, text := range encodings(canary) {
		if got := restarted.String(text); !strings.Contains(got, Redacted) || strings.Contains(got, "CANARY") {
			t.Errorf("%s after a restart: %q", name, got)
		}
	}
	other := New(key(t)).WithFingerprints(fps...)
	if got := other.String("value=" + canary); strings.Contains(got, Redacted) {
		t.Fatalf("another key matched: %q", got)
	}
	// The fingerprints say nothing of the secret.
	for _, fp := range fps {
		if strings.Contains(string(fp.MAC), "CANARY") {
			t.Fatal("a MAC holds the secret")
		}
	}
	// A value known again covers its fingerprints: nothing left to scan for.
	again, _ := restarted.WithValues(canary)
	if len(again.fps) != 0 {
		t.Fatalf("%d lengths still scanned", len(again.fps))
	}
}

func TestNoFalsePositives(t *testing.T) {
	k := key(t)
	s, _ := New(k).WithValues("hunter22", "sk-live-abcdef1234567890", canary)
	_, fps := New(k).WithValues("hunter22", "sk-live-abcdef1234567890", canary)
	fs := New(k).WithFingerprints(fps...)
	text := make([]byte, 1<<20)
	rand.Read(text)
	b64 := base64.StdEncoding.EncodeToString(text)
	hx := hex.EncodeToString(text[:1<<18])
	for _, set := range []*Set{s, fs} {
		for _, x := range []string{b64, hx, string(text)} {
			if n := len(set.Find([]byte(x))); n != 0 {
				t.Errorf("%d matches in %d random bytes", n, len(x))
			}
		}
	}
	if got := s.String("hunter2 is short, hunter223 contains it"); got != "hunter2 is short, [REDACTED]3 contains it" {
		t.Fatalf("%q", got)
	}
	if f := Forms("abc"); f != nil {
		t.Fatalf("a short value has forms: %v", f)
	}
}

// TestStream: a secret split over many small pieces is never shown; what is shown
// equals redacting the whole text.
func TestStream(t *testing.T) {
	s, _ := New(key(t)).WithValues(canary)
	for _, text := range []string{
		"before " + canary + " after",
		canary,
		"a" + base64.StdEncoding.EncodeToString([]byte(canary)) + "b",
		strings.Repeat("x", 100) + canary + strings.Repeat("é", 50) + canary,
		"no secret here at all, just text that goes on for a while é",
	} {
		for _, size := range []int{1, 2, 3, 7, 64} {
			var st Stream
			var shown strings.Builder
			b := []byte(text)
			for i := 0; i < len(b); {
				n := size
				if i+n > len(b) {
					n = len(b) - i
				}
				// Pieces are whole characters, as JSON strings carry them.
				for i+n < len(b) && !utf8RuneStart(b[i+n]) {
					n++
				}
				piece := st.Push(s, string(b[i:i+n]))
				if strings.Contains(piece, "CANARY") {
					t.Fatalf("piece shows the secret: %q", piece)
				}
				shown.WriteString(piece)
				i += n
			}
			shown.WriteString(st.Flush(s))
			if want := s.String(text); shown.String() != want {
				t.Fatalf("size %d: shown %q\nwant %q", size, shown.String(), want)
			}
		}
	}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func TestRollingMatchesDirect(t *testing.T) {
	s := New(key(t))
	for i := 0; i < 200; i++ {
		n, _ := rand.Int(rand.Reader, big.NewInt(300))
		b := make([]byte, n.Int64()+MinLen)
		rand.Read(b)
		fp := s.fingerprint(b)
		set := s.WithFingerprints(fp)
		text := append(append([]byte("prefix-"), b...), "-suffix"...)
		sp := set.Find(text)
		if len(sp) != 1 || sp[0].Start != 7 || sp[0].End != 7+len(b) {
			t.Fatalf("length %d: spans %v", len(b), sp)
		}
	}
}

func BenchmarkFind(b *testing.B) {
	k := make([]byte, KeySize)
	var values []string
	for i := 0; i < 10; i++ {
		values = append(values, "secret-value-number-"+strings.Repeat("x", i)+"-end")
	}
	_, fps := New(k).WithValues(values...)
	known, _ := New(k).WithValues(values...)
	forgotten := New(k).WithFingerprints(fps...)
	text := []byte(strings.Repeat("ordinary command output line with numbers 12345\n", 1400)) // ~64 KiB
	b.Run("known values", func(b *testing.B) {
		for b.Loop() {
			known.Find(text)
		}
	})
	b.Run("fingerprints only", func(b *testing.B) {
		for b.Loop() {
			forgotten.Find(text)
		}
	})
}

// TestStreamHoldsLittle: ordinary text is not held back; only an end that begins a
// known secret is.
func TestStreamHoldsLittle(t *testing.T) {
	s, _ := New(key(t)).WithValues("sk-live-SECRETSECRET")
	var st Stream
	if got := st.Push(s, "Partial answer"); got != "Partial answer" || st.Held() != 0 {
		t.Fatalf("ordinary text held: %q held %d", got, st.Held())
	}
	if got := st.Push(s, " then sk-li"); got != " then " || st.Held() != 5 {
		t.Fatalf("a secret's start: %q held %d", got, st.Held())
	}
	if got := st.Release(s); got != "" {
		t.Fatalf("released a known value's start: %q", got)
	}
	if got := st.Push(s, "ve-SECRETSECRET done"); got != "[REDACTED] done" {
		t.Fatalf("%q", got)
	}
	// Fingerprints only: held back, and given up by Release.
	k := key(t)
	_, fps := New(k).WithValues("sk-live-SECRETSECRET")
	f := New(k).WithFingerprints(fps...)
	var fs Stream
	out := fs.Push(f, "some words")
	if fs.Held() == 0 {
		t.Fatal("fingerprints hold nothing back")
	}
	out += fs.Release(f)
	if out != "some words" || fs.Held() != 0 {
		t.Fatalf("released %q, held %d", out, fs.Held())
	}
}
