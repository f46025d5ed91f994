package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// maxAgentLine is the longest line accepted from an agent: the ACP SDK's own reader
// gives up on longer ones (10 MiB).
const maxAgentLine = 10 << 20

// ProtocolError is how an agent broke the wire format: a line that is not a JSON-RPC
// 2.0 object, or one longer than the limit. Line is the start of the offending line
// (at most 200 bytes, valid UTF-8), for the message the user sees.
type ProtocolError struct {
	Reason string
	Line   string
}

func (e *ProtocolError) Error() string {
	if e.Line == "" {
		return "the agent " + e.Reason
	}
	return fmt.Sprintf("the agent %s: %s", e.Reason, strconv.Quote(e.Line))
}

// checkLines copies agent output from r to w line by line, letting through only lines
// that are JSON objects with "jsonrpc": "2.0" (blank lines are skipped). It returns at
// the end of r (nil), on a write error, or with a *ProtocolError at the first bad line,
// which is not written: the caller then ends the connection, because an agent that
// writes something else on stdout cannot be trusted to keep the stream in step.
func checkLines(r io.Reader, w io.Writer) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > maxAgentLine+1 {
			return &ProtocolError{Reason: fmt.Sprintf("wrote a line longer than %d MiB", maxAgentLine>>20), Line: preview(append(line, chunk...))}
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(line) > 0 {
			if perr := checkLine(line); perr != nil {
				return perr
			}
			if len(bytes.TrimSpace(line)) > 0 {
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				if _, werr := w.Write(line); werr != nil {
					return werr
				}
			}
		}
		line = line[:0]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// checkLine reports a *ProtocolError for a non-blank line that is not a JSON-RPC 2.0
// object.
func checkLine(line []byte) error {
	t := bytes.TrimSpace(line)
	if len(t) == 0 {
		return nil
	}
	var env struct {
		JSONRPC *string `json:"jsonrpc"`
	}
	if t[0] != '{' || json.Unmarshal(t, &env) != nil {
		return &ProtocolError{Reason: "wrote a line that is not JSON", Line: preview(t)}
	}
	if env.JSONRPC == nil || *env.JSONRPC != "2.0" {
		return &ProtocolError{Reason: `wrote a JSON line that is not JSON-RPC 2.0 (no "jsonrpc": "2.0")`, Line: preview(t)}
	}
	return nil
}

// preview is the start of a line for an error message: at most 200 bytes, cut on a
// character boundary, invalid UTF-8 replaced.
func preview(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 200 {
		b = b[:200]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}
