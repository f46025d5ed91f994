package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/protocol"
)

// Bounds, in bytes and counts.
const (
	maxStderrTail = 8 << 10 // the last bytes of a server's stderr kept for messages
	maxTools      = 1000    // tools read from one server
	maxListed     = 1000    // prompts or resources read from one server
)

// Conn is one running instance of a server. Its methods are safe for concurrent use.
type Conn struct {
	m   *Manager
	key string
	srv protocol.MCPServer
	log *slog.Logger

	ready    chan struct{} // closed when the start ended (startErr says how)
	startErr error
	// stopStart cancels a start under way (Close).
	stopStart context.CancelFunc
	// waitedOut is set when a caller of Manager.Ready gave up waiting for the start:
	// no caller waits for it again.
	waitedOut atomic.Bool

	cs     *sdk.ClientSession
	cmd    *exec.Cmd // stdio only
	stdinW *os.File  // stdio only: closing it asks the server to exit
	exited chan struct{}
	stderr tail
	// stderrDone is closed when the server's stderr reached its end (stdio only).
	stderrDone chan struct{}

	dead     chan struct{}
	deadOnce sync.Once
	exit     atomic.Value // string: how the process ended ("exit status 1")

	lastUsed atomic.Int64 // unix nanoseconds
	busy     atomic.Int32 // calls in flight

	mu         sync.Mutex
	tools      []*sdk.Tool
	toolsValid bool
	// listing is the background tools/list of ToolsReady under way (nil: none);
	// listSlow is set when a caller gave up waiting for one.
	listing   *listing
	listSlow  bool
	closeOnce sync.Once

	// cl is the instance's client; rooted says it was told a root (wantsRoot), root
	// is that root ("" none), guarded by rootMu.
	cl     *sdk.Client
	rootMu sync.Mutex
	rooted bool
	root   string
	// callers are the tool calls in flight that answer elicitation and sampling.
	callers callers
}

func newConn(m *Manager, key string, s protocol.MCPServer) *Conn {
	c := &Conn{stopStart: func() {}, m: m, key: key, srv: s, log: m.log.With("server", s.Name), ready: make(chan struct{}), dead: make(chan struct{}), exited: make(chan struct{})}
	c.touch()
	return c
}

// Server returns the settings the instance was started with.
func (c *Conn) Server() protocol.MCPServer { return c.srv }

// Dead is closed when the instance stopped (its process exited, its connection broke,
// or it was closed).
func (c *Conn) Dead() <-chan struct{} { return c.dead }

func (c *Conn) isDead() bool {
	select {
	case <-c.dead:
		return true
	default:
		return false
	}
}

func (c *Conn) markDead() { c.deadOnce.Do(func() { close(c.dead) }) }

func (c *Conn) touch() { c.lastUsed.Store(time.Now().UnixNano()) }

func (c *Conn) idleFor() time.Duration { return time.Since(time.Unix(0, c.lastUsed.Load())) }

// start connects in the background, bounded by ctx and the connect timeout (Close
// cancels it too); it records the outcome with the Manager and closes c.ready when done.
func (c *Conn) start(ctx context.Context, scope Scope) {
	tctx, cancelTimeout := context.WithTimeout(ctx, c.m.connectTimeout)
	cctx, cancel := context.WithCancel(tctx)
	c.stopStart = cancel
	go func() {
		defer close(c.ready)
		defer c.m.started(c)
		defer cancelTimeout()
		defer cancel()
		begin := time.Now()
		err := c.connect(cctx, scope)
		if err != nil {
			if errors.Is(tctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
				err = &StartError{Server: c.srv.Name, Err: fmt.Errorf("it did not complete the MCP handshake within %s", c.m.connectTimeout),
					Hint: "Check that the command starts an MCP server speaking on stdin/stdout (or that the URL is its MCP endpoint); a first start through npx or uvx may need network access to download it."}
			}
			c.abort()
			var se *StartError
			if errors.As(err, &se) && se.Stderr == "" {
				se.Stderr = c.stderr.String()
				if se.Hint == "" {
					se.Hint = hintFor(se.Err, se.Stderr, c.srv)
				}
			}
			c.startErr = err
			c.log.Info("MCP server failed to start", "err", err, "took", time.Since(begin).Round(time.Millisecond))
			return
		}
		ir := c.cs.InitializeResult()
		name, version := "", ""
		if ir != nil && ir.ServerInfo != nil {
			name, version = ir.ServerInfo.Name, ir.ServerInfo.Version
		}
		c.log.Info("MCP server started", "transport", c.srv.Transport, "server_name", name, "server_version", version,
			"took", time.Since(begin).Round(time.Millisecond))
	}()
}

