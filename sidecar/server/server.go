package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"talaria/sidecar/protocol"
)

// DefaultDrainTimeout bounds the drain: how long Serve waits, after cancelling every
// live run, for their replies. The host kills the sidecar 5 s after closing its stdin.
const DefaultDrainTimeout = 4 * time.Second

// ErrDrainTimeout is returned by Serve when some handlers had not returned within the
// drain timeout (they ignored their context).
var ErrDrainTimeout = errors.New("server: drain timed out with runs still live")

// Server serves one Runtime over one NDJSON connection. The zero value needs a Runtime;
// the other fields have defaults.
type Server struct {
	// Runtime provides the runtime's methods and rpc.hello's info (required).
	Runtime Runtime
	// Log receives the server's logs (default: discard). Never message text or secrets.
	Log *slog.Logger
	// SidecarVersion is rpc.hello's sidecar_version (default: the main module's version
	// from the build info, "(devel)" in a development build).
	SidecarVersion string
	// DrainTimeout bounds the wait for live runs after EOF or rpc.shutdown (default
	// DefaultDrainTimeout).
	DrainTimeout time.Duration
}

// Serve serves rt on in/out with default settings; see (*Server).Serve.
func Serve(ctx context.Context, in io.Reader, out io.Writer, rt Runtime, log *slog.Logger) error {
	s := &Server{Runtime: rt, Log: log}
	return s.Serve(ctx, in, out)
}

// lifecycle methods answered by the server itself.
var lifecycle = []string{protocol.MethodHello, protocol.MethodPing, protocol.MethodShutdown}

type decoded struct {
	env *protocol.Envelope
	err error
}

// conn is the state of one Serve call.
type conn struct {
	s       *Server
	log     *slog.Logger
	enc     *protocol.Encoder
	methods map[string]Handler
	caps    []string
	ctx     context.Context

	mu    sync.Mutex
	calls map[string]*Call // live requests by canonical id
	// disabled are methods a Starter runtime reported it cannot serve once started:
	// left out of capabilities, answered method_not_found.
	disabled map[string]bool
	runs     int // live chat.start calls
	wg       sync.WaitGroup
}

// Serve reads requests from in and writes replies and frames to out until in reaches EOF,
// rpc.shutdown is received, or ctx ends. Then it drains: every live request's context is
// cancelled and Serve waits (at most DrainTimeout) for each handler to reply.
//
// It returns nil after a clean drain on EOF or rpc.shutdown, ctx.Err() when ctx ended,
// or the input's read error; joined with ErrDrainTimeout (errors.Is) when handlers
// outlived the drain. Malformed lines never end the loop: they are answered with a
// JSON-RPC error (see docs/protocol.md). Serve does not close out. When it returns before in reaches EOF
// (rpc.shutdown, ctx), a goroutine may stay blocked reading in until in is closed.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	if s.Runtime == nil {
		return errors.New("server: no runtime")
	}
	c := &conn{
		s:     s,
		log:   s.Log,
		enc:   protocol.NewEncoder(out),
		calls: map[string]*Call{},
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.methods = map[string]Handler{}
	for name, h := range s.Runtime.Methods() {
		if slices.Contains(lifecycle, name) || name == protocol.MethodCancel || name == protocol.MethodFrame {
			return fmt.Errorf("server: runtime method %q is reserved", name)
		}
		if h == nil {
			return fmt.Errorf("server: runtime method %q has a nil handler", name)
		}
		c.methods[name] = h
	}
	c.caps = append(slices.Clone(lifecycle), mapKeys(c.methods)...)
	slices.Sort(c.caps)
	if n, ok := s.Runtime.(Notifying); ok {
		n.SetNotify(func(method string, params any) error { return c.enc.Notify(method, params) })
	}

	runCtx, cancelRuns := context.WithCancel(ctx)
	defer cancelRuns()
	c.ctx = runCtx

	lines := make(chan decoded)
	stop := make(chan struct{})
	go func() {
		defer close(lines)
		dec := protocol.NewDecoder(in)
		for {
			env, err := dec.Next()
			select {
			case lines <- decoded{env, err}:
			case <-stop:
				return
			}
			var le *protocol.LineError
			if err != nil && !errors.As(err, &le) {
				return
			}
		}
	}()

	var result error
loop:
	for {
		select {
		case <-ctx.Done():
			c.log.Info("context ended; draining", "err", ctx.Err())
			result = ctx.Err()
			break loop
		case d, ok := <-lines:
			if !ok {
				break loop
			}
			if d.err != nil {
				var le *protocol.LineError
				if errors.As(d.err, &le) {
					c.lineError(le)
					continue
				}
				if !errors.Is(d.err, io.EOF) {
					c.log.Error("reading input failed; draining", "err", d.err)
					result = fmt.Errorf("server: read input: %w", d.err)
				} else {
					c.log.Info("input closed; draining")
				}
				break loop
			}
			if c.dispatch(d.env) {
				break loop
			}
		}
	}
	close(stop)

	if err := c.drain(cancelRuns); err != nil {
		result = errors.Join(result, err)
	}
	if closer, ok := s.Runtime.(io.Closer); ok {
		if err := closer.Close(); err != nil {
			c.log.Warn("closing the runtime failed", "err", err)
		}
	}
	return result
}

