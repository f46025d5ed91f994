// Package hermes is the Hermes Agent runtime of `talaria sidecar --runtime hermes`: it
// drives the user's own Hermes Agent through Hermes's JSON-RPC gateway
// (`<hermes python> -m tui_gateway.entry` over stdio, the interface Hermes's TUI and its
// desktop app use) and translates between that gateway and docs/protocol.md. The
// mapping, the dialects and where each gateway name was confirmed are in docs/hermes.md.
//
// One gateway process serves every session of the sidecar. It runs in its own process
// group with a parent-death signal and a private TMPDIR removed when it exits
// (tmpdir.go); a gateway that exits is restarted (in-flight turns end with
// sidecar_unavailable and the next turn resumes its Hermes session).
package hermes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"talaria/sidecar/stderrtail"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/protocol/hermesprobe"
	"talaria/sidecar/server"
)

// RuntimeName is rpc.hello's runtime.
const RuntimeName = protocol.RuntimeHermes

// Defaults of Options.
const (
	DefaultStartTimeout = 90 * time.Second // the official desktop allows a slow first start this long
	// DefaultDrainGrace: stdin EOF, SIGTERM at half of it, the process group killed at
	// its end; within the host's 5 s for the whole sidecar.
	DefaultDrainGrace = 4 * time.Second
)

// Options configure a Runtime.
type Options struct {
	// Python is the interpreter whose `import hermes_cli` works (the venv of
	// ~/.hermes/hermes-agent, the one in the `hermes` launcher's shebang, ...). Required.
	Python string
	// Prefix are words run before Python (e.g. a bubblewrap or chroot command for a
	// Hermes installed in another folder system); nil for none. The gateway's TMPDIR is
	// a folder in the sidecar's os.TempDir() (see Env): a prefix must let the gateway
	// see that folder at the same path (e.g. bind /tmp, or $TMPDIR when it is set).
	Prefix []string
	// Home is HERMES_HOME for the gateway; "" keeps Hermes's own default (~/.hermes or
	// the environment's HERMES_HOME).
	Home string
	// Profile is the Hermes profile whose sessions, config and memory the runtime uses
	// ("" for the home's default profile); sent as `profile` on session methods.
	Profile string
	// Env are extra "K=V" entries for the gateway's environment. TMPDIR, TMP and TEMP
	// are the runtime's own and win over Env's and the inherited ones: each gateway
	// gets a private folder, os.TempDir()/talaria-hermes-<sidecar pid>-* (0700), where
	// Hermes's terminal tool writes its environment snapshots (secrets included),
	// removed when that gateway ends; a restarted gateway gets a fresh one, and a
	// runtime's start removes the folders of sidecars that are gone.
	Env []string
	// Dir is the gateway's working directory ("" for the user's home folder).
	Dir string
	// StartTimeout bounds the gateway's start (DefaultStartTimeout when 0).
	StartTimeout time.Duration
	// DrainGrace is how long the gateway gets to exit after its stdin closes before its
	// process group is killed (DefaultDrainGrace when 0).
	DrainGrace time.Duration
	// RestartDelays is the back-off before each restart of a gateway that exited
	// (default 0.5 s doubling to 30 s).
	RestartDelays []time.Duration
	// Log receives the runtime's logs and the gateway's stderr lines (secrets removed).
	Log *slog.Logger
	// Trace, when set, receives every line exchanged with the gateway (out: written
	// by the runtime), for recording transcripts (testdata/). Lines are raw: they may
	// hold secrets; never set it outside tests.
	Trace func(out bool, line []byte)
}

// Runtime is the Hermes runtime (server.Runtime, server.Starter, server.Notifying,
// io.Closer).
type Runtime struct {
	opts Options
	log  *slog.Logger

	startOnce sync.Once
	started   chan struct{} // closed when the first start attempt ended
	startErr  error

	mu       sync.Mutex
	gw       *gateway
	starting *gateway // a gateway spawned and not yet ready (Close kills it)
	gen      int      // gateway generation, +1 per (re)start
	d        *dialect
	version  string
	python   string
	sessions map[string]*hsession // by Talaria session id
	streams  map[string]*turn     // live turns by stream id
	secrets  []string             // values given to Hermes (vault answers): redacted from logs
	closed   bool
	notify   func(method string, params any) error
	stderr   *lineRing
	restarts int

	gwUp chan struct{} // closed when a gateway is ready; replaced while restarting
	bg   sync.WaitGroup
}

