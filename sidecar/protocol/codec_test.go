package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
)

// decodeAll reads every envelope or error until EOF (or a non-line error) and returns a
// compact description per item: "env:<method or id>" or "err:<condition>:<id>".
func decodeAll(t *testing.T, d *Decoder) []string {
	t.Helper()
	var out []string
	for i := 0; i < 1000; i++ {
		env, err := d.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		var le *LineError
		switch {
		case errors.As(err, &le):
			out = append(out, fmt.Sprintf("err:%s:%s", le.Condition, le.ID))
		case err != nil:
			out = append(out, "fatal:"+err.Error())
			return out
		case env.Method != "":
			out = append(out, "env:"+env.Method)
		default:
			out = append(out, "env:id="+string(env.ID))
		}
	}
	t.Fatal("decoder did not reach EOF")
	return nil
}

func TestDecoderLines(t *testing.T) {
	good := `{"jsonrpc":"2.0","id":1,"method":"rpc.ping"}`
	tests := []struct {
		name    string
		input   string
		maxLine int
		want    []string
	}{
		{"empty input", "", 0, nil},
		{"blank lines ignored", "\n\n  \n" + good + "\n\n", 0, []string{"env:rpc.ping"}},
		{"crlf line ending", good + "\r\n", 0, []string{"env:rpc.ping"}},
		{"final line without newline", good, 0, []string{"env:rpc.ping"}},
		{"two lines, last without newline", good + "\n" + `{"jsonrpc":"2.0","method":"$/cancel","params":{"id":1}}`, 0,
			[]string{"env:rpc.ping", "env:$/cancel"}},
		{"not json", "hello\n" + good + "\n", 0, []string{"err:parse_error:", "env:rpc.ping"}},
		{"json array", "[1,2]\n" + good + "\n", 0, []string{"err:parse_error:", "env:rpc.ping"}},
		{"json string", `"x"` + "\n" + good + "\n", 0, []string{"err:parse_error:", "env:rpc.ping"}},
		{"json number", "42\n", 0, []string{"err:parse_error:"}},
		{"json null", "null\n", 0, []string{"err:parse_error:"}},
		{"truncated object", `{"jsonrpc":"2.0","id":3,"method":` + "\n" + good + "\n", 0,
			[]string{"err:parse_error:", "env:rpc.ping"}},
		{"id recovered from a bad field type", `{"jsonrpc":"2.0","id":9,"method":12}` + "\n", 0,
			[]string{"err:parse_error:9"}},
		{"missing jsonrpc keeps id", `{"id":"a","method":"rpc.ping"}` + "\n" + good + "\n", 0,
			[]string{`err:invalid_params:"a"`, "env:rpc.ping"}},
		{"wrong jsonrpc version", `{"jsonrpc":"1.0","id":2,"method":"rpc.ping"}` + "\n", 0,
			[]string{"err:invalid_params:2"}},
		{"no method, result or error", `{"jsonrpc":"2.0","id":4}` + "\n", 0, []string{"err:invalid_params:4"}},
		{"result envelope", `{"jsonrpc":"2.0","id":5,"result":{}}` + "\n", 0, []string{"env:id=5"}},
		{"over limit then good line", strings.Repeat("x", 100) + "\n" + good + "\n", 60,
			[]string{"err:line_too_long:", "env:rpc.ping"}},
		{"over limit json then good line", `{"jsonrpc":"2.0","id":1,"method":"` + strings.Repeat("a", 80) + `"}` + "\n" + good + "\n", 60,
			[]string{"err:line_too_long:", "env:rpc.ping"}},
		{"exactly at limit", good + "\n", len(good), []string{"env:rpc.ping"}},
		{"one over limit", good + "\n", len(good) - 1, []string{"err:line_too_long:"}},
		{"over limit as final line", strings.Repeat("y", 200), 60, []string{"err:line_too_long:"}},
		{"one over limit as final line without newline", good, len(good) - 1, []string{"err:line_too_long:"}},
		{"exactly at limit as final line without newline", good, len(good), []string{"env:rpc.ping"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, oneByte := range []bool{false, true} {
				var r io.Reader = strings.NewReader(tt.input)
				if oneByte {
					r = iotest.OneByteReader(r)
				}
				d := NewDecoder(r)
				if tt.maxLine > 0 {
					d.SetMaxLine(tt.maxLine)
				}
				got := decodeAll(t, d)
				if strings.Join(got, "|") != strings.Join(tt.want, "|") {
					t.Errorf("oneByte=%v: got %q, want %q", oneByte, got, tt.want)
				}
			}
		})
	}
}

