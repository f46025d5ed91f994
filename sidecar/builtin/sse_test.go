package builtin

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"talaria/internal/testwait"
)

func readEvents(r io.Reader) ([]string, error) {
	s := newSSEReader(r)
	var out []string
	for {
		d, err := s.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, d)
	}
}

func TestSSEReader(t *testing.T) {
	long := strings.Repeat("é", 300_000) // 600 KB, multi-byte
	tests := []struct {
		name  string
		input string
		want  []string
	}{
		{"single event", "data: hello\n\n", []string{"hello"}},
		{"no space after colon", "data:hello\n\n", []string{"hello"}},
		{"only one leading space removed", "data:  two\n\n", []string{" two"}},
		{"multi-line data joined", "data: a\ndata: b\ndata:\ndata: c\n\n", []string{"a\nb\n\nc"}},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"lone cr", "data: a\r\rdata: b\rdata: c\r\r", []string{"a", "b\nc"}},
		{"mixed endings", "data: a\r\n\ndata: b\r\r\ndata: c\n\r", []string{"a", "b", "c"}},
		{"done marker is data", "data: {\"x\":1}\n\ndata: [DONE]\n\n", []string{`{"x":1}`, "[DONE]"}},
		{"comments and keep-alives", ": keep-alive\n\n:\n: OPENROUTER PROCESSING\n\ndata: x\n: inner comment\n\n", []string{"x"}},
		{"event id retry fields ignored", "event: message\nid: 7\nretry: 100\ndata: x\n\nevent: ping\n\n", []string{"x"}},
		{"field without colon", "data\n\n", []string{""}},
		{"empty data event", "data:\n\n", []string{""}},
		{"blank lines only", "\n\n\r\n\r", nil},
		{"unknown field", "foo: bar\ndata: y\n\n", []string{"y"}},
		{"byte order mark", "\uFEFFdata: bom\n\n", []string{"bom"}},
		{"last event without blank line", "data: a\n\ndata: tail", []string{"a", "tail"}},
		{"last line with newline but no blank line", "data: tail\n", []string{"tail"}},
		{"colon in value", "data: {\"a\":\"b:c\"}\n\n", []string{`{"a":"b:c"}`}},
		{"utf-8", "data: héllo wörld ✓ 😀\n\n", []string{"héllo wörld ✓ 😀"}},
		{"very long line", "data: " + long + "\n\ndata: after\n\n", []string{long, "after"}},
		{"error object", "data: {\"error\":{\"message\":\"boom\",\"code\":502}}\n\n", []string{`{"error":{"message":"boom","code":502}}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]func() io.Reader{
				"whole":     func() io.Reader { return strings.NewReader(tt.input) },
				"byte-wise": func() io.Reader { return iotest.OneByteReader(strings.NewReader(tt.input)) },
				"half":      func() io.Reader { return iotest.HalfReader(strings.NewReader(tt.input)) },
			}
			for name, mk := range readers {
				if name == "byte-wise" && len(tt.input) > 100_000 {
					continue // covered by the whole and half readers; byte-wise is slow under -race
				}
				got, err := readEvents(mk())
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if strings.Join(got, "\x00") != strings.Join(tt.want, "\x00") || len(got) != len(tt.want) {
					t.Fatalf("%s: got %q, want %q", name, clip(got), clip(tt.want))
				}
			}
		})
	}
}

func clip(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		if len(v) > 40 {
			v = v[:40] + "…"
		}
		out[i] = v
	}
	return out
}

// TestSSEReaderUTF8SplitByteByByte: every multi-byte rune is split across reads.
func TestSSEReaderUTF8SplitByteByByte(t *testing.T) {
	text := strings.Repeat("日本語😀é", 200)
	got, err := readEvents(iotest.OneByteReader(strings.NewReader("data: " + text + "\n\n")))
	if err != nil || len(got) != 1 || got[0] != text {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
}

func TestSSEReaderTooLarge(t *testing.T) {
	tests := map[string]string{
		"one long line":       "data: " + strings.Repeat("a", maxSSEBytes+1) + "\n\n",
		"many data lines":     strings.Repeat("data: "+strings.Repeat("b", 1<<20)+"\n", 9) + "\n",
		"long line, no break": "data: " + strings.Repeat("c", maxSSEBytes+1),
	}
	for name, input := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := readEvents(strings.NewReader(input))
			if !errors.Is(err, errSSETooLarge) {
				t.Fatalf("want errSSETooLarge, got %v", err)
			}
		})
	}
}

func TestSSEReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readEvents(r)
	if !errors.Is(err, boom) || len(got) != 1 || got[0] != "a" {
		t.Fatalf("got %q, %v", got, err)
	}
}

// TestSSEReaderDispatchesWithoutReadingAhead: an event is returned as soon as its blank
// line arrives, even after a CR line ending, without waiting for more bytes.
func TestSSEReaderDispatchesWithoutReadingAhead(t *testing.T) {
	for _, ending := range []string{"\n\n", "\r\r", "\r\n\r\n"} {
		pr, pw := io.Pipe()
		go pw.Write([]byte("data: now" + ending)) //nolint:errcheck
		s := newSSEReader(pr)
		got := make(chan string, 1)
		go func() {
			d, _ := s.Next()
			got <- d
		}()
		// No more bytes ever come before the pipe's close below: an event held back
		// until more arrive never comes (testwait's deadline).
		if d := testwait.Recv(t, got, fmt.Sprintf("%q: the event, without more bytes", ending)); d != "now" {
			t.Fatalf("%q: got %q", ending, d)
		}
		pw.Close()
	}
}
