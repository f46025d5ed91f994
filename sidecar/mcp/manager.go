// Package mcp is the sidecar's Model Context Protocol client, built on the official Go
// SDK (github.com/modelcontextprotocol/go-sdk). A Manager keeps the running instances
// of the user's MCP servers: each starts on first use (a stdio server's command,
// confined like the agent's commands, or a session with a streamable HTTP or SSE
// endpoint), is started again on the next use after it died, and stops with the
// Manager. Conn is one instance: its tools (cached until the server says they
// changed), tool calls (cancelled with their context, which sends MCP's
// notifications/cancelled), prompts and resources.
//
// Servers never outlive the sidecar: a stdio server runs in its own process group and,
// on Linux, gets SIGKILL when the sidecar dies (PR_SET_PDEATHSIG, or bubblewrap's
// --die-with-parent when confined); Close ends every instance within CloseGrace.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"strings"
	"sync"
	"time"

	"talaria/sidecar/protocol"
)

// Defaults of a Manager.
const (
	// DefaultConnectTimeout bounds starting a server and the MCP initialize handshake.
	DefaultConnectTimeout = 30 * time.Second
	// DefaultIdleTimeout stops an instance nobody used for this long (it starts again
	// on the next use).
	DefaultIdleTimeout = 15 * time.Minute
	// CloseGrace is how long a stdio server may take to exit after its stdin closed
	// before its process group is killed.
	CloseGrace = 500 * time.Millisecond
)

// Launch builds (does not start) the command of a stdio server: argv[0] is the program,
// env the whole environment, dir the working folder. sandbox is the server's
// MCPServer.Sandbox choice; writable are the folders it may change beside the
// workspace (WritableFolders: its own state folder). The command must not be tied to
// a request's context: it lives as long as the instance. Implementations confine it
// as the scope's policy says; Unconfined runs it as is.
type Launch func(sandbox string, argv, env []string, dir string, writable []string) (*exec.Cmd, error)

// Scope is where instances run: Key tells apart instances of one server under
// different policies (e.g. "workspace-write,no-net:/home/me/project"); Workspace is the
// default working folder; Launch builds stdio commands (nil: Unconfined); Env is the
// base environment of stdio servers (nil: MinimalEnv()).
type Scope struct {
	Key       string
	Workspace string
	Launch    Launch
	Env       func(extra ...string) []string
}

// Options configure a Manager. Zero values take the defaults above.
type Options struct {
	Log            *slog.Logger
	ConnectTimeout time.Duration
	IdleTimeout    time.Duration
	// ClientVersion is sent as the MCP client's version (clientInfo).
	ClientVersion string
}