// drain cancels every live run and waits, bounded, for their replies.
func (c *conn) drain(cancelRuns context.CancelFunc) error {
	c.mu.Lock()
	live := len(c.calls)
	c.mu.Unlock()
	cancelRuns()
	done := make(chan struct{})
	go func() { c.wg.Wait(); close(done) }()
	timeout := c.s.DrainTimeout
	if timeout <= 0 {
		timeout = DefaultDrainTimeout
	}
	start := time.Now()
	select {
	case <-done:
		c.log.Info("drained", "cancelled_runs", live, "took", time.Since(start).Round(time.Millisecond))
		return nil
	case <-time.After(timeout):
		c.mu.Lock()
		left := len(c.calls)
		c.mu.Unlock()
		c.log.Error("drain timed out", "runs_left", left, "timeout", timeout)
		return ErrDrainTimeout
	}
}

// lineError answers a line the decoder refused.
func (c *conn) lineError(le *protocol.LineError) {
	code := protocol.CodeInvalidRequest
	if le.Condition == protocol.CondParseError {
		code = protocol.CodeParseError
	}
	c.log.Warn("bad input line", "condition", le.Condition, "detail", le.Detail, "id", string(le.ID))
	c.replyError(le.ID, protocol.NewError(code, le.Condition, le.Detail))
}

// dispatch handles one envelope; it reports true when the loop must stop (rpc.shutdown).
func (c *conn) dispatch(env *protocol.Envelope) (stop bool) {
	switch {
	case env.IsNotification():
		c.notification(env)
		return false
	case env.Method == "":
		// A result or error: this sidecar sends no requests, so nothing waits for it.
		c.log.Warn("dropping a response to no request", "id", string(env.ID))
		return false
	}
	switch env.Method {
	case protocol.MethodHello:
		var p protocol.HelloParams
		if len(env.Params) > 0 && string(env.Params) != "null" {
			if err := json.Unmarshal(env.Params, &p); err != nil {
				c.replyError(env.ID, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "invalid params for rpc.hello: "+err.Error()))
				return false
			}
		}
		if p.Protocol != 0 && p.Protocol != protocol.Version {
			c.log.Warn("host speaks another protocol version", "host_protocol", p.Protocol, "sidecar_protocol", protocol.Version)
		}
		if st, ok := c.s.Runtime.(Starter); ok {
			// The agent may still be starting: wait for it off the loop, so EOF,
			// rpc.ping and $/cancel are still read meanwhile.
			c.wg.Add(1)
			go func() {
				defer c.wg.Done()
				if err := st.Ready(c.ctx); err != nil {
					c.replyError(env.ID, c.toRPCError(c.ctx, err))
					c.log.Warn("hello: the agent did not start", "err", err)
					return
				}
				c.mu.Lock()
				c.disabled = map[string]bool{}
				for _, m := range st.Disabled() {
					c.disabled[m] = true
				}
				c.mu.Unlock()
				c.hello(env.ID, p)
			}()
			return false
		}
		c.hello(env.ID, p)
		return false
	case protocol.MethodPing:
		c.mu.Lock()
		runs := c.runs
		c.mu.Unlock()
		c.reply(env.ID, protocol.PingResult{OK: true, Runs: runs})
		return false
	case protocol.MethodShutdown:
		c.log.Info("shutdown requested")
		c.reply(env.ID, protocol.OKResult{OK: true})
		return true
	}
	h, ok := c.methods[env.Method]
	c.mu.Lock()
	off := c.disabled[env.Method]
	c.mu.Unlock()
	if !ok || off {
		c.log.Warn("unknown method", "method", env.Method, "id", string(env.ID))
		c.replyError(env.ID, protocol.NewError(protocol.CodeMethodNotFound, protocol.CondMethodNotFound, "method not found: "+env.Method))
		return false
	}
	c.start(env, h)
	return false
}

// hello answers rpc.hello with the runtime's info and the capabilities it serves.
func (c *conn) hello(id json.RawMessage, p protocol.HelloParams) {
	info := c.s.Runtime.Info()
	c.mu.Lock()
	caps := make([]string, 0, len(c.caps))
	for _, m := range c.caps {
		if !c.disabled[m] {
			caps = append(caps, m)
		}
	}
	c.mu.Unlock()
	c.reply(id, protocol.HelloResult{
		Protocol:       protocol.Version,
		SidecarVersion: c.s.sidecarVersion(),
		Runtime:        info.Name,
		AgentVersion:   info.AgentVersion,
		Python:         info.Python,
		Capabilities:   caps,
		Features:       info.Features,
		Dialect:        info.Dialect,
		Sandbox:        info.Sandbox,
	})
	c.log.Info("hello", "host_version", p.HostVersion, "runtime", info.Name, "agent_version", info.AgentVersion)
}

