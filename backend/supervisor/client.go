// Package supervisor runs the sidecar process: it spawns it, says rpc.hello, checks
// its health with rpc.ping, restarts it with back-off when it dies or hangs, and shuts
// it down. Client is one connection to one process; Supervisor owns the current one.
package supervisor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"talaria/sidecar/protocol"
)

// FrameFunc receives the $/frame notifications of one call, in order, on the client's
// reader goroutine: it must not block for long.
type FrameFunc func(f protocol.FrameParams)

// ErrUnavailable is wrapped by every error a call returns because the sidecar process
// is gone, not started, or restarting. Its condition is sidecar_unavailable.
var ErrUnavailable = &protocol.Error{Code: protocol.CodeApplication, Message: "the agent process is not running",
	Data: &protocol.ErrorData{Condition: protocol.CondSidecarUnavailable}}

// unavailable returns a fresh sidecar_unavailable error carrying why.
func unavailable(why string) *protocol.Error {
	return &protocol.Error{Code: protocol.CodeApplication, Message: why,
		Data: &protocol.ErrorData{Condition: protocol.CondSidecarUnavailable}}
}

// CancelGrace is how long a call whose context ended waits for the sidecar's own
// (cancelled) result after sending $/cancel, before giving up: 5 seconds.
const CancelGrace = 5 * time.Second

type response struct {
	result      json.RawMessage
	err         *protocol.Error
	undelivered bool // the connection ended with the request still unread in the pipe
}

type pendingCall struct {
	onFrame FrameFunc
	done    chan response // buffered 1
	start   int64         // offset of the request's first byte in the stream to stdin
}

// UndeliveredError is the sidecar_unavailable error of a call the sidecar never read:
// its connection had already ended, the write to the process's stdin failed (the
// process is gone), or the connection ended with the request still unread in the
// stdin pipe (a dying process's last threads keep the pipe open for a moment; the
// bytes left in it, FIONREAD on the write end, say which requests were not read).
// The sidecar cannot have acted on it, so Supervisor.Call sends it once more to the
// restarted sidecar; a call the process read and then lost with it is not resent. Err
// is the *protocol.Error a caller sees (errors.As finds it through Unwrap).
type UndeliveredError struct{ Err *protocol.Error }

func (e *UndeliveredError) Error() string { return e.Err.Error() }
func (e *UndeliveredError) Unwrap() error { return e.Err }

// Client is a JSON-RPC connection to one sidecar process over its stdin/stdout.
// Calls are concurrent; each call's frames reach its FrameFunc in order.
type Client struct {
	enc    *protocol.Encoder
	closer io.Closer
	stdin  io.Writer // for pipeUnread
	log    *slog.Logger
	nextID atomic.Int64

	wmu     sync.Mutex // orders writes with written
	written int64      // bytes written to stdin so far

	mu      sync.Mutex
	pending map[int64]*pendingCall
	closed  bool
	why     string
	// lost and lostHint, when set, say why calls ended when the process's output
	// ends (ExplainEnd), instead of "its output ended: it crashed or was killed".
	lost, lostHint string
	// onNotify receives $/session_event notifications (OnNotify).
	onNotify func(method string, params json.RawMessage)

	dead      chan struct{} // closed when the reader loop ends
	malformed atomic.Int64  // lines from the sidecar that could not be decoded
}

// NewClient starts reading from r (the sidecar's stdout) and writes requests to w (its
// stdin; closed by Close). The client is dead when r reaches EOF or fails.
func NewClient(r io.Reader, w io.WriteCloser, log *slog.Logger) *Client {
	c := &Client{closer: w, stdin: w, log: log,
		pending: make(map[int64]*pendingCall), dead: make(chan struct{})}
	c.enc = protocol.NewEncoder(countingWriter{w, &c.written})
	go c.readLoop(r)
	return c
}