// TestDecoderRealLimit sends one line of MaxLineBytes+1 bytes (the real 16 MiB limit)
// followed by a good line: the first is refused, the second still decodes.
func TestDecoderRealLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates 32 MiB")
	}
	big := make([]byte, 0, MaxLineBytes+64)
	big = append(big, `{"jsonrpc":"2.0","id":1,"method":"x","params":"`...)
	for len(big) < MaxLineBytes-1 {
		big = append(big, 'a')
	}
	big = append(big, `"}`...) // now MaxLineBytes+1 bytes
	if len(big) != MaxLineBytes+1 {
		t.Fatalf("test setup: line is %d bytes", len(big))
	}
	input := io.MultiReader(bytes.NewReader(big), strings.NewReader("\n"+`{"jsonrpc":"2.0","id":2,"method":"rpc.ping"}`+"\n"))
	got := decodeAll(t, NewDecoder(input))
	want := []string{"err:line_too_long:", "env:rpc.ping"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}

	// A line of exactly MaxLineBytes is accepted.
	exact := append([]byte{}, big[:len(big)-3]...)
	exact = append(exact, `"}`...)
	got = decodeAll(t, NewDecoder(bytes.NewReader(append(exact, '\n'))))
	if strings.Join(got, "|") != "env:x" {
		t.Fatalf("exact-limit line: got %q", got)
	}
}

type failingReader struct{ err error }

func (r failingReader) Read([]byte) (int, error) { return 0, r.err }

func TestDecoderReaderError(t *testing.T) {
	boom := errors.New("boom")
	_, err := NewDecoder(failingReader{boom}).Next()
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want the reader's error", err)
	}
	var le *LineError
	if errors.As(err, &le) {
		t.Fatalf("a reader error must not be a LineError")
	}
}