func (c *conn) notification(env *protocol.Envelope) {
	if env.Method != protocol.MethodCancel {
		c.log.Warn("dropping an unknown notification", "method", env.Method)
		return
	}
	var p protocol.CancelParams
	if err := json.Unmarshal(env.Params, &p); err != nil || len(p.ID) == 0 {
		c.log.Warn("dropping $/cancel without a usable id")
		return
	}
	c.mu.Lock()
	call := c.calls[canonicalID(p.ID)]
	c.mu.Unlock()
	if call == nil {
		c.log.Debug("$/cancel for no live request", "id", string(p.ID))
		return
	}
	c.log.Info("cancel", "id", string(p.ID), "method", call.Method)
	call.cancel()
}

// start runs a runtime handler in its own goroutine.
func (c *conn) start(env *protocol.Envelope, h Handler) {
	key := canonicalID(env.ID)
	ctx, cancel := context.WithCancel(c.ctx)
	call := &Call{
		ID:     env.ID,
		Method: env.Method,
		Params: env.Params,
		Log:    c.log.With("id", string(env.ID), "method", env.Method),
		enc:    c.enc,
		cancel: cancel,
	}
	c.mu.Lock()
	if _, dup := c.calls[key]; dup {
		c.mu.Unlock()
		cancel()
		c.replyError(env.ID, protocol.NewError(protocol.CodeInvalidRequest, protocol.CondInvalidParams, "a request with id "+string(env.ID)+" is still running"))
		return
	}
	c.calls[key] = call
	if env.Method == protocol.MethodChatStart {
		c.runs++
	}
	c.wg.Add(1)
	c.mu.Unlock()

	go func() {
		defer c.wg.Done()
		defer cancel()
		start := time.Now()
		result, err := c.invoke(ctx, h, call)
		call.finish()
		// Unregister before replying: once the host has the reply, rpc.ping no longer
		// counts the run and the id may be reused.
		c.mu.Lock()
		delete(c.calls, key)
		if env.Method == protocol.MethodChatStart {
			c.runs--
		}
		c.mu.Unlock()
		if err != nil {
			rpcErr := c.toRPCError(ctx, err)
			call.Log.Debug("request failed", "condition", rpcErr.Condition(), "took", time.Since(start).Round(time.Millisecond))
			c.replyError(env.ID, rpcErr)
		} else {
			call.Log.Debug("request done", "frames", call.seq, "took", time.Since(start).Round(time.Millisecond))
			c.reply(env.ID, result)
		}
	}()
}

// invoke calls h, turning a panic into an error.
func (c *conn) invoke(ctx context.Context, h Handler, call *Call) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			call.Log.Error("handler panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			result = nil
			err = protocol.NewError(protocol.CodeInternal, protocol.CondInternal, fmt.Sprintf("internal error in %s: %v", call.Method, r))
		}
	}()
	return h(ctx, call)
}

func (c *conn) toRPCError(ctx context.Context, err error) *protocol.Error {
	var rpcErr *protocol.Error
	if errors.As(err, &rpcErr) {
		return rpcErr
	}
	if ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return protocol.NewError(protocol.CodeApplication, protocol.CondCancelled, "cancelled")
	}
	return protocol.NewError(protocol.CodeInternal, protocol.CondInternal, err.Error())
}

func (c *conn) reply(id json.RawMessage, result any) {
	if err := c.enc.Reply(id, result); err != nil {
		c.log.Error("writing a reply failed", "id", string(id), "err", err)
		rpcErr := protocol.NewError(protocol.CodeInternal, protocol.CondInternal, "the result could not be encoded: "+err.Error())
		if werr := c.enc.ReplyError(id, rpcErr); werr != nil {
			c.log.Debug("writing the fallback error failed", "err", werr)
		}
	}
}

func (c *conn) replyError(id json.RawMessage, rpcErr *protocol.Error) {
	if err := c.enc.ReplyError(id, rpcErr); err != nil {
		c.log.Error("writing an error reply failed", "id", string(id), "err", err)
	}
}

func (s *Server) sidecarVersion() string {
	if s.SidecarVersion != "" {
		return s.SidecarVersion
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

// canonicalID is the map key of a request id: its compact JSON text, so `7` and ` 7`
// match while `7` and `"7"` stay distinct.
func canonicalID(id json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, id); err != nil {
		return string(id)
	}
	return buf.String()
}

func mapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}