// client is the instance's MCP client: roots (the workspace, see wantsRoot),
// elicitation and sampling (answered by the tool call in flight: requests.go).
func (c *Conn) client(workspace string) *sdk.Client {
	caps := &sdk.ClientCapabilities{}
	c.rootMu.Lock()
	defer c.rootMu.Unlock()
	c.rooted = c.wantsRoot()
	if c.rooted {
		//lint:ignore SA1019 roots and sampling are deprecated (SEP-2577) but still served (requests.go)
		caps.RootsV2 = &sdk.RootCapabilities{ListChanged: true}
	}
	c.cl = sdk.NewClient(&sdk.Implementation{Name: "talaria", Title: "Talaria Desktop", Version: c.m.version}, &sdk.ClientOptions{
		Capabilities:       caps,
		Logger:             slog.New(slog.DiscardHandler),
		ElicitationHandler: c.elicit,
		//lint:ignore SA1019 roots and sampling are deprecated (SEP-2577) but still served (requests.go)
		CreateMessageHandler: c.createMessage,
		ToolListChangedHandler: func(context.Context, *sdk.ToolListChangedRequest) {
			c.mu.Lock()
			c.toolsValid = false
			c.mu.Unlock()
		},
	})
	if c.rooted && workspace != "" {
		c.root = workspace
		//lint:ignore SA1019 roots and sampling are deprecated (SEP-2577) but still served (requests.go)
		c.cl.AddRoots(&sdk.Root{URI: rootURI(workspace), Name: filepath.Base(workspace)})
	}
	return c.cl
}

func (c *Conn) connect(ctx context.Context, scope Scope) error {
	switch c.srv.Transport {
	case protocol.MCPTransportStdio:
		return c.connectStdio(ctx, scope)
	default:
		return c.connectHTTP(ctx)
	}
}

func (c *Conn) connectStdio(ctx context.Context, scope Scope) error {
	s := c.srv
	argv := append([]string{s.Command}, s.Args...)
	var extra []string
	for _, kv := range sortedPairs(s.Env) {
		extra = append(extra, kv[0]+"="+kv[1])
	}
	envFn := scope.Env
	if envFn == nil {
		envFn = MinimalEnv
	}
	dir := s.Cwd
	if dir == "" {
		dir = scope.Workspace
	}
	if dir == "" {
		dir, _ = os.UserHomeDir()
	}
	launch := scope.Launch
	if launch == nil {
		launch = Unconfined
	}
	writable, withheld := WritableFolders(argv, s.Cwd, scope.Workspace, s.WritablePaths)
	if s.Sandbox != protocol.MCPSandboxOff {
		for _, w := range withheld {
			c.log.Warn("MCP server folder kept read-only", "folder", w.Path, "why", w.Reason, "hint", w.Message(s.Name))
		}
	}
	cmd, err := launch(s.Sandbox, argv, envFn(extra...), dir, writable)
	if err != nil {
		return &StartError{Server: s.Name, Err: err, Hint: hintFor(err, "", s)}
	}
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return &StartError{Server: s.Name, Err: err}
	}
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW)
		return &StartError{Server: s.Name, Err: err}
	}
	stderrR, stderrW, err := os.Pipe()
	if err != nil {
		closeFiles(stdinR, stdinW, stdoutR, stdoutW)
		return &StartError{Server: s.Name, Err: err}
	}
	// Our own pipes (not cmd.StdoutPipe): Wait then never closes what the SDK still
	// reads, nor waits for a grandchild that kept a copy of stderr.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdinR, stdoutW, stderrW
	if err := cmd.Start(); err != nil {
		closeFiles(stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW)
		return &StartError{Server: s.Name, Err: err, Hint: hintFor(err, "", s)}
	}
	closeFiles(stdinR, stdoutW, stderrW)
	c.cmd, c.stdinW = cmd, stdinW
	c.log.Debug("MCP server process started", "pid", cmd.Process.Pid)
	c.stderrDone = make(chan struct{})
	go c.readStderr(stderrR)
	go func() {
		err := cmd.Wait()
		how := "exited"
		if err != nil {
			how = err.Error()
		}
		c.exit.Store(how)
		// Whatever it left running in its group goes with it.
		killGroup(cmd)
		close(c.exited)
		c.markDead()
		c.log.Info("MCP server process ended", "pid", cmd.Process.Pid, "how", how)
	}()
	cs, err := c.client(scope.Workspace).Connect(ctx, &sdk.IOTransport{Reader: stdoutR, Writer: stdinW}, nil)
	if err != nil {
		if ctx.Err() == nil {
			// Give the process a moment to end, so the error names how it ended.
			select {
			case <-c.exited:
				// And what it printed on its way out is read to its end (a grandchild
				// holding stderr open is not waited for long).
				select {
				case <-c.stderrDone:
				case <-time.After(300 * time.Millisecond):
				}
			case <-time.After(300 * time.Millisecond):
			}
		}
		if how, _ := c.exit.Load().(string); how != "" {
			err = fmt.Errorf("its process ended (%s) before the MCP handshake: %w", how, err)
		}
		return &StartError{Server: s.Name, Err: err}
	}
	c.cs = cs
	go func() {
		_ = cs.Wait()
		c.markDead()
	}()
	return nil
}