// OnNotify sets the function that receives the sidecar's $/session_event
// notifications (method and raw params), called on the read loop: it must not block.
func (c *Client) OnNotify(fn func(method string, params json.RawMessage)) {
	c.mu.Lock()
	c.onNotify = fn
	c.mu.Unlock()
}

// ExplainEnd sets what calls cut short by the end of the process's output say, and
// what to do: a runtime on another machine loses its connection, not its process.
func (c *Client) ExplainEnd(why, hint string) {
	c.mu.Lock()
	c.lost, c.lostHint = why, hint
	c.mu.Unlock()
}

// unavailableLocked returns the error of a call the connection's end cut short; c.mu
// is held.
func (c *Client) unavailableLocked() *protocol.Error {
	e := unavailable(c.why)
	if c.lostHint != "" {
		e.Data.Hint = c.lostHint
	}
	return e
}

// Dead is closed when the connection has ended.
func (c *Client) Dead() <-chan struct{} { return c.dead }

// Malformed returns how many undecodable lines the sidecar wrote so far.
func (c *Client) Malformed() int64 { return c.malformed.Load() }

// Close closes the sidecar's stdin (the sidecar drains and exits on EOF). Calls still in
// flight end when the process closes its stdout.
func (c *Client) Close() error { return c.closer.Close() }

// Call sends method with params and waits for its result, decoding it into result (a
// pointer, or nil to discard). Frames go to onFrame (may be nil). When ctx ends, the
// client sends $/cancel; a streaming call (onFrame set) then waits up to CancelGrace
// for the sidecar's own result (a cancelled chat.start still returns its partial
// result), any other call returns ctx.Err() at once. Errors: a *protocol.Error from the sidecar, or one with condition
// sidecar_unavailable when the process is gone.
func (c *Client) Call(ctx context.Context, method string, params any, onFrame FrameFunc, result any) error {
	id := c.nextID.Add(1)
	pc := &pendingCall{onFrame: onFrame, done: make(chan response, 1)}
	c.mu.Lock()
	if c.closed {
		e := c.unavailableLocked()
		c.mu.Unlock()
		return &UndeliveredError{e}
	}
	c.pending[id] = pc
	c.mu.Unlock()

	rawID := json.RawMessage(strconv.FormatInt(id, 10))
	c.wmu.Lock()
	pc.start = c.written
	err := c.enc.Request(rawID, method, params)
	c.wmu.Unlock()
	if err != nil {
		c.forget(id)
		var perr *protocol.Error
		if errors.As(err, &perr) {
			return perr
		}
		// A failed write to stdin means the process is gone.
		return &UndeliveredError{unavailable(fmt.Sprintf("could not send %s to the agent process: %v", method, err))}
	}

	var resp response
	select {
	case resp = <-pc.done:
	case <-ctx.Done():
		c.wmu.Lock()
		_ = c.enc.Notify(protocol.MethodCancel, protocol.CancelParams{ID: rawID})
		c.wmu.Unlock()
		if onFrame == nil {
			c.forget(id)
			return ctx.Err()
		}
		t := time.NewTimer(CancelGrace)
		select {
		case resp = <-pc.done:
			t.Stop()
		case <-t.C:
			c.forget(id)
			return ctx.Err()
		}
	}
	if resp.err != nil {
		if resp.undelivered {
			return &UndeliveredError{resp.err}
		}
		return resp.err
	}
	if result != nil && len(resp.result) > 0 {
		if err := json.Unmarshal(resp.result, result); err != nil {
			return &protocol.Error{Code: protocol.CodeInternal, Message: fmt.Sprintf("malformed %s result from the agent: %v", method, err),
				Data: &protocol.ErrorData{Condition: protocol.CondAgentIncompatible}}
		}
	}
	return nil
}

// countingWriter adds the bytes each Write takes to *n (guarded by Client.wmu).
type countingWriter struct {
	w io.Writer
	n *int64
}

func (cw countingWriter) Write(b []byte) (int, error) {
	k, err := cw.w.Write(b)
	*cw.n += int64(k)
	return k, err
}

