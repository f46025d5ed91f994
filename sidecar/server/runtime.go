// Package server is the sidecar's JSON-RPC 2.0 serve loop (docs/protocol.md): it reads
// NDJSON requests, runs each in its own goroutine, streams $/frame notifications, answers
// the lifecycle methods (rpc.hello, rpc.ping, rpc.shutdown) and $/cancel itself, and
// drains on stdin EOF. What a request does is up to a Runtime (the built-in Go runtime, or
// a bridge to another agent), which contributes a method table.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"

	"talaria/sidecar/protocol"
)

// Runtime is an agent runtime served over the protocol. The server answers rpc.hello,
// rpc.ping, rpc.shutdown and $/cancel itself; everything else comes from Methods.
//
// A runtime that also implements io.Closer is closed after the drain (every run has
// replied), before Serve returns.
type Runtime interface {
	// Info describes the runtime for rpc.hello.
	Info() Info
	// Methods returns the runtime's method table: method name (e.g. "chat.start") to
	// handler. Serve reads it once when it starts. Adding a method in a later version is
	// one more entry; lifecycle method names are reserved and refused by Serve.
	Methods() map[string]Handler
}

// Info is what rpc.hello reports about a runtime.
type Info struct {
	// Name is protocol.RuntimeBuiltin, RuntimeHermes or RuntimeACP.
	Name string
	// AgentVersion is the agent's own version (the built-in runtime's version constant,
	// or Hermes Agent's package version).
	AgentVersion string
	// Python is the interpreter version for a Python-backed runtime, else "".
	Python string
	// Sandbox says whether the runtime confines commands (nil: it does not say).
	Sandbox *protocol.SandboxStatus
	// Features are rpc.hello's feature flags (protocol.Feature*): what the runtime's
	// agent offers beyond the methods, e.g. its own titles.
	Features []string
	// Dialect is the agent's interface dialect when it has several (Hermes's gateway:
	// "A" or "B"), else "".
	Dialect string
}

// Starter is a Runtime whose agent starts slowly (Hermes's gateway). rpc.hello waits
// for Ready, off the serve loop, then reports Info and the capabilities minus Disabled;
// a Ready error is rpc.hello's error (a *protocol.Error is sent as is, with its
// condition, e.g. agent_unavailable or agent_incompatible).
type Starter interface {
	// Ready blocks until the agent is ready, it failed, or ctx ends.
	Ready(ctx context.Context) error
	// Disabled lists methods of Methods() the started agent cannot serve (a missing
	// gateway method turns a feature off): left out of capabilities and answered
	// method_not_found.
	Disabled() []string
}

// Notifying is a Runtime that sends notifications outside any request (e.g.
// $/session_event with a title the agent made after a turn ended). Serve calls
// SetNotify before reading the first line; notify writes one notification line.
type Notifying interface {
	SetNotify(notify func(method string, params any) error)
}

// Handler answers one request. It runs in its own goroutine; ctx is cancelled by
// $/cancel for this request, by the drain on stdin EOF or rpc.shutdown, and when Serve's
// own context ends.
//
// The result is marshalled as the JSON-RPC result. A returned *protocol.Error is sent as
// is; a context error after cancellation becomes condition cancelled (code -32000); any
// other error becomes code -32603 with condition internal. A panic is recovered and
// reported like an internal error.
type Handler func(ctx context.Context, call *Call) (result any, err error)

// EmitFunc sends one frame (a $/frame notification) of the request being handled; data
// is marshalled to JSON. See Call.Emit.
type EmitFunc func(event string, data any) error

// ErrCallDone is returned by Call.Emit once the request has been answered: frames after
// the reply are never written.
var ErrCallDone = errors.New("server: request already answered")

// Call is one request being handled.
type Call struct {
	// ID is the request id as sent (raw JSON: a number or a string).
	ID json.RawMessage
	// Method is the method name.
	Method string
	// Params are the raw params (nil when absent).
	Params json.RawMessage
	// Log is the server's logger with the request's id and method attached.
	Log *slog.Logger

	enc    *protocol.Encoder
	cancel context.CancelFunc

	mu   sync.Mutex
	seq  int64
	done bool
}

// Bind decodes the params into v (a pointer). Absent params decode as an empty object.
// On failure it returns a *protocol.Error with code -32602 and condition
// invalid_params, ready to be returned by the handler.
func (c *Call) Bind(v any) error {
	params := c.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage("{}")
	}
	if err := json.Unmarshal(params, v); err != nil {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "invalid params for "+c.Method+": "+err.Error())
	}
	return nil
}

// maxFrameData leaves room for the envelope around a frame's data within MaxLineBytes.
const maxFrameData = protocol.MaxLineBytes - 4096

// Emit sends one $/frame notification for this request: {id, seq, event, data}. Seq
// starts at 1 and increases by 1 per frame; Emit is safe for concurrent use and frames
// are written in seq order, each before the request's reply. Errors: ErrCallDone after
// the reply, a marshalling error or a frame whose data exceeds the line limit (no seq is
// used), or the output's write error.
func (c *Call) Emit(event string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if len(b) > maxFrameData {
		return errors.New("server: frame data of " + itoa(len(b)) + " bytes exceeds the line limit")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return ErrCallDone
	}
	c.seq++
	return c.enc.Frame(c.ID, c.seq, event, b)
}

// Frames returns the number of frames sent so far.
func (c *Call) Frames() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// finish marks the call answered: later Emit calls return ErrCallDone. Taking the lock
// waits for an Emit in progress, so every frame precedes the reply.
func (c *Call) finish() {
	c.mu.Lock()
	c.done = true
	c.mu.Unlock()
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