func (c *Conn) connectHTTP(ctx context.Context) error {
	s := c.srv
	scheme, host := "", ""
	if u, err := url.Parse(strings.TrimSpace(s.URL)); err == nil {
		scheme, host = u.Scheme, u.Host
	}
	hc := &http.Client{Transport: &headerTransport{base: httpTransport(), headers: s.Headers, scheme: scheme, host: host}}
	var t sdk.Transport
	if s.Transport == protocol.MCPTransportSSE {
		t = &sdk.SSEClientTransport{Endpoint: strings.TrimSpace(s.URL), HTTPClient: hc}
	} else {
		t = &sdk.StreamableClientTransport{Endpoint: strings.TrimSpace(s.URL), HTTPClient: hc, MaxRetries: 2}
	}
	cs, err := c.client("").Connect(ctx, t, nil)
	if err != nil {
		return &StartError{Server: s.Name, Err: err, Hint: hintFor(err, "", s)}
	}
	c.cs = cs
	go func() {
		_ = cs.Wait()
		c.markDead()
	}()
	return nil
}

func httpTransport() http.RoundTripper {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 10 * time.Second
	return tr
}

// headerTransport adds a server's configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
	scheme  string // the server's scheme and host: its headers (secrets, a bearer) go
	host    string // nowhere else, nor to its host over http when it is https
}

// RoundTrip adds the server's headers to requests to the server's own scheme and host
// only: a redirect (or an SSE endpoint event) to another host, or from https to http,
// must not carry its secrets or its sign-in's bearer.
func (h *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 && r.URL.Scheme == h.scheme && strings.EqualFold(r.URL.Host, h.host) {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(r)
}

func (c *Conn) readStderr(r *os.File) {
	defer close(c.stderrDone)
	defer r.Close()
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.stderr.Write(buf[:n])
			if c.log.Enabled(context.Background(), slog.LevelDebug) {
				c.log.Debug("MCP server stderr", "bytes", n)
			}
		}
		if err != nil {
			return
		}
	}
}

// abort ends a failed start: the process (when one started) is killed.
func (c *Conn) abort() {
	if c.cs != nil {
		_ = c.cs.Close()
	}
	if c.cmd != nil {
		if c.stdinW != nil {
			_ = c.stdinW.Close()
		}
		killGroup(c.cmd)
		select {
		case <-c.exited:
		case <-time.After(2 * time.Second):
		}
	}
	c.markDead()
}

// Close stops the instance: a stdio server's stdin is closed, and its process group is
// killed when it has not exited within CloseGrace; an HTTP session is ended. It waits
// for the start to finish first (bounded by the connect timeout). Idempotent.
func (c *Conn) Close() {
	c.closeOnce.Do(func() {
		c.stopStart()
		select {
		case <-c.ready:
		case <-time.After(c.m.connectTimeout):
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			if c.cs != nil {
				_ = c.cs.Close() // closes stdin of a stdio server
			}
		}()
		if c.cmd != nil {
			select {
			case <-c.exited:
			case <-time.After(CloseGrace):
				killGroup(c.cmd)
				select {
				case <-c.exited:
				case <-time.After(2 * time.Second):
					c.log.Warn("MCP server process did not end after SIGKILL")
				}
			}
		}
		select {
		case <-done:
		case <-time.After(time.Second):
		}
		c.markDead()
	})
}

// failure turns an error of a request into what the caller reports: ctx's error when
// the caller gave up, the server's own JSON-RPC error as is, otherwise a *DeadError
// (the process ended, or the connection broke: the instance is closed, so the next Get
// starts it again).
func (c *Conn) failure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if isServerError(err) {
		return err
	}
	if c.cmd != nil {
		// The process may be on its way out: wait a moment for how it ended.
		select {
		case <-c.exited:
		case <-time.After(time.Second):
		}
	}
	how, _ := c.exit.Load().(string)
	de := &DeadError{Server: c.srv.Name, Exit: how, Stderr: c.stderr.String()}
	if how == "" || !errors.Is(err, sdk.ErrConnectionClosed) {
		de.Err = err
	}
	go c.Close()
	c.markDead()
	return de
}

