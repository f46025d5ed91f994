package stderrtail

import (
	"bufio"
	"errors"
	"io"
)

// LineKeep is how many bytes of one stderr line ReadLines hands on (64 KiB): room to
// redact a secret before a reader cuts the line to what it shows (a few KiB), and a
// bound on what one line without a newline can hold in memory.
const LineKeep = 64 << 10

// ReadLines reads r until EOF or a read error, calling fn with each line (without its
// "\n"). A line longer than keep bytes is handed on as its first keep bytes with cut
// true, and the rest of it up to its newline is read and dropped: however long a
// process writes without a newline, memory stays bounded and its pipe keeps draining
// (a reader that stopped at a long line, as bufio.Scanner does with ErrTooLong, left the
// writer blocked on a full pipe). keep <= 0 means LineKeep.
func ReadLines(r io.Reader, keep int, fn func(line string, cut bool)) {
	if keep <= 0 {
		keep = LineKeep
	}
	br := bufio.NewReaderSize(r, 16<<10)
	var buf []byte
	cut := false
	for {
		frag, err := br.ReadSlice('\n')
		eol := len(frag) > 0 && frag[len(frag)-1] == '\n'
		if eol {
			frag = frag[:len(frag)-1]
		}
		if room := keep - len(buf); len(frag) > room {
			buf, cut = append(buf, frag[:max(room, 0)]...), true
		} else {
			buf = append(buf, frag...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if eol || len(buf) > 0 || cut {
			fn(string(buf), cut)
		}
		buf, cut = buf[:0], false
		if err != nil {
			return
		}
	}
}