// New returns a runtime; the gateway starts in the background at once (Ready waits).
func New(opts Options) *Runtime {
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.DrainGrace <= 0 {
		opts.DrainGrace = DefaultDrainGrace
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if len(opts.RestartDelays) == 0 {
		for d := 500 * time.Millisecond; d < 30*time.Second; d *= 2 {
			opts.RestartDelays = append(opts.RestartDelays, d)
		}
		opts.RestartDelays = append(opts.RestartDelays, 30*time.Second)
	}
	r := &Runtime{opts: opts, log: opts.Log, started: make(chan struct{}), sessions: map[string]*hsession{},
		streams: map[string]*turn{}, stderr: newLineRing(200), gwUp: make(chan struct{})}
	go r.startOnce.Do(r.firstStart)
	return r
}

// Info is rpc.hello's info: the Hermes version and Python version as the gateway's
// interpreter reports them, the features and the dialect detected.
func (r *Runtime) Info() server.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	info := server.Info{Name: RuntimeName, AgentVersion: r.version, Python: r.python,
		// Hermes runs its tools itself (its terminal backend, its approval rules):
		// Talaria's sandbox does not confine them, and the window says so.
		Sandbox: &protocol.SandboxStatus{Available: false, Mechanism: "hermes",
			Reason: "Hermes Agent runs its commands itself, with its own terminal backend and approval rules; Talaria's sandbox does not apply to them.",
			Hint:   "Choose Hermes's terminal backend (local, docker, ssh, ...) in Hermes's own settings (hermes setup)."}}
	if r.d != nil {
		info.Dialect = r.d.name
		info.Features = r.d.features()
	}
	return info
}

// Ready waits for the first gateway start. Errors: *protocol.Error with condition
// agent_unavailable (no usable Hermes, or its gateway did not start) or
// agent_incompatible (a Hermes too old for either dialect or of an unknown contract),
// with a hint; ctx's end.
func (r *Runtime) Ready(ctx context.Context) error {
	select {
	case <-r.started:
		return r.startErr
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Disabled lists the methods the detected gateway cannot serve (docs/hermes.md,
// "Dialects").
func (r *Runtime) Disabled() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.d == nil {
		return nil
	}
	return r.d.disabledMethods()
}

// SetNotify is called by the server with the function that sends $/session_event.
func (r *Runtime) SetNotify(notify func(method string, params any) error) {
	r.mu.Lock()
	r.notify = notify
	r.mu.Unlock()
}

// StderrTail returns the gateway's last stderr lines (secrets removed).
func (r *Runtime) StderrTail() []string { return r.stderr.lines() }

// Methods is the runtime's method table; Disabled trims it to what the gateway has.
func (r *Runtime) Methods() map[string]server.Handler {
	return map[string]server.Handler{
		protocol.MethodChatStart:       r.chatStart,
		protocol.MethodChatSteer:       r.chatSteer,
		protocol.MethodApprovalRespond: r.approvalRespond,
		protocol.MethodApprovalYolo:    r.approvalYolo,
		protocol.MethodClarifyRespond:  r.clarifyRespond,
		protocol.MethodChatEvict:       r.chatEvict,
		protocol.MethodAgentSessions:   r.agentSessions,
		protocol.MethodAgentHistory:    r.agentHistory,
		protocol.MethodAgentModels:     r.agentModels,
		protocol.MethodChatCompact:     r.chatCompact,
	}
}

// Close ends the runtime: every live turn is already cancelled by the server's drain;
// the gateway's stdin is closed and its process group killed after DrainGrace.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	gw, starting := r.gw, r.starting
	r.mu.Unlock()
	if starting != nil {
		// Not ready: it holds no session yet, so it is not drained.
		starting.kill()
	}
	if gw != nil {
		gw.close(r.opts.DrainGrace)
	}
	r.bg.Wait()
	return nil
}

// command is the gateway's whole command line.
func (r *Runtime) command(args ...string) []string {
	return append(append(slices.Clone(r.opts.Prefix), r.opts.Python), args...)
}

func (r *Runtime) env() []string {
	env := slices.Clone(r.opts.Env)
	if r.opts.Home != "" {
		env = append(env, "HERMES_HOME="+r.opts.Home)
	}
	return env
}

func (r *Runtime) dir() string {
	if r.opts.Dir != "" {
		return r.opts.Dir
	}
	if h, err := os.UserHomeDir(); err == nil {
		return h
	}
	return os.TempDir()
}

// probe asks the interpreter for Hermes's version and its own (hermesprobe, the same
// check and words as the host's discovery). Errors are *protocol.Error ready for
// rpc.hello, with a hint.
func (r *Runtime) probe(ctx context.Context) (hermesVersion, pyVersion string, err error) {
	res, err := hermesprobe.Probe(ctx, r.opts.Prefix, r.opts.Python, r.env(), r.dir(), r.opts.StartTimeout)
	return res.HermesVersion, res.PythonVersion, err
}

// firstStart removes the temporary folders of gateways whose sidecar is gone, probes
// the interpreter, starts the gateway and detects its dialect; its outcome is what
// Ready reports.
func (r *Runtime) firstStart() {
	defer close(r.started)
	sweepStaleTempDirs(os.TempDir(), r.log)
	ctx, cancel := context.WithTimeout(context.Background(), r.opts.StartTimeout)
	defer cancel()
	ver, py, err := r.probe(ctx)
	if err != nil {
		r.startErr = err
		r.log.Error("Hermes Agent is not usable", "python", r.opts.Python, "err", err)
		return
	}
	r.mu.Lock()
	r.version, r.python = ver, py
	r.mu.Unlock()
	if err := r.startGateway(ctx); err != nil {
		r.startErr = err
		return
	}
	r.log.Info("Hermes gateway ready", "hermes_version", ver, "python", py, "dialect", r.dialectName())
}

func (r *Runtime) dialectName() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.d == nil {
		return ""
	}
	return r.d.name
}

