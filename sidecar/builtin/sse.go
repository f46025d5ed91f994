package builtin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxSSEBytes bounds one SSE line and one event's data, in bytes. A larger event is a
// provider fault (errSSETooLarge), not something to buffer without end.
const maxSSEBytes = 8 << 20

// errSSETooLarge is returned by sseReader.Next for a line or event over maxSSEBytes.
var errSSETooLarge = fmt.Errorf("server-sent event larger than %d bytes", maxSSEBytes)

// sseReader parses a text/event-stream body (the WHATWG "server-sent events" format) and
// returns the data of each event. Lines end in LF, CRLF or a lone CR; "data:" fields of
// one event are joined with "\n"; comments (":" lines, keep-alives) and the event, id
// and retry fields are ignored; a leading byte-order mark is dropped. Bytes are kept
// until a whole line is read, so UTF-8 split across network reads is intact.
//
// One deliberate leniency: an event still open when the body ends is dispatched rather
// than discarded, for servers that end the stream without a final blank line. One
// extension: an "error" field (llama.cpp's llama-server writes a mid-stream failure as
// "error: {json}") is read as the data of an event named "error".
type sseReader struct {
	r       *bufio.Reader
	line    []byte
	data    []byte
	hasData bool
	event   string // the event field of the event being read
	// Event is the event name of the event Next returned last ("" for the default,
	// "message"; "error" for llama.cpp's error field or "event: error").
	Event   string
	skipLF  bool // the last line ended in CR: a following LF belongs to it
	started bool
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, 32<<10)}
}

// Next returns the data of the next event. Errors: io.EOF at the end of the body,
// errSSETooLarge, or the body's read error (a cancelled request's context error, an
// unexpected EOF when the connection was cut).
func (s *sseReader) Next() (string, error) {
	for {
		line, err := s.readLine()
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		if errors.Is(err, io.EOF) {
			if len(line) > 0 {
				s.field(line)
			}
			if s.hasData {
				return s.dispatch(), nil
			}
			return "", io.EOF
		}
		if len(line) == 0 {
			if s.hasData {
				return s.dispatch(), nil
			}
			s.event = "" // an event without data is not dispatched
			continue
		}
		s.field(line)
		if len(s.data) > maxSSEBytes {
			return "", errSSETooLarge
		}
	}
}

func (s *sseReader) dispatch() string {
	d := string(s.data)
	s.data = s.data[:0]
	s.hasData = false
	s.Event, s.event = s.event, ""
	return d
}

// field applies one non-blank line.
func (s *sseReader) field(line []byte) {
	name, value, found := bytes.Cut(line, []byte{':'})
	if found && len(name) == 0 {
		return // a comment
	}
	if len(value) > 0 && value[0] == ' ' {
		value = value[1:]
	}
	switch string(name) {
	case "data":
	case "event":
		s.event = string(value)
		return
	case "error":
		s.event = "error"
	default:
		return // id, retry and unknown fields do not matter here
	}
	if s.hasData {
		s.data = append(s.data, '\n')
	}
	s.data = append(s.data, value...)
	s.hasData = true
}

// readLine returns the next line without its terminator. At the end of the body it
// returns what is left (possibly empty) with io.EOF. The returned slice is valid until
// the next call.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	if s.skipLF {
		b, err := s.r.Peek(1)
		if err != nil {
			return nil, err
		}
		if b[0] == '\n' {
			s.r.Discard(1) //nolint:errcheck // the byte is buffered
		}
		s.skipLF = false
	}
	for {
		n := s.r.Buffered()
		if n == 0 {
			if _, err := s.r.Peek(1); err != nil {
				return s.first(s.line), err
			}
			n = s.r.Buffered()
		}
		buf, _ := s.r.Peek(n)
		if i := bytes.IndexAny(buf, "\r\n"); i >= 0 {
			s.line = append(s.line, buf[:i]...)
			s.skipLF = buf[i] == '\r'
			s.r.Discard(i + 1) //nolint:errcheck // the bytes are buffered
			if len(s.line) > maxSSEBytes {
				return nil, errSSETooLarge
			}
			return s.first(s.line), nil
		}
		s.line = append(s.line, buf...)
		s.r.Discard(n) //nolint:errcheck // the bytes are buffered
		if len(s.line) > maxSSEBytes {
			return nil, errSSETooLarge
		}
	}
}

// first drops a byte-order mark at the very start of the stream.
func (s *sseReader) first(line []byte) []byte {
	if s.started {
		return line
	}
	s.started = true
	return bytes.TrimPrefix(line, []byte("\uFEFF"))
}
