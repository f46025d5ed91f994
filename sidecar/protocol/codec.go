package protocol

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
)

// LineError is a recoverable decode failure of one line: the line was skipped and the
// next call to Decoder.Next reads the line after it. Condition is parse_error (not JSON
// or not an object), line_too_long (over MaxLineBytes) or invalid_params (not a
// JSON-RPC 2.0 envelope). ID is the line's id when one could be read, so the peer can
// be answered.
type LineError struct {
	Condition string
	Detail    string
	ID        json.RawMessage
}

func (e *LineError) Error() string { return e.Condition + ": " + e.Detail }

// Decoder reads NDJSON envelopes. It is not safe for concurrent use.
type Decoder struct {
	r   *bufio.Reader
	max int
}

// NewDecoder reads envelopes from r; lines longer than MaxLineBytes are skipped with a
// *LineError.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), max: MaxLineBytes}
}

// SetMaxLine changes the line limit (bytes); tests use it to exercise the limit cheaply.
func (d *Decoder) SetMaxLine(n int) { d.max = n }

// Next returns the next envelope. Errors: io.EOF at the end of input (a final line
// without newline is still decoded), a *LineError for a bad line (recoverable: call
// Next again), or the reader's own error.
func (d *Decoder) Next() (*Envelope, error) {
	for {
		line, tooLong, err := d.readLine()
		if tooLong {
			return nil, &LineError{Condition: CondLineTooLong, Detail: fmt.Sprintf("line exceeds %d bytes", d.max)}
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err != nil {
				return nil, err
			}
			continue // blank lines are ignored
		}
		return decodeLine(line)
	}
}

// readLine reads up to '\n'. When the line exceeds the limit the rest of it is consumed
// and discarded and tooLong is true.
func (d *Decoder) readLine() (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := d.r.ReadSlice('\n')
		if len(buf)+len(chunk) > d.max+1 { // +1: the newline itself
			tooLong = true
			buf = nil
			// Discard to the end of the line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = d.r.ReadSlice('\n')
			}
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, true, err
			}
			return nil, true, nil
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if len(buf) > d.max && buf[len(buf)-1] != '\n' {
			// A final line without newline: the +1 allowance above does not apply.
			return nil, true, nil
		}
		return buf, false, err
	}
}

// framePrefix is how every $/frame line the Encoder writes begins (Encoder.Frame).
var framePrefix = []byte(`{"jsonrpc":"2.0","method":"` + MethodFrame + `","params":`)

