package stderrtail

import (
	"io"
	"reflect"
	"strings"
	"testing"
)

type line struct {
	text string
	cut  bool
}

func readAll(r io.Reader, keep int) []line {
	var out []line
	ReadLines(r, keep, func(l string, cut bool) { out = append(out, line{l, cut}) })
	return out
}

// TestReadLines: lines are handed on whole up to keep bytes; a longer one is cut and the
// next line after it arrives intact; the last line without a newline is handed on.
func TestReadLines(t *testing.T) {
	in := "one\n" + strings.Repeat("x", 10) + "\n" + strings.Repeat("y", 11) + "\nlast"
	got := readAll(strings.NewReader(in), 10)
	want := []line{{"one", false}, {strings.Repeat("x", 10), false}, {strings.Repeat("y", 10), true}, {"last", false}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadLines = %+v, want %+v", got, want)
	}
}

// endless writes n bytes of 'z' and then "\nafter\n", counting what was read.
type endless struct{ n, read int }

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= e.n+len("\nafter\n") {
		return 0, io.EOF
	}
	k := 0
	for k < len(p) && e.read < e.n+len("\nafter\n") {
		if e.read < e.n {
			p[k] = 'z'
		} else {
			p[k] = "\nafter\n"[e.read-e.n]
		}
		k++
		e.read++
	}
	return k, nil
}

// TestReadLinesDrainsAHugeLine: a 64 MiB line without a newline is read to its end
// (the writer is never left blocked), handed on cut to LineKeep bytes, and the line
// after it arrives.
func TestReadLinesDrainsAHugeLine(t *testing.T) {
	src := &endless{n: 64 << 20}
	got := readAll(src, 0)
	if len(got) != 2 || len(got[0].text) != LineKeep || !got[0].cut || got[1] != (line{"after", false}) {
		t.Fatalf("ReadLines of a 64 MiB line: %d lines, first %d bytes cut=%v", len(got), len(got[0].text), len(got) > 0 && got[0].cut)
	}
	if src.read != src.n+len("\nafter\n") {
		t.Fatalf("read %d of %d bytes", src.read, src.n+len("\nafter\n"))
	}
}