// Manager keeps the running instances of MCP servers, one per server settings and
// scope. It is safe for concurrent use.
type Manager struct {
	log            *slog.Logger
	connectTimeout time.Duration
	idleTimeout    time.Duration
	version        string

	mu    sync.Mutex
	conns map[string]*Conn // by instance key
	// failed is the last start failure of each instance key whose last start failed
	// (cleared by a successful start and by Stop).
	failed map[string]error
	// bg bounds the background starts: cancelled by Close.
	bg       context.Context
	bgCancel context.CancelFunc
	closed   bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("mcp: the sidecar is stopping")

// NewManager returns a Manager; it runs an idle reaper until Close.
func NewManager(o Options) *Manager {
	m := &Manager{log: o.Log, connectTimeout: o.ConnectTimeout, idleTimeout: o.IdleTimeout, version: o.ClientVersion,
		conns: map[string]*Conn{}, failed: map[string]error{}, stop: make(chan struct{})}
	m.bg, m.bgCancel = context.WithCancel(context.Background())
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	if m.connectTimeout <= 0 {
		m.connectTimeout = DefaultConnectTimeout
	}
	if m.idleTimeout <= 0 {
		m.idleTimeout = DefaultIdleTimeout
	}
	if m.version == "" {
		m.version = "dev"
	}
	m.wg.Add(1)
	go m.reap()
	return m
}

// Get returns the running instance of server s in scope, starting it when none runs
// (or the last one died). Concurrent callers share one start. ctx bounds the wait only:
// the start goes on in the background (bounded by the connect timeout) when the caller
// gives up, and a later Get or Ready finds its result. Errors: *ConfigError,
// *StartError (the server could not be started or did not complete the handshake),
// ErrClosed, or ctx's error.
func (m *Manager) Get(ctx context.Context, s protocol.MCPServer, scope Scope) (*Conn, error) {
	return m.get(ctx, s, scope, -1)
}

// Ready is Get for a turn that must not wait long for a server: it waits at most wait
// for a start, and not at all for a server that already made a caller wait in vain (a
// start still under way that an earlier Ready gave up on) or whose last start failed.
// Such a server is started again in the background, and a later call uses it once it
// is ready. Errors: *ConfigError; *SlowError when the server is still starting;
// *StartError when its start failed (this one, or the last one while another runs);
// ErrClosed; ctx's error.
func (m *Manager) Ready(ctx context.Context, s protocol.MCPServer, scope Scope, wait time.Duration) (*Conn, error) {
	return m.get(ctx, s, scope, max(wait, 0))
}

// get is Get (wait < 0: as long as ctx allows) and Ready.
func (m *Manager) get(ctx context.Context, s protocol.MCPServer, scope Scope, wait time.Duration) (*Conn, error) {
	if err := Validate(s); err != nil {
		return nil, err
	}
	key := instanceKey(s, scope.Key)
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return nil, ErrClosed
		}
		c := m.conns[key]
		if c != nil && c.isDead() {
			delete(m.conns, key)
			c = nil
		}
		lastErr := m.failed[key]
		if c == nil {
			c = newConn(m, key, s)
			m.conns[key] = c
			c.start(m.bg, scope) // under the lock: a Stop meanwhile finds it started
		}
		m.mu.Unlock()
		if wait >= 0 && (lastErr != nil || c.waitedOut.Load()) {
			wait = 0 // it made a turn wait before: never again
		}
		var timeout <-chan time.Time
		if wait >= 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			}
			timeout = timer.C
		}
		select {
		case <-c.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-timeout:
			select {
			case <-c.ready: // a zero wait still takes a finished start
			default:
				c.waitedOut.Store(true)
				if lastErr != nil {
					return nil, lastErr
				}
				return nil, &SlowError{Server: s.Name, Waited: wait}
			}
		}
		if c.startErr != nil {
			return nil, c.startErr
		}
		if c.isDead() {
			continue // it died between its start and now: start another
		}
		c.touch()
		c.setRoot(scope.Workspace)
		return c, nil
	}
}

// LastError returns the failure of the last start of s in scope when that start
// failed (nil otherwise): for diagnostics and tests.
func (m *Manager) LastError(s protocol.MCPServer, scope Scope) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed[instanceKey(s, scope.Key)]
}

// started records the end of c's start: a failed start leaves the table (the next use
// starts another) and is remembered as the key's last failure; a good one clears it.
func (m *Manager) started(c *Conn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conns[c.key] != c {
		return // an Inspect's instance, or one Stop or Close already removed
	}
	if c.startErr != nil {
		delete(m.conns, c.key)
		m.failed[c.key] = c.startErr
		return
	}
	delete(m.failed, c.key)
}

// Inspect connects to s afresh (not shared, not kept), reports what it offers and
// closes it: the settings' "Test". It never returns an error: a failure is a report
// with OK false, Error, Hint and Stderr.
func (m *Manager) Inspect(ctx context.Context, s protocol.MCPServer, scope Scope) protocol.MCPServerReport {
	start := time.Now()
	rep := protocol.MCPServerReport{Name: s.Name, Tools: []protocol.MCPToolInfo{}, Prompts: []protocol.MCPPromptInfo{}, Resources: []protocol.MCPResourceInfo{}}
	if err := Validate(s); err != nil {
		rep.Error = err.Error()
		rep.Hint = "Fix the server's settings."
		return rep
	}
	if s.Transport == protocol.MCPTransportStdio && s.Sandbox != protocol.MCPSandboxOff {
		var withheld []Withheld
		rep.Writable, withheld = WritableFolders(append([]string{s.Command}, s.Args...), s.Cwd, scope.Workspace, s.WritablePaths)
		for _, w := range withheld {
			rep.Withheld = append(rep.Withheld, protocol.MCPWithheldFolder{Path: w.Path, Reason: w.Reason})
		}
	}
	c := newConn(m, "inspect", s)
	c.start(ctx, scope) // tied to the request: the test is cancelled with it
	select {
	case <-c.ready:
	case <-ctx.Done():
		c.Close()
		rep.Error = "the test was cancelled"
		return rep
	}
	defer c.Close()
	if c.startErr != nil {
		fillFailure(&rep, c.startErr)
		rep.TookMS = time.Since(start).Milliseconds()
		return rep
	}
	writable, withheld := rep.Writable, rep.Withheld
	rep = c.Report(ctx)
	rep.Writable, rep.Withheld = writable, withheld
	rep.TookMS = time.Since(start).Milliseconds()
	return rep
}

