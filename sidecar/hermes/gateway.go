package hermes

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"talaria/sidecar/stderrtail"
	"time"
)

// gwLineLimit bounds one line read from the gateway (Hermes writes whole transcripts in
// session.resume results; 64 MiB leaves room for long ones).
const gwLineLimit = 64 << 20

// RPCError is a JSON-RPC error the gateway answered. Code is Hermes's own (-32601 for a
// method it does not have, 4000 for parameters its contract refuses in dialect B,
// 4xxx/5xxx for its application errors: tui_gateway/server.py `_err`).
type RPCError struct {
	Code    int
	Message string
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("hermes gateway error %d: %s", e.Code, e.Message)
}

// Method-not-found from the gateway (JSON-RPC 2.0).
const codeMethodNotFound = -32601

// isMissing reports whether err says the gateway has no such method.
func isMissing(err error) bool {
	var re *RPCError
	return errors.As(err, &re) && re.Code == codeMethodNotFound
}

// errGatewayExited is returned by calls in flight when the gateway process ends.
var errGatewayExited = errors.New("the Hermes gateway exited")

// gwMessage is one line from the gateway: an event notification, a reply to one of our
// calls, or (dialect B) a request from the server to us.
type gwMessage struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// inbound is what the gateway reader hands to a session: an event or a server request.
type inbound struct {
	Event   *gwEvent
	Request *gwRequest
	At      time.Time
}

// gwSink receives the gateway's messages for one runtime session id. deliver must not
// block (the reader goroutine calls it).
type gwSink interface {
	deliver(in inbound)
}

// gateway is one running Hermes gateway process (`<python> -m tui_gateway.entry`) and
// the JSON-RPC client over its stdio.
type gateway struct {
	log   *slog.Logger
	cmd   *exec.Cmd
	stdin io.WriteCloser

	wmu sync.Mutex // serialises writes to stdin

	mu      sync.Mutex
	nextID  int64
	calls   map[string]chan gwReply
	sinks   map[string]gwSink // runtime session id -> sink
	global  func(inbound)     // events without a known session (gateway.ready, ...)
	exitErr error

	ready     chan struct{} // closed at gateway.ready
	readyInfo json.RawMessage
	done      chan struct{} // closed when the process has exited, the reader ended and tmpDir is removed
	// retired is closed by the runtime's watch once, after done, it no longer hands
	// this gateway out (Runtime.current waits for it).
	retired chan struct{}
	stderr  *lineRing
	tmpDir  string // the gateway's private TMPDIR (tmpdir.go), removed when it has exited

	redact atomic.Pointer[func(string) string]
	// trace, when set, sees every line: out true for what the runtime wrote.
	trace func(out bool, line []byte)
}

type gwReply struct {
	result json.RawMessage
	err    error
}

// startGateway spawns argv (the whole command: prefix, python, -m, tui_gateway.entry)
// with env added to the sidecar's environment, in its own process group with a
// parent-death signal (proc_*.go), in dir. TMPDIR, TMP and TEMP point at a private
// folder made for this gateway (tmpdir.go), over anything inherited or in env; when
// the gateway has exited, before done is closed, the processes still holding that
// TMPDIR are killed (killLeftovers) and the folder is removed, or at once when it does
// not start. It returns at once; wait on ready.
func startGateway(argv []string, env []string, dir string, log *slog.Logger, stderrRing *lineRing, trace func(bool, []byte), global func(inbound)) (_ *gateway, err error) {
	if len(argv) == 0 {
		return nil, errors.New("no gateway command")
	}
	tmp, err := newTempDir()
	if err != nil {
		return nil, fmt.Errorf("making its temporary folder: %w", err)
	}
	// Held while the gateway lives: a sweep by another sidecar leaves the folder alone.
	lock, err := lockTempDir(tmp)
	if err != nil {
		removeTempDir(tmp, log)
		return nil, fmt.Errorf("locking its temporary folder: %w", err)
	}
	defer func() {
		if err != nil {
			lock.Close()
			removeTempDir(tmp, log)
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	// The last of duplicate keys wins (os/exec): ours are last.
	cmd.Env = append(append(os.Environ(), env...), tempEnv(tmp)...)
	cmd.Dir = dir
	setProcessGroup(cmd)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	g := &gateway{log: log, cmd: cmd, stdin: stdin, calls: map[string]chan gwReply{}, sinks: map[string]gwSink{},
		ready: make(chan struct{}), done: make(chan struct{}), retired: make(chan struct{}), stderr: stderrRing, trace: trace, global: global, tmpDir: tmp}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	log.Debug("Hermes gateway started", "pid", cmd.Process.Pid, "tmpdir", tmp)
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); g.readStdout(stdout) }()
	go func() { defer readers.Done(); g.readStderr(stderr) }()
	go func() {
		readers.Wait()
		werr := cmd.Wait()
		// What it left running (its terminal's commands, in sessions of their own)
		// ends with it, and its terminal snapshots (its whole environment) go, however
		// it ended; a gateway restarted later gets a folder of its own.
		if n := killLeftovers(tmp); n > 0 {
			log.Info("killed what the Hermes gateway left running", "processes", n, "pid", cmd.Process.Pid)
		}
		removeTempDir(tmp, log)
		lock.Close()
		g.mu.Lock()
		if werr == nil {
			werr = errGatewayExited
		} else {
			werr = fmt.Errorf("%w: %v", errGatewayExited, werr)
		}
		g.exitErr = werr
		calls := g.calls
		g.calls = map[string]chan gwReply{}
		g.mu.Unlock()
		for _, ch := range calls {
			ch <- gwReply{err: werr}
		}
		close(g.done)
	}()
	return g, nil
}

