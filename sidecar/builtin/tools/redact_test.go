package tools

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestRedactor(t *testing.T) {
	r := NewRedactor("s3cret", "", "s3cret-longer", "abcd", "xyz")
	tests := map[string]string{
		"":                          "",
		"nothing here":              "nothing here",
		"token=s3cret;":             "token=[REDACTED];",
		"s3cret-longer and s3cret":  "[REDACTED] and [REDACTED]",
		"abcdabcd":                  "[REDACTED][REDACTED]",
		"xs3cretabcd":               "x[REDACTED][REDACTED]",
		"xyz is too short a secret": "xyz is too short a secret",
		"s3crets3cret":              "[REDACTED][REDACTED]",
	}
	for in, want := range tests {
		if got := r.String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if !NewRedactor().Empty() || (*Redactor)(nil).String("x") != "x" {
		t.Error("an empty redactor changed text")
	}
	// Overlapping occurrences are one.
	if got := NewRedactor("abab").String("ababab"); got != "[REDACTED]" {
		t.Errorf("overlap: %q", got)
	}
}

func TestHeadTail(t *testing.T) {
	h := newHeadTail(10, 0)
	h.Write([]byte("0123"))
	h.Write([]byte("456789"))
	if s, cut := h.String(nil); s != "0123456789" || cut {
		t.Fatalf("%q %v", s, cut)
	}
	h.Write([]byte("abcdefghij"))
	s, cut := h.String(nil)
	if !cut || s != "01234\n[... 10 bytes of output omitted ...]\nfghij" {
		t.Fatalf("%q", s)
	}
}

// TestHeadTailNeverShowsPartOfASecret writes random output with the secret placed at
// random offsets, in random pieces, and checks no 4-byte piece of it is shown.
func TestHeadTailNeverShowsPartOfASecret(t *testing.T) {
	const secret = "Zq9-SECRET-VALUE-7Wp"
	red := NewRedactor(secret)
	rnd := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 3000; i++ {
		limit := 8 + rnd.IntN(60)
		var sb strings.Builder
		for sb.Len() < rnd.IntN(200) {
			if rnd.IntN(5) == 0 {
				sb.WriteString(secret)
			} else {
				sb.WriteByte(byte('a' + rnd.IntN(26)))
			}
		}
		out := sb.String()
		h := newHeadTail(limit, len(secret))
		for rest := out; rest != ""; {
			k := min(len(rest), 1+rnd.IntN(30))
			h.Write([]byte(rest[:k]))
			rest = rest[k:]
		}
		got, _ := h.String(red)
		for j := 0; j+4 <= len(secret); j++ {
			if strings.Contains(got, secret[j:j+4]) {
				t.Fatalf("limit %d: %q shows %q of the secret (output %q)", limit, got, secret[j:j+4], out)
			}
		}
		if len(out) <= limit && got != red.String(out) {
			t.Fatalf("short output changed: %q -> %q", out, got)
		}
	}
}

func TestCap(t *testing.T) {
	if s, cut := Cap("héllo", 2); cut != true || !strings.HasPrefix(s, "h\n[... 5 more bytes") {
		t.Fatalf("%q", s)
	}
	if s, cut := Cap("abc", 3); cut || s != "abc" {
		t.Fatal(s)
	}
}
