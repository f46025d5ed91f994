package acp

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestCheckLines(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"result":{}}`
	for _, tc := range []struct {
		name, in, out, reason string
	}{
		{"good lines pass, blank lines are dropped", good + "\n\n  \n" + good + "\r\n", good + "\n" + good + "\r\n", ""},
		{"a last line without a newline", good, good + "\n", ""},
		{"not JSON", good + "\nStarting server...\n" + good + "\n", good + "\n", "not JSON"},
		{"JSON that is not an object", "[1,2]\n", "", "not JSON"},
		{"an object without jsonrpc", `{"id":1,"result":{}}` + "\n", "", "JSON-RPC 2.0"},
		{"another jsonrpc version", `{"jsonrpc":"1.0","id":1}` + "\n", "", "JSON-RPC 2.0"},
		{"truncated JSON", `{"jsonrpc":"2.0","id":1,"res` + "\n", "", "not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			err := checkLines(strings.NewReader(tc.in), &out)
			var pe *ProtocolError
			if tc.reason == "" {
				if err != nil {
					t.Fatal(err)
				}
			} else if !errors.As(err, &pe) || !strings.Contains(pe.Error(), tc.reason) {
				t.Fatalf("err = %v, want a protocol error about %q", err, tc.reason)
			}
			if out.String() != tc.out {
				t.Fatalf("passed %q, want %q", out.String(), tc.out)
			}
		})
	}
	// A line over the limit is refused without being buffered whole.
	long := `{"jsonrpc":"2.0","x":"` + strings.Repeat("a", maxAgentLine) + `"}` + "\n"
	var pe *ProtocolError
	if err := checkLines(strings.NewReader(long), &bytes.Buffer{}); !errors.As(err, &pe) || !strings.Contains(pe.Reason, "longer") || len(pe.Line) > 200 {
		t.Fatalf("long line: %v", err)
	}
}