// Stop closes the running instances of the named servers (every instance when names
// is nil) and returns how many it closed; they start again on their next use.
func (m *Manager) Stop(names []string) int {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	m.mu.Lock()
	var victims []*Conn
	for k, c := range m.conns {
		if names == nil || want[c.srv.Name] {
			victims = append(victims, c)
			delete(m.conns, k)
		}
	}
	for k := range m.failed {
		name, _, _ := strings.Cut(k, ":")
		if names == nil || want[name] {
			delete(m.failed, k) // edited or tested again: its next use waits for it
		}
	}
	m.mu.Unlock()
	closeAll(victims)
	return len(victims)
}

// Close stops every instance (each within CloseGrace, in parallel) and refuses new
// ones. It is idempotent.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.stop)
	m.bgCancel()
	victims := make([]*Conn, 0, len(m.conns))
	for _, c := range m.conns {
		victims = append(victims, c)
	}
	m.conns = map[string]*Conn{}
	m.mu.Unlock()
	closeAll(victims)
	m.wg.Wait()
	return nil
}

// Running returns the number of live instances (for tests and diagnostics).
func (m *Manager) Running() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.conns {
		if !c.isDead() {
			n++
		}
	}
	return n
}

func closeAll(cs []*Conn) {
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close()
		}()
	}
	wg.Wait()
}

// reap stops instances idle for longer than the idle timeout.
func (m *Manager) reap() {
	defer m.wg.Done()
	t := time.NewTicker(min(m.idleTimeout/4, time.Minute))
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
		m.mu.Lock()
		var idle []*Conn
		for k, c := range m.conns {
			if c.idleFor() > m.idleTimeout && c.busy.Load() == 0 {
				idle = append(idle, c)
				delete(m.conns, k)
			}
		}
		m.mu.Unlock()
		for _, c := range idle {
			m.log.Info("MCP server idle; stopping it", "server", c.srv.Name)
		}
		closeAll(idle)
	}
}

// failedLate records a failure of an instance that had started (its tools never
// came): it leaves the table and its key remembers the failure, as a failed start.
func (m *Manager) failedLate(c *Conn, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conns[c.key] == c {
		delete(m.conns, c.key)
		m.failed[c.key] = err
	}
}

// SlowError says a server has not finished its start (the MCP handshake, or listing its
// tools: Conn.ToolsReady) within the time a turn waits for it: it goes on in the
// background.
type SlowError struct {
	Server string
	Waited time.Duration
}

func (e *SlowError) Error() string {
	if e.Waited <= 0 {
		return fmt.Sprintf("the MCP server %q is still starting (it has not finished the MCP handshake and listed its tools)", e.Server)
	}
	return fmt.Sprintf("the MCP server %q is still starting (it did not finish the MCP handshake and list its tools within %s)", e.Server, e.Waited)
}

// StartError says a server could not be started or did not answer the MCP handshake.
// Stderr is the last lines it wrote (capped); Hint says what to do.
type StartError struct {
	Server string
	Err    error
	Stderr string
	Hint   string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("the MCP server %q could not be started: %v", e.Server, e.Err)
}

func (e *StartError) Unwrap() error { return e.Err }

// DeadError says an instance stopped while (or before) it served a call: its process
// exited or its connection broke. The next Get starts it again.
type DeadError struct {
	Server string
	Exit   string // e.g. "exit status 1", "signal: killed"; "" for an HTTP server
	Err    error
	Stderr string
}

func (e *DeadError) Error() string {
	msg := fmt.Sprintf("the MCP server %q stopped", e.Server)
	if e.Exit != "" {
		msg += " (" + e.Exit + ")"
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg + "; it is started again at its next use"
}

func (e *DeadError) Unwrap() error { return e.Err }

// fillFailure writes an error's message, hint and stderr into a report.
func fillFailure(rep *protocol.MCPServerReport, err error) {
	rep.OK = false
	rep.Error = err.Error()
	var se *StartError
	var de *DeadError
	switch {
	case errors.As(err, &se):
		rep.Hint, rep.Stderr = se.Hint, se.Stderr
	case errors.As(err, &de):
		rep.Stderr = de.Stderr
		rep.Hint = "See the server's output below; check its command, arguments and environment."
	}
}