// FuzzDecoder: no input panics the decoder; every item is an envelope, a *LineError or
// EOF; and a good line after arbitrary input still decodes.
func FuzzDecoder(f *testing.F) {
	for _, seed := range []string{
		"", "\n", "{}", "[]", "null", `{"jsonrpc":"2.0"}`, `{"jsonrpc":"2.0","id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"m"}`, `{"id":1,`, "\r\n\r\n", strings.Repeat("z", 300),
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"method\":\"m\"}", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`,
	} {
		f.Add([]byte(seed))
	}
	const good = `{"jsonrpc":"2.0","id":"fuzz-good","method":"rpc.ping"}`
	f.Fuzz(func(t *testing.T, data []byte) {
		input := append(append(append([]byte{}, data...), '\n'), good...)
		d := NewDecoder(bytes.NewReader(input))
		d.SetMaxLine(256)
		var last *Envelope
		for i := 0; ; i++ {
			if i > len(input)+2 {
				t.Fatal("decoder does not make progress")
			}
			env, err := d.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			var le *LineError
			if err != nil && !errors.As(err, &le) {
				t.Fatalf("unexpected error type %T: %v", err, err)
			}
			if err == nil {
				if env == nil {
					t.Fatal("nil envelope without error")
				}
				last = env
			}
		}
		if last == nil || string(last.ID) != `"fuzz-good"` || last.Method != "rpc.ping" {
			t.Fatalf("the good line after %q did not decode last (got %+v)", data, last)
		}
	})
}

// slowWriter writes byte by byte, yielding between bytes: without the Encoder's lock,
// concurrent lines would interleave (and the race detector would flag the buffer).
type slowWriter struct{ buf []byte }

func (w *slowWriter) Write(p []byte) (int, error) {
	for _, b := range p {
		w.buf = append(w.buf, b)
		runtime.Gosched()
	}
	return len(p), nil
}

func TestEncoderConcurrentLinesNeverInterleave(t *testing.T) {
	w := &slowWriter{}
	enc := NewEncoder(w)
	const writers, each = 8, 25
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				text := strings.Repeat(string(rune('a'+g)), 50+i)
				if err := enc.Notify(MethodFrame, FrameParams{ID: json.RawMessage(fmt.Sprint(g)), Seq: int64(i + 1), Event: EvToken, Data: json.RawMessage(fmt.Sprintf(`{"text":%q}`, text))}); err != nil {
					t.Error(err)
				}
			}
		}(g)
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(string(w.buf), "\n"), "\n")
	if len(lines) != writers*each {
		t.Fatalf("got %d lines, want %d", len(lines), writers*each)
	}
	nextSeq := map[string]int64{}
	for _, line := range lines {
		var env Envelope
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("interleaved or broken line %q: %v", line, err)
		}
		var p FrameParams
		if err := json.Unmarshal(env.Params, &p); err != nil {
			t.Fatal(err)
		}
		nextSeq[string(p.ID)]++
		if p.Seq != nextSeq[string(p.ID)] {
			t.Fatalf("writer %s: seq %d, want %d", p.ID, p.Seq, nextSeq[string(p.ID)])
		}
	}
}

func TestEncoderShapes(t *testing.T) {
	tests := []struct {
		name string
		do   func(*Encoder) error
		want string
	}{
		{"request", func(e *Encoder) error { return e.Request(json.RawMessage("7"), MethodPing, nil) },
			`{"jsonrpc":"2.0","id":7,"method":"rpc.ping"}`},
		{"notification", func(e *Encoder) error { return e.Notify(MethodCancel, CancelParams{ID: json.RawMessage("7")}) },
			`{"jsonrpc":"2.0","method":"$/cancel","params":{"id":7}}`},
		{"reply", func(e *Encoder) error { return e.Reply(json.RawMessage(`"a"`), OKResult{OK: true}) },
			`{"jsonrpc":"2.0","id":"a","result":{"ok":true}}`},
		{"error with null id", func(e *Encoder) error {
			return e.ReplyError(nil, NewError(CodeParseError, CondParseError, "bad"))
		}, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad","data":{"condition":"parse_error"}}}`},
		{"application error data", func(e *Encoder) error {
			err := NewError(0, CondRateLimited, "slow down")
			err.Data.HTTPStatus = 429
			err.Data.RetryAfterSeconds = 1.5
			return e.ReplyError(json.RawMessage("3"), err)
		}, `{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"slow down","data":{"condition":"rate_limited","http_status":429,"retry_after_s":1.5}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tt.do(NewEncoder(&buf)); err != nil {
				t.Fatal(err)
			}
			if got := buf.String(); got != tt.want+"\n" {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEncoderRefusesOversizedLine(t *testing.T) {
	var buf bytes.Buffer
	err := NewEncoder(&buf).Reply(json.RawMessage("1"), strings.Repeat("a", MaxLineBytes))
	if err == nil {
		t.Fatal("want an error for a line over MaxLineBytes")
	}
	if buf.Len() != 0 {
		t.Fatalf("nothing may be written, got %d bytes", buf.Len())
	}
}

func TestDecoderRefusesIDsThatAreNotStringsOrNumbers(t *testing.T) {
	for _, id := range []string{`{"a":1}`, `[1]`, `true`, `false`} {
		d := NewDecoder(strings.NewReader(`{"jsonrpc":"2.0","id":` + id + `,"method":"rpc.ping"}` + "\n"))
		var le *LineError
		if _, err := d.Next(); !errors.As(err, &le) || le.Condition != CondInvalidParams {
			t.Errorf("id %s: err = %v, want an invalid_params LineError", id, err)
		}
	}
	for _, id := range []string{`7`, `"x"`, `-1`, `null`} {
		d := NewDecoder(strings.NewReader(`{"jsonrpc":"2.0","id":` + id + `,"method":"rpc.ping"}` + "\n"))
		if _, err := d.Next(); err != nil {
			t.Errorf("id %s: %v", id, err)
		}
	}
}

// A frame written by Encoder.Frame is read back by NextFrame in one pass with the same
// fields; lines that only look like frames, and every other envelope, come back as
// envelopes exactly as Next returns them.
func TestFrameLinesRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	enc := NewEncoder(&buf)
	if err := enc.Frame(json.RawMessage(`"req-1"`), 7, EvToken, json.RawMessage(`{"text":"a \"b\" \u003c\n"}`)); err != nil {
		t.Fatal(err)
	}
	if err := enc.Frame(json.RawMessage(`12`), 8, EvDone, nil); err != nil {
		t.Fatal(err)
	}
	if err := enc.Reply(json.RawMessage(`12`), map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	// A line with the frame prefix but a result too, one whose params are not frame
	// params, and one with an id: not frames.
	buf.WriteString(`{"jsonrpc":"2.0","method":"$/frame","params":{"id":1,"seq":1,"event":"token","data":{}},"result":{}}` + "\n")
	buf.WriteString(`{"jsonrpc":"2.0","method":"$/frame","params":[1,2]}` + "\n")
	buf.WriteString(`{"jsonrpc":"2.0","method":"$/frame","params":{"id":1,"seq":"x"}}` + "\n")
	buf.WriteString(`{"jsonrpc":"2.0","id":5,"method":"$/frame","params":{"id":1,"seq":1,"event":"token","data":{}}}` + "\n")
	lines := bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n"))
	dec := NewDecoder(&buf)

	_, f, err := dec.NextFrame()
	if err != nil || f == nil {
		t.Fatalf("first frame: %v %v", f, err)
	}
	var td TextData
	if err := json.Unmarshal(f.Data, &td); err != nil || string(f.ID) != `"req-1"` || f.Seq != 7 || f.Event != EvToken || td.Text != "a \"b\" <\n" {
		t.Fatalf("first frame decoded as %+v (%q, %v)", f, td.Text, err)
	}
	_, f, err = dec.NextFrame()
	if err != nil || f == nil || string(f.ID) != "12" || f.Seq != 8 || f.Event != EvDone || string(f.Data) != "null" {
		t.Fatalf("second frame: %+v %v", f, err)
	}
	for i, line := range lines[2:] {
		env, f, err := dec.NextFrame()
		want, wantErr := decodeLine(line)
		if f != nil {
			t.Fatalf("line %d %s decoded as a frame", i+3, line)
		}
		if (err == nil) != (wantErr == nil) || (err == nil && (env.Method != want.Method || string(env.Params) != string(want.Params) || string(env.ID) != string(want.ID))) {
			t.Fatalf("line %d: got %+v, %v; Next gives %+v, %v", i+3, env, err, want, wantErr)
		}
	}
	if _, _, err := dec.NextFrame(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}