// removeTempDir removes a gateway's private temporary folder, logging a failure (a
// folder left behind is swept at a later start: sweepStaleTempDirs).
func removeTempDir(dir string, log *slog.Logger) {
	if err := os.RemoveAll(dir); err != nil {
		log.Warn("could not remove the Hermes gateway's temporary folder", "dir", dir, "err", err)
	}
}

// pid is the gateway's process id.
func (g *gateway) pid() int { return g.cmd.Process.Pid }

// Err is why the gateway ended (nil while it runs).
func (g *gateway) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.exitErr
}

// setRedactor sets the function every stderr line passes through before it is logged.
func (g *gateway) setRedactor(f func(string) string) { g.redact.Store(&f) }

// maxStderrLog is the most of one gateway stderr line logged (4 KiB, after redaction).
const maxStderrLog = 4 << 10

func (g *gateway) readStderr(r io.Reader) {
	// Every line is read to its end: a Scanner stopped at a line over its buffer, and
	// the gateway then blocked on a full stderr pipe.
	stderrtail.ReadLines(r, 0, func(line string, cut bool) {
		if f := g.redact.Load(); f != nil {
			line = (*f)(line)
		}
		if cut || len(line) > maxStderrLog {
			line = strings.ToValidUTF8(line[:min(len(line), maxStderrLog)], "") + " [...]"
		}
		if g.stderr != nil {
			g.stderr.add(line)
		}
		g.log.Info("hermes gateway", "stderr", line)
	})
}

func (g *gateway) readStdout(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	for {
		line, err := readLine(br, gwLineLimit)
		if len(bytes.TrimSpace(line)) > 0 {
			g.handleLine(line)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				g.log.Warn("reading the Hermes gateway's output failed", "err", err)
			}
			return
		}
	}
}