// startGateway spawns one gateway, waits for gateway.ready and detects the dialect.
// Errors: *protocol.Error (agent_unavailable, agent_incompatible).
func (r *Runtime) startGateway(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return protocol.NewError(0, protocol.CondAgentUnavailable, "the sidecar is shutting down")
	}
	r.mu.Unlock()
	log := r.log.With("component", "hermes-gateway")
	gw, err := startGateway(r.command("-m", "tui_gateway.entry"), r.env(), r.dir(), log, r.stderr, r.opts.Trace, r.globalEvent)
	if err != nil {
		e := protocol.NewError(0, protocol.CondAgentUnavailable, "could not start Hermes's gateway: "+err.Error())
		e.Data.Hint = hermesprobe.InstallHint
		return e
	}
	gw.setRedactor(r.redact)
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		gw.kill()
		return protocol.NewError(0, protocol.CondAgentUnavailable, "the sidecar is shutting down")
	}
	r.starting = gw
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if r.starting == gw {
			r.starting = nil
		}
		r.mu.Unlock()
	}()
	if err := gw.waitReady(ctx); err != nil {
		gw.kill()
		msg := "Hermes's gateway did not become ready"
		if errors.Is(err, context.DeadlineExceeded) {
			msg += fmt.Sprintf(" within %s", r.opts.StartTimeout)
		}
		e := protocol.NewError(0, protocol.CondAgentUnavailable, msg+": "+err.Error()+gw.stderrHint())
		e.Data.Hint = "Check that `hermes` works in a terminal; the gateway's output is in Diagnostics."
		if errors.Is(err, context.DeadlineExceeded) {
			e.Data.Hint = hermesprobe.SlowStartHint
		}
		return e
	}
	d, err := detectDialect(ctx, gw, r.opts.Profile, r.log)
	if err != nil {
		gw.kill()
		r.mu.Lock()
		ver := r.version
		r.mu.Unlock()
		var pe *protocol.Error
		if errors.As(err, &pe) {
			pe.Message = fmt.Sprintf("Hermes Agent %s: %s", hermesprobe.OrUnknown(ver), pe.Message)
			return pe
		}
		return protocol.NewError(0, protocol.CondAgentUnavailable, "Hermes's gateway failed its first calls: "+err.Error())
	}
	r.mu.Lock()
	if r.closed {
		// Close came while it started: Close killed it, or is about to.
		r.mu.Unlock()
		gw.kill()
		return protocol.NewError(0, protocol.CondAgentUnavailable, "the sidecar is shutting down")
	}
	r.gw, r.d = gw, d
	r.gen++
	up := r.gwUp
	r.mu.Unlock()
	close(up)
	r.bg.Add(1)
	go r.watch(gw)
	return nil
}

// watch restarts the gateway when it exits on its own. Until it has forgotten the
// exited gateway (retired), current waits rather than hand it out.
func (r *Runtime) watch(gw *gateway) {
	defer r.bg.Done()
	<-gw.done
	r.mu.Lock()
	if r.closed || r.gw != gw {
		r.mu.Unlock()
		close(gw.retired)
		return
	}
	r.gw = nil
	r.gwUp = make(chan struct{})
	// Every Hermes session of that process is gone: the next turn resumes it.
	for _, s := range r.sessions {
		s.forgetLive()
	}
	r.mu.Unlock()
	close(gw.retired)
	r.log.Error("the Hermes gateway exited; restarting it", "err", gw.Err(), "last_output", gw.stderrHint())
	for attempt := 0; ; attempt++ {
		delay := r.opts.RestartDelays[min(attempt, len(r.opts.RestartDelays)-1)]
		time.Sleep(delay)
		r.mu.Lock()
		closed := r.closed
		r.restarts++
		r.mu.Unlock()
		if closed {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.StartTimeout)
		err := r.startGateway(ctx)
		cancel()
		if err == nil {
			r.log.Info("the Hermes gateway was restarted")
			return
		}
		r.log.Error("restarting the Hermes gateway failed", "attempt", attempt+1, "err", err)
	}
}