// hintFor says what to do about a failure to start.
func hintFor(err error, stderr string, s protocol.MCPServer) string {
	low := strings.ToLower(stderr + " " + errString(err))
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) && s.Transport == protocol.MCPTransportStdio:
		return fmt.Sprintf("The program %q was not found: install it, or enter its full path.", s.Command)
	case s.Transport == protocol.MCPTransportStdio && s.Sandbox != protocol.MCPSandboxOff && refused(stderr+" "+errString(err)):
		r, _ := FindRefusal(stderr + " " + errString(err))
		return RefusalHint(s.Name, s.Cwd, r)
	case strings.Contains(low, "read-only file system") || strings.Contains(low, "erofs"):
		return "The server tried to write outside the folders the sandbox lets it change (npx and uvx keep caches in your home folder). Choose \"no sandbox\" for this server if you trust it, or install it and run it directly."
	case strings.Contains(low, "enotfound") || strings.Contains(low, "eai_again") || strings.Contains(low, "getaddrinfo") ||
		strings.Contains(low, "network is unreachable") || strings.Contains(low, "temporary failure in name resolution"):
		return "The server needs the network, which the sandbox blocks: allow network access for this server."
	case strings.Contains(low, "connection refused"):
		return "Nothing answers at " + s.URL + ": start the server, or check the URL."
	case strings.Contains(low, "401") || strings.Contains(low, "403") || strings.Contains(low, "unauthorized") || strings.Contains(low, "forbidden"):
		return "The server refused the request: if it asks for a sign-in, sign in to it in Settings → MCP servers; otherwise check its Authorization header or token."
	case strings.Contains(low, "404") || strings.Contains(low, "not found"):
		return "Check the server's URL: it should be its MCP endpoint (often ending in /mcp, or /sse for the older transport)."
	}
	if s.Transport == protocol.MCPTransportStdio {
		return "See the server's output below; check its command, arguments and environment."
	}
	return "Check the server's URL and headers, and that it speaks MCP over " + map[bool]string{true: "SSE", false: "streamable HTTP"}[s.Transport == protocol.MCPTransportSSE] + "."
}

func refused(text string) bool {
	_, ok := FindRefusal(text)
	return ok
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// isServerError reports whether err is the server's own JSON-RPC error reply (a tool
// it does not have, arguments it refuses), as opposed to a broken connection.
func isServerError(err error) bool {
	if errors.Is(err, sdk.ErrConnectionClosed) || errors.Is(err, sdk.ErrSessionMissing) {
		return false
	}
	var we *jsonrpc.Error
	return errors.As(err, &we)
}

func closeFiles(fs ...*os.File) {
	for _, f := range fs {
		_ = f.Close()
	}
}

// tail keeps the last maxStderrTail bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - maxStderrTail; over > 0 {
		t.buf = slices.Clone(t.buf[over:])
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(strings.TrimSpace(string(t.buf)), "�")
}

// MinimalEnv is the environment of a stdio server when the scope gives none: PATH,
// HOME, LANG, USER, LOGNAME, TMPDIR and TZ from this process (PATH defaulted), then the
// server's own variables, which win. Nothing else of the sidecar's environment (API
// keys, display or D-Bus addresses) reaches it.
func MinimalEnv(extra ...string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "USER", "LOGNAME", "TMPDIR", "TZ", "SystemRoot", "COMSPEC", "PATHEXT", "USERPROFILE", "APPDATA", "LOCALAPPDATA", "TEMP", "TMP"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	if _, ok := os.LookupEnv("PATH"); !ok {
		env = append(env, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	names := map[string]bool{}
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		names[k] = true
	}
	out := env[:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !names[k] {
			out = append(out, kv)
		}
	}
	return append(out, extra...)
}

// Unconfined builds a stdio server's command with no sandbox: its own process group
// and, on Linux, SIGKILL when the sidecar dies. argv[0] is looked up in env's PATH.
func Unconfined(_ string, argv, env []string, dir string, _ []string) (*exec.Cmd, error) {
	if len(argv) == 0 {
		return nil, errors.New("no command")
	}
	prog := argv[0]
	if !strings.ContainsRune(prog, filepath.Separator) {
		p, err := lookPath(prog, env)
		if err != nil {
			return nil, err
		}
		prog = p
	}
	cmd := exec.Command(prog, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env, cmd.Dir = env, dir
	setProcAttr(cmd)
	return cmd, nil
}

// lookPath finds prog in the PATH of env (the server's, not necessarily the sidecar's).
func lookPath(prog string, env []string) (string, error) {
	path := os.Getenv("PATH")
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, prog)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && (st.Mode()&0o111 != 0 || isWindows) {
			return p, nil
		}
		if isWindows {
			for _, ext := range []string{".exe", ".cmd", ".bat"} {
				if st, err := os.Stat(p + ext); err == nil && !st.IsDir() {
					return p + ext, nil
				}
			}
		}
	}
	return "", &exec.Error{Name: prog, Err: exec.ErrNotFound}
}