// readLine reads one \n-terminated line; a longer line than limit is skipped whole and
// reported as empty.
func readLine(br *bufio.Reader, limit int) ([]byte, error) {
	var buf []byte
	over := false
	for {
		frag, err := br.ReadSlice('\n')
		if !over {
			if len(buf)+len(frag) > limit {
				over, buf = true, nil
			} else {
				buf = append(buf, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if over {
			return nil, err
		}
		return buf, err
	}
}

// handleLine routes one gateway line. Malformed lines are logged and dropped: the
// gateway's stdout carries protocol lines only, and one bad line must not end the turn.
func (g *gateway) handleLine(line []byte) {
	if g.trace != nil {
		g.trace(false, line)
	}
	var m gwMessage
	if err := json.Unmarshal(line, &m); err != nil {
		g.log.Warn("dropped a malformed line from the Hermes gateway", "bytes", len(line), "err", err)
		return
	}
	now := time.Now()
	switch {
	case m.Method == "event":
		ev, err := decodeEvent(m.Params)
		if err != nil {
			g.log.Warn("dropped an event without a type from the Hermes gateway")
			return
		}
		if ev.Type == evKindGatewayReady {
			g.mu.Lock()
			select {
			case <-g.ready:
			default:
				g.readyInfo = ev.Payload
				close(g.ready)
			}
			g.mu.Unlock()
		}
		g.route(ev.SessionID, inbound{Event: ev, At: now})
	case m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null":
		req := newRequest(m.ID, m.Method, m.Params)
		g.mu.Lock()
		sink := g.sinks[req.SessionID]
		g.mu.Unlock()
		if sink == nil {
			g.log.Warn("the Hermes gateway asked about a session this runtime does not hold; declining", "method", m.Method)
			g.respondError(m.ID, codeMethodNotFound, "no client session for this request")
			return
		}
		sink.deliver(inbound{Request: req, At: now})
	case m.Method != "":
		g.log.Debug("ignored a gateway notification", "method", m.Method)
	case len(m.ID) > 0:
		key := string(m.ID)
		g.mu.Lock()
		ch := g.calls[key]
		delete(g.calls, key)
		g.mu.Unlock()
		if ch == nil {
			g.log.Debug("a gateway reply for no pending call", "id", key)
			return
		}
		if m.Error != nil {
			ch <- gwReply{err: &RPCError{Code: m.Error.Code, Message: m.Error.Message}}
		} else {
			ch <- gwReply{result: m.Result}
		}
	default:
		g.log.Warn("dropped a line from the Hermes gateway that is not JSON-RPC")
	}
}

func (g *gateway) route(sid string, in inbound) {
	g.mu.Lock()
	sink := g.sinks[sid]
	global := g.global
	g.mu.Unlock()
	switch {
	case sink != nil:
		sink.deliver(in)
	case global != nil:
		global(in)
	}
}

// attach routes the messages of runtime session id sid to sink (replacing any).
func (g *gateway) attach(sid string, sink gwSink) {
	g.mu.Lock()
	g.sinks[sid] = sink
	g.mu.Unlock()
}

// detach stops routing sid.
func (g *gateway) detach(sid string) {
	g.mu.Lock()
	delete(g.sinks, sid)
	g.mu.Unlock()
}

// call sends one request and waits for its reply, ctx's end or the gateway's exit.
// params is marshalled as is (nil: {}). Errors: *RPCError from the gateway, ctx.Err(),
// errGatewayExited (wrapped).
func (g *gateway) call(ctx context.Context, method string, params any, out any) error {
	if params == nil {
		params = struct{}{}
	}
	g.mu.Lock()
	if g.exitErr != nil {
		err := g.exitErr
		g.mu.Unlock()
		return err
	}
	g.nextID++
	id := strconv.FormatInt(g.nextID, 10)
	ch := make(chan gwReply, 1)
	g.calls[id] = ch
	g.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": g.nextIDValue(id), "method": method, "params": params}
	if err := g.write(msg); err != nil {
		g.mu.Lock()
		delete(g.calls, id)
		g.mu.Unlock()
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if out != nil && len(r.result) > 0 {
			if err := json.Unmarshal(r.result, out); err != nil {
				return fmt.Errorf("hermes gateway: unexpected %s result: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		delete(g.calls, id)
		g.mu.Unlock()
		return ctx.Err()
	}
}

// nextIDValue turns our string key back into the JSON number we send.
func (g *gateway) nextIDValue(id string) json.RawMessage { return json.RawMessage(id) }

// respond answers a server request (dialect B) with result.
func (g *gateway) respond(id json.RawMessage, result any) error {
	return g.write(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

// respondError answers a server request with a JSON-RPC error.
func (g *gateway) respondError(id json.RawMessage, code int, message string) error {
	return g.write(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": message}})
}

func (g *gateway) write(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	g.wmu.Lock()
	defer g.wmu.Unlock()
	if g.trace != nil {
		g.trace(true, b)
	}
	if _, err := g.stdin.Write(append(b, '\n')); err != nil {
		if e := g.Err(); e != nil {
			return e
		}
		return fmt.Errorf("%w: writing to it failed: %v", errGatewayExited, err)
	}
	return nil
}

// waitReady waits for gateway.ready. Errors: ctx's end, the process exiting first
// (with the tail of its stderr).
func (g *gateway) waitReady(ctx context.Context) error {
	select {
	case <-g.ready:
		return nil
	case <-g.done:
		return fmt.Errorf("%w before it was ready%s", errGatewayExited, g.stderrHint())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stderrHint returns the last few stderr lines as ": ...", or "".
func (g *gateway) stderrHint() string {
	if g.stderr == nil {
		return ""
	}
	lines := stderrtail.Telling(g.stderr.lines(), 5)
	if len(lines) == 0 {
		return ""
	}
	return "; it said: " + strings.Join(lines, " | ")
}

// close drains the gateway: its stdin is closed (Hermes exits at EOF,
// tui_gateway/entry.py, closing its sessions at exit); halfway through grace it gets
// SIGTERM (Hermes flushes its sessions and exits within
// HERMES_TUI_GATEWAY_SHUTDOWN_GRACE_S, 1 s by default); at grace the whole process
// group is killed. It returns when the process has exited.
func (g *gateway) close(grace time.Duration) {
	g.wmu.Lock()
	g.stdin.Close()
	g.wmu.Unlock()
	term := time.NewTimer(grace / 2)
	defer term.Stop()
	kill := time.NewTimer(grace)
	defer kill.Stop()
	for {
		select {
		case <-g.done:
			killGroup(g.cmd) // anything the gateway left in its group (tool processes)
			return
		case <-term.C:
			g.log.Info("the Hermes gateway is still closing its sessions; asking it to stop (SIGTERM)", "pid", g.pid())
			termGroup(g.cmd)
		case <-kill.C:
			g.log.Warn("the Hermes gateway did not exit after its stdin closed; killing its process group", "pid", g.pid())
			killGroup(g.cmd)
			<-g.done
			return
		}
	}
}

// kill ends the process group at once.
func (g *gateway) kill() {
	killGroup(g.cmd)
	<-g.done
}

// lineRing keeps the last n lines (the gateway's stderr, for Diagnostics and errors).
type lineRing struct {
	mu  sync.Mutex
	buf []string
	n   int
}

func newLineRing(n int) *lineRing { return &lineRing{n: n} }

func (r *lineRing) add(line string) {
	if len(line) > 2048 {
		line = line[:2048]
	}
	r.mu.Lock()
	r.buf = append(r.buf, line)
	if len(r.buf) > r.n {
		r.buf = r.buf[len(r.buf)-r.n:]
	}
	r.mu.Unlock()
}

func (r *lineRing) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.buf...)
}