// current returns the ready gateway and its dialect, waiting (bounded by ctx) while
// it restarts. Errors: *protocol.Error sidecar_unavailable when it does not come back.
func (r *Runtime) current(ctx context.Context) (*gateway, *dialect, int, error) {
	if err := r.Ready(ctx); err != nil {
		return nil, nil, 0, err
	}
	for {
		r.mu.Lock()
		gw, d, gen, up := r.gw, r.d, r.gen, r.gwUp
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return nil, nil, 0, protocol.NewError(0, protocol.CondSidecarUnavailable, "the Hermes runtime is shutting down")
		}
		if gw != nil {
			select {
			case <-gw.done:
				// It exited and watch has not forgotten it yet: a turn given it now
				// would fail on a dead process instead of waiting for the restart.
				select {
				case <-gw.retired:
				case <-ctx.Done():
					return nil, nil, 0, ctx.Err()
				}
				continue
			default:
			}
			return gw, d, gen, nil
		}
		wait, cancel := context.WithTimeout(ctx, r.opts.StartTimeout)
		select {
		case <-up:
			cancel()
		case <-wait.Done():
			cancel()
			if ctx.Err() != nil {
				return nil, nil, 0, ctx.Err()
			}
			return nil, nil, 0, protocol.NewError(0, protocol.CondSidecarUnavailable,
				"Hermes's gateway exited and has not come back"+r.tailHint())
		}
	}
}

func (r *Runtime) tailHint() string {
	lines := stderrtail.Telling(r.stderr.lines(), 3)
	if len(lines) == 0 {
		return ""
	}
	return " (it said: " + strings.Join(lines, " | ") + ")"
}

// globalEvent handles events of no session of ours (gateway.ready, sessions.changed,
// and events of sessions this runtime does not hold).
func (r *Runtime) globalEvent(in inbound) {
	if in.Event == nil {
		return
	}
	switch in.Event.Type {
	case "gateway.ready", "sessions.changed", "skin.changed":
	default:
		r.log.Debug("a gateway event for no session of this runtime", "type", in.Event.Type)
	}
}

// addSecret remembers a value given to Hermes so it is removed from logged lines.
func (r *Runtime) addSecret(v string) {
	if len(v) < 4 {
		return
	}
	r.mu.Lock()
	if !slices.Contains(r.secrets, v) {
		r.secrets = append(r.secrets, v)
	}
	r.mu.Unlock()
}

// redact replaces every secret given to Hermes by [REDACTED].
func (r *Runtime) redact(s string) string {
	r.mu.Lock()
	secrets := r.secrets
	r.mu.Unlock()
	for _, v := range secrets {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, "[REDACTED]")
		}
	}
	return s
}

// redactAny redacts every string inside a JSON-able value by round-tripping it.
func (r *Runtime) redactJSON(raw json.RawMessage) json.RawMessage {
	r.mu.Lock()
	n := len(r.secrets)
	r.mu.Unlock()
	if n == 0 || len(raw) == 0 {
		return raw
	}
	s := string(raw)
	r.mu.Lock()
	for _, v := range r.secrets {
		if b, err := json.Marshal(v); err == nil {
			esc := string(b[1 : len(b)-1])
			s = strings.ReplaceAll(s, esc, "[REDACTED]")
		}
		s = strings.ReplaceAll(s, v, "[REDACTED]")
	}
	r.mu.Unlock()
	return json.RawMessage(s)
}

// sendSessionEvent sends $/session_event for a Talaria session, redacted of the
// secrets given to Hermes as a turn's frames are (a title Hermes made may quote one).
func (r *Runtime) sendSessionEvent(sessionID, event string, data any) {
	r.mu.Lock()
	notify := r.notify
	r.mu.Unlock()
	if notify == nil || sessionID == "" {
		return
	}
	if b, err := json.Marshal(data); err == nil {
		data = r.redactJSON(b)
	}
	if err := notify(protocol.MethodSessionEvent, protocol.SessionEventParams{SessionID: sessionID, Event: event, Data: data}); err != nil {
		r.log.Warn("sending a session event failed", "event", event, "err", err)
	}
}