// frameLine is a $/frame envelope with its params typed, so a frame is decoded in one
// pass instead of the envelope and then its params.
type frameLine struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method"`
	Params  FrameParams     `json:"params"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// NextFrame is Next for a reader of $/frame notifications (the host): a frame line is
// returned as its params (env nil), decoded in one pass; any other line as its
// envelope (frame nil), as Next returns it. Errors as Next's.
func (d *Decoder) NextFrame() (env *Envelope, frame *FrameParams, err error) {
	for {
		line, tooLong, err := d.readLine()
		if tooLong {
			return nil, nil, &LineError{Condition: CondLineTooLong, Detail: fmt.Sprintf("line exceeds %d bytes", d.max)}
		}
		if err != nil && (len(line) == 0 || !errors.Is(err, io.EOF)) {
			return nil, nil, err
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err != nil {
				return nil, nil, err
			}
			continue
		}
		if bytes.HasPrefix(line, framePrefix) {
			var fl frameLine
			if json.Unmarshal(line, &fl) == nil && fl.JSONRPC == "2.0" && fl.Method == MethodFrame && len(fl.ID) == 0 &&
				fl.Result == nil && fl.Error == nil {
				return nil, &fl.Params, nil
			}
		}
		env, err := decodeLine(line)
		return env, nil, err
	}
}

func decodeLine(line []byte) (*Envelope, error) {
	if line[0] != '{' {
		if !json.Valid(line) {
			return nil, &LineError{Condition: CondParseError, Detail: "line is not valid JSON"}
		}
		return nil, &LineError{Condition: CondParseError, Detail: "line is not a JSON object"}
	}
	var env Envelope
	if err := json.Unmarshal(line, &env); err != nil {
		// Try to recover the id so the peer can be answered.
		var probe struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(line, &probe)
		return nil, &LineError{Condition: CondParseError, Detail: "invalid JSON-RPC envelope: " + err.Error(), ID: probe.ID}
	}
	if len(env.ID) > 0 && !validID(env.ID) {
		// JSON-RPC 2.0: an id is a string, a number or null.
		return nil, &LineError{Condition: CondInvalidParams, Detail: "id must be a string or a number"}
	}
	if env.JSONRPC != "2.0" {
		return nil, &LineError{Condition: CondInvalidParams, Detail: `missing "jsonrpc":"2.0"`, ID: env.ID}
	}
	if env.Method == "" && env.Result == nil && env.Error == nil {
		return nil, &LineError{Condition: CondInvalidParams, Detail: "envelope has no method, result or error", ID: env.ID}
	}
	return &env, nil
}

// Encoder writes NDJSON envelopes; it is safe for concurrent use (one line per call,
// never interleaved).
type Encoder struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEncoder writes envelopes to w.
func NewEncoder(w io.Writer) *Encoder { return &Encoder{w: w} }

// Encode writes env as one line. It returns an error when env cannot be marshalled,
// the line exceeds MaxLineBytes, or the writer fails.
func (e *Encoder) Encode(env *Envelope) error {
	env.JSONRPC = "2.0"
	b, err := json.Marshal(env)
	if err != nil {
		return fmt.Errorf("encode envelope: %w", err)
	}
	if len(b) > MaxLineBytes {
		return fmt.Errorf("encode envelope: line of %d bytes exceeds %d", len(b), MaxLineBytes)
	}
	b = append(b, '\n')
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.w.Write(b)
	return err
}

// Frame writes one $/frame notification {id, seq, event, data}. data must be one valid
// JSON value (as json.Marshal makes it) and id the request's id as received: both are
// written as they are, without a second encoding pass; event is a frame name. Errors as
// Encode's.
func (e *Encoder) Frame(id json.RawMessage, seq int64, event string, data json.RawMessage) error {
	b := make([]byte, 0, len(framePrefix)+len(id)+len(event)+len(data)+48)
	b = append(b, framePrefix...)
	b = append(b, `{"id":`...)
	if len(id) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, id...)
	}
	b = append(b, `,"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"event":`...)
	ev, err := json.Marshal(event)
	if err != nil {
		return fmt.Errorf("encode frame: %w", err)
	}
	b = append(b, ev...)
	b = append(b, `,"data":`...)
	if len(data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, data...)
	}
	b = append(b, "}}\n"...)
	if len(b) > MaxLineBytes+1 {
		return fmt.Errorf("encode envelope: line of %d bytes exceeds %d", len(b)-1, MaxLineBytes)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err = e.w.Write(b)
	return err
}

// Request writes a request with the given id, method and params.
func (e *Encoder) Request(id json.RawMessage, method string, params any) error {
	p, err := marshalParams(params)
	if err != nil {
		return err
	}
	return e.Encode(&Envelope{ID: id, Method: method, Params: p})
}

// Notify writes a notification.
func (e *Encoder) Notify(method string, params any) error {
	p, err := marshalParams(params)
	if err != nil {
		return err
	}
	return e.Encode(&Envelope{Method: method, Params: p})
}

// Reply writes a result for request id.
func (e *Encoder) Reply(id json.RawMessage, result any) error {
	b, err := json.Marshal(result)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return e.Encode(&Envelope{ID: id, Result: b})
}

// ReplyError writes an error for request id (a null id when id is empty).
func (e *Encoder) ReplyError(id json.RawMessage, rpcErr *Error) error {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	return e.Encode(&Envelope{ID: id, Error: rpcErr})
}

func marshalParams(params any) (json.RawMessage, error) {
	if params == nil {
		return nil, nil
	}
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	return b, nil
}

// validID reports whether raw is a JSON string, number or null.
func validID(raw json.RawMessage) bool {
	switch c := raw[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	case string(raw) == "null":
		return true
	}
	return false
}
