package acp

import (
	"bytes"
	"strings"
	"testing"
)

// TestLineTailRedactsSecretAcrossCut: an agent stderr line whose secret straddles the
// maxStderrLine cut must reach neither the forwarded log nor the tail with any part of
// the secret's prefix (security review #9: redact before truncating). The redactor is
// a plain replacer: the property tested is the cut's order, not how secrets are learnt.
func TestLineTailRedactsSecretAcrossCut(t *testing.T) {
	secret := "sk-test-0123456789abcdefSECRETVALUE"
	redact := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	var out bytes.Buffer
	tail := newLineTail(4, &out, redact)
	// A line longer than maxStderrLine is cut to preview's 200 bytes: put the secret
	// across that cut, after enough filler to make the line long.
	line := strings.Repeat("x", 190) + secret + strings.Repeat("y", maxStderrLine) + "\n"
	tail.consume(strings.NewReader(line))
	prefix := secret[:10]
	if strings.Contains(out.String(), prefix) {
		t.Fatalf("forwarded stderr keeps the secret's prefix %q", prefix)
	}
	for _, l := range tail.Last(4) {
		if strings.Contains(l, prefix) {
			t.Fatalf("tail keeps the secret's prefix %q", prefix)
		}
	}
}