func (c *Client) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Client) readLoop(r io.Reader) {
	dec := protocol.NewDecoder(r)
	why := "its output ended: it crashed or was killed (sidecar.log in the logs folder may say why)"
	eof := false
	for {
		env, frame, err := dec.NextFrame()
		if err != nil {
			var le *protocol.LineError
			if errors.As(err, &le) {
				c.malformed.Add(1)
				c.log.Warn("malformed line from sidecar", "condition", le.Condition, "detail", le.Detail)
				c.failMalformed(le)
				continue
			}
			if !errors.Is(err, io.EOF) {
				why = "reading from the agent process failed: " + err.Error()
			}
			eof = errors.Is(err, io.EOF)
			break
		}
		if frame != nil {
			c.dispatchFrame(*frame)
			continue
		}
		c.dispatch(env)
	}
	c.mu.Lock()
	c.closed = true
	if c.lost != "" && eof {
		why = c.lost
	}
	c.why = why
	ended := c.unavailableLocked()
	pending := c.pending
	c.pending = map[int64]*pendingCall{}
	c.mu.Unlock()
	// Requests at or past this offset are still in the pipe: the process never read
	// them. The write lock keeps a request from being half counted.
	c.wmu.Lock()
	unreadFrom := int64(-1)
	if n := pipeUnread(c.stdin); n >= 0 {
		unreadFrom = c.written - int64(n)
	}
	c.wmu.Unlock()
	for _, pc := range pending {
		e := *ended
		pc.done <- response{err: &e, undelivered: unreadFrom >= 0 && pc.start >= unreadFrom}
	}
	close(c.dead)
}

// failMalformed ends the call a malformed reply was meant for, when its id can be read:
// waiting for a reply that already came (unreadable) would hang the call forever.
func (c *Client) failMalformed(le *protocol.LineError) {
	id, err := strconv.ParseInt(string(le.ID), 10, 64)
	if err != nil {
		return
	}
	c.mu.Lock()
	pc := c.pending[id]
	delete(c.pending, id)
	c.mu.Unlock()
	if pc == nil {
		return
	}
	pc.done <- response{err: &protocol.Error{Code: protocol.CodeInternal,
		Message: "the agent answered with a malformed reply (" + le.Detail + "); restart the agent or update it",
		Data:    &protocol.ErrorData{Condition: protocol.CondAgentIncompatible}}}
}

// dispatchFrame hands a $/frame notification to the call it belongs to.
func (c *Client) dispatchFrame(fp protocol.FrameParams) {
	id, err := strconv.ParseInt(string(fp.ID), 10, 64)
	if err != nil {
		c.malformed.Add(1)
		return
	}
	c.mu.Lock()
	pc := c.pending[id]
	c.mu.Unlock()
	if pc != nil && pc.onFrame != nil {
		pc.onFrame(fp)
	}
}

func (c *Client) dispatch(env *protocol.Envelope) {
	switch {
	case env.Method == protocol.MethodFrame:
		var fp protocol.FrameParams
		if err := json.Unmarshal(env.Params, &fp); err != nil {
			c.malformed.Add(1)
			c.log.Warn("malformed frame from sidecar", "err", err)
			return
		}
		c.dispatchFrame(fp)
	case env.Method != "":
		c.mu.Lock()
		fn := c.onNotify
		c.mu.Unlock()
		if fn != nil && env.Method == protocol.MethodSessionEvent {
			fn(env.Method, env.Params)
			return
		}
		c.log.Debug("ignored notification from sidecar", "method", env.Method)
	default:
		id, err := strconv.ParseInt(string(env.ID), 10, 64)
		if err != nil {
			if env.Error != nil {
				c.log.Warn("sidecar error without request", "error", env.Error.Error())
			} else {
				c.malformed.Add(1)
			}
			return
		}
		c.mu.Lock()
		pc := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if pc == nil {
			return // answer to a call that gave up
		}
		pc.done <- response{result: env.Result, err: env.Error}
	}
}
