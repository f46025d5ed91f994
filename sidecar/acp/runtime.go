// Package acp is the sidecar's ACP runtime: it drives any agent that speaks the Agent
// Client Protocol (https://agentclientprotocol.com; JSON-RPC 2.0 over the agent's
// stdio) behind docs/protocol.md. It starts the agent under a guard process (so no
// agent outlives the sidecar), negotiates capabilities, opens, loads or resumes the
// agent session of each chat, maps session updates to frames (text, reasoning, tool
// cards with diffs, the plan, usage, titles, slash commands, modes and models), turns
// permission requests into approval cards with exactly the agent's options, serves
// the agent's fs/* and terminal/* requests inside the chat's workspace under the same
// rules as the built-in runtime, and stops a turn with session/cancel. An agent that
// exits or breaks the protocol ends the turn with a clear error and is started again
// for the next one. The ACP wire format and types come from
// github.com/coder/acp-go-sdk.
package acp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/mcp"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
	"talaria/sidecar/server"
)

// Defaults of Options.
const (
	DefaultStartTimeout = 90 * time.Second // first starts of Python agents are slow
	DefaultCancelGrace  = 5 * time.Second
)

// Options configure a Runtime.
type Options struct {
	// Agent is the agent's command (required).
	Agent Command
	// Log receives the runtime's logs (default: discard). Never message text.
	Log *slog.Logger
	// Stderr receives the agent's stderr lines, prefixed "[agent] " (default: discard).
	Stderr io.Writer
	// GuardCommand starts the guard (the agent's command line is appended after "--");
	// default: this executable with "sidecar acp-guard". GuardEnv is added to the
	// guard's environment (the guard removes TALARIA_ACP_GUARD from the agent's).
	GuardCommand []string
	GuardEnv     []string
	// StartTimeout bounds starting the agent and its initialize answer
	// (DefaultStartTimeout when 0).
	StartTimeout time.Duration
	// CancelGrace is how long a stopped turn waits for the agent to confirm (its prompt
	// answer with stopReason cancelled) before the agent is treated as hung and ended
	// (DefaultCancelGrace when 0).
	CancelGrace time.Duration
	// SilenceNotice is how long a turn's agent may send nothing (no card waiting, no
	// terminal running) before the chat is told so (DefaultSilenceNotice when 0).
	SilenceNotice time.Duration
	// ClientVersion is the version sent in initialize's clientInfo.
	ClientVersion string
	// Secrets are values (API keys from the agent's environment settings) replaced by
	// [REDACTED] in the agent's stderr lines. `talaria sidecar` fills it from the
	// variables its --secret-env flags name (the host names the agent's secret
	// environment variables; backend/acp.go).
	Secrets []string
	// SandboxStatus says whether commands can be confined (default sandbox.Check); when
	// not, a terminal/create asks before running unconfined.
	SandboxStatus func() sandbox.Status
	// Transcript, when set, receives every ACP line exchanged with the agent, prefixed
	// "> " (to the agent) or "< " (from it): for recording test fixtures. It carries
	// message text; never set it in normal use.
	Transcript io.Writer
}

// Runtime is the ACP runtime. It is safe for concurrent use; it keeps one agent
// process, started on first use and again after it dies.
type Runtime struct {
	opts   Options
	log    *slog.Logger
	sdkLog *slog.Logger
	guard  []string

	// secretMu guards mcpSecrets: the secret values of the MCP servers' settings the
	// chats gave the agent (session/new's mcpServers), redacted from its stderr beside
	// opts.Secrets. Read by the stderr reader, so not under mu.
	secretMu   sync.RWMutex
	mcpSecrets map[string]bool

	mu       sync.Mutex
	agent    *agentConn
	starting *startCall
	gen      int
	lastInit *sdk.InitializeResponse
	chats    map[string]*chat // by Talaria session id
	byACP    map[string]*chat // by agent session id
	// early: the chat-state updates (commands, mode, options, title) an agent sent for
	// a session before its session/new (or load, resume) answer was read and the
	// session bound to its chat; applied when it is (bind). An agent may send them at
	// once after answering (OpenCode: on the next tick), and the SDK hands the
	// notification over on another goroutine than the answer.
	early map[string][]sdk.SessionUpdate
	// notify sends $/session_event (SetNotify): a chat's state changed outside a turn.
	notify   func(method string, params any) error
	waiters  map[string]*waiter
	sessions map[string]*memory // per Talaria session: YOLO, grants
	// selfModes: per mode id of the agent ("" without modes), why it is known to act
	// without asking in it (seen doing so); shared with every chat's state.
	selfModes map[string]string
	terms     *terminals
	closed    bool
}

type startCall struct {
	done chan struct{}
	a    *agentConn
	err  error
}

// memory is what the runtime remembers of a session between turns.
type memory struct {
	yolo   bool
	grants map[string]bool // dangerous-pattern keys allowed for the rest of the session
	// agentAlways: ACP tool kinds whose permission request the user answered with an
	// allow_always option; the agent may no longer ask for them.
	agentAlways map[string]bool
}

// New returns a Runtime; the agent starts on the first call that needs it.
func New(opts Options) *Runtime {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.StartTimeout <= 0 {
		opts.StartTimeout = DefaultStartTimeout
	}
	if opts.CancelGrace <= 0 {
		opts.CancelGrace = DefaultCancelGrace
	}
	guard := opts.GuardCommand
	if len(guard) == 0 {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		guard = []string{exe, "sidecar", "acp-guard"}
	}
	if opts.SandboxStatus == nil {
		opts.SandboxStatus = sandbox.Check
	}
	r := &Runtime{opts: opts, log: opts.Log, sdkLog: sdkLogger(opts.Log), guard: guard,
		chats: map[string]*chat{}, byACP: map[string]*chat{}, early: map[string][]sdk.SessionUpdate{}, waiters: map[string]*waiter{}, sessions: map[string]*memory{},
		selfModes: map[string]string{}}
	r.terms = newTerminals(r.log)
	return r
}

// Info implements server.Runtime: runtime "acp"; the agent version is the agent's
// "name version" once it has answered initialize. Features: agent_session (sessions
// are the agent's own, resumed by id) and approval_choices. Sandbox is not available:
// an ACP agent runs its own tools' commands itself, unconfined (OpenCode's bash,
// Hermes's terminal), so the window must not show the chat as confined; the reason
// says that only what the agent runs through Talaria (terminal/*) is confined, and
// by what; Agent names the agent and TerminalMechanism what confines terminal/*, so
// the window can say which actions Talaria approves and which the agent runs on its
// own. (terminal/* itself uses the real status: Options.SandboxStatus.)
func (r *Runtime) Info() server.Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.opts.SandboxStatus()
	name := r.agent.name(r.opts.Agent)
	reason := name + " runs the commands of its own tools itself, outside Talaria's sandbox"
	if st.Available {
		reason += fmt.Sprintf(" (only commands it runs through Talaria's terminal are confined, by %s)", st.Mechanism)
	} else if st.Reason != "" {
		reason += fmt.Sprintf(" (and the sandbox is not available here either: %s)", st.Reason)
	}
	info := server.Info{Name: protocol.RuntimeACP, Features: []string{protocol.FeatureAgentSession, protocol.FeatureApprovalChoices},
		Sandbox: &protocol.SandboxStatus{Available: false, Mechanism: "acp", Reason: reason, Agent: name,
			Hint: "Set the agent's own permissions to ask before it runs commands or edits files: its requests show here as approval cards."}}
	if st.Available {
		info.Sandbox.TerminalMechanism = st.Mechanism
	}
	if r.lastInit != nil && r.lastInit.AgentInfo != nil {
		info.AgentVersion = strings.TrimSpace(r.lastInit.AgentInfo.Name + " " + r.lastInit.AgentInfo.Version)
	}
	return info
}

// helloWait is how long rpc.hello waits for the agent's first start (server.Starter):
// long enough for most agents to report their version (OpenCode takes 5-10 s on a
// loaded machine), short of the 30 s the host gives an ACP sidecar's hello. A slower
// agent is waited for by the first turn instead. (A variable: the package's tests,
// whose binary is also the sidecar they drive, wait for the agent as long as for
// anything else, so what their hello reports does not depend on the machine's speed.)
var helloWait = 20 * time.Second

// Ready implements server.Starter: rpc.hello waits (at most helloWait) for the agent's
// first start, so its version is in the answer; an agent that cannot start at all
// (no such command, it exits at once, another ACP version) fails rpc.hello with that
// error, which the app shows as the runtime's status with what to do.
func (r *Runtime) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, helloWait)
	defer cancel()
	_, err := r.ensureAgent(ctx)
	if err != nil && ctx.Err() != nil {
		return nil // still starting: the first turn waits for it
	}
	return err
}

// Disabled implements server.Starter: every method is served.
func (r *Runtime) Disabled() []string { return nil }

// Start begins starting the agent in the background (so rpc.hello's agent version is
// known soon and the first turn does not wait for it); failures are reported by the
// first call that needs the agent.
func (r *Runtime) Start() {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.opts.StartTimeout+time.Second)
		defer cancel()
		if _, err := r.ensureAgent(ctx); err != nil {
			r.log.Warn("the agent did not start", "err", err)
		}
	}()
}

// Methods implements server.Runtime.
func (r *Runtime) Methods() map[string]server.Handler {
	bind := func(call *server.Call, v any) error { return call.Bind(v) }
	return map[string]server.Handler{
		protocol.MethodChatStart: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ChatStartParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.Chat(ctx, p, call.Emit)
		},
		protocol.MethodAgentInfo: func(ctx context.Context, call *server.Call) (any, error) {
			return r.AgentInfo(ctx)
		},
		protocol.MethodSessionState: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.SessionRefParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.SessionState(ctx, p)
		},
		protocol.MethodSessionSetMode: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.SetOptionParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.SetChoice(ctx, "mode", p)
		},
		protocol.MethodSessionSetModel: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.SetOptionParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.SetChoice(ctx, "model", p)
		},
		protocol.MethodSessionSetOption: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.SetOptionParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.SetChoice(ctx, "option", p)
		},
		protocol.MethodApprovalRespond: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ApprovalRespondParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.respondApproval(p)
		},
		protocol.MethodClarifyRespond: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ClarifyRespondParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.respondClarify(p)
		},
		protocol.MethodApprovalYolo: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.ApprovalYoloParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			if p.SessionID == "" {
				return nil, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "approval.yolo needs a session_id")
			}
			return protocol.ApprovalYoloResult{YoloEnabled: p.Enabled, Released: r.setYolo(p.SessionID, p.Enabled)}, nil
		},
		protocol.MethodAgentAuthenticate: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.AuthenticateParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.Authenticate(ctx, p)
		},
		protocol.MethodAgentLogout: func(ctx context.Context, call *server.Call) (any, error) {
			return r.Logout(ctx)
		},
		protocol.MethodAgentSessions: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.AgentSessionsParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.Sessions(ctx, p)
		},
		protocol.MethodChatEvict: func(ctx context.Context, call *server.Call) (any, error) {
			var p protocol.EvictParams
			if err := bind(call, &p); err != nil {
				return nil, err
			}
			return r.evict(ctx, p), nil
		},
	}
}

// Close ends the agent (after every run has replied, see server.Runtime): the agent
// sessions its chats have open are closed when it offers session/close, then its
// process group is asked to stop, then killed. It implements io.Closer.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closed = true
	a := r.agent
	var open []string
	if a != nil && a.init.AgentCapabilities.SessionCapabilities.Close != nil {
		for _, c := range r.chats {
			if c.agentSID != "" && c.gen == a.gen && c.turn == nil {
				open = append(open, c.agentSID)
			}
		}
	}
	r.mu.Unlock()
	r.terms.closeAll()
	if len(open) > 0 && a.alive() {
		// The agent offers session/close: its open sessions are closed before it stops
		// (within a second in all; it is stopped anyway).
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		for _, sid := range open {
			if _, err := a.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: sdk.SessionId(sid)}); err != nil {
				r.log.Debug("session/close failed", "err", requestMessage(err))
			}
		}
		cancel()
	}
	if a != nil {
		a.fail(errors.New("the sidecar is stopping"))
		a.proc.terminate(2 * time.Second)
	}
	return nil
}

// ensureAgent returns the running agent, starting one when there is none (or it
// died). Concurrent callers share one start; a caller that gives up does not stop it.
func (r *Runtime) ensureAgent(ctx context.Context) (*agentConn, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, protocol.NewError(protocol.CodeApplication, protocol.CondAgentUnavailable, "the sidecar is stopping")
	}
	if a := r.agent; a != nil && a.alive() {
		r.mu.Unlock()
		return a, nil
	}
	if r.starting == nil {
		r.gen++
		clear(r.early) // the previous process's sessions are gone
		sc := &startCall{done: make(chan struct{})}
		r.starting = sc
		gen := r.gen
		go func() {
			a, err := r.spawn(gen)
			r.mu.Lock()
			sc.a, sc.err = a, err
			if err == nil {
				r.agent = a
				r.lastInit = &a.init
			}
			r.starting = nil
			r.mu.Unlock()
			close(sc.done)
			if a != nil {
				go r.watch(a)
			}
		}()
	}
	sc := r.starting
	r.mu.Unlock()
	select {
	case <-sc.done:
		return sc.a, sc.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// watch logs an agent's death and drops its terminals.
func (r *Runtime) watch(a *agentConn) {
	<-a.dead
	err := a.reason()
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if !closed {
		r.log.Warn("the agent stopped; it is started again for the next turn", "generation", a.gen, "err", err)
	}
}

// AgentInfo runs agent.info: the agent's answer to initialize (starting it when
// needed).
func (r *Runtime) AgentInfo(ctx context.Context) (protocol.AgentInfoResult, error) {
	a, err := r.ensureAgent(ctx)
	if err != nil {
		return protocol.AgentInfoResult{}, err
	}
	in := a.init
	res := protocol.AgentInfoResult{ProtocolVersion: int(in.ProtocolVersion), PID: a.proc.pid, Command: r.opts.Agent.Line(), AuthMethods: []protocol.AuthMethod{}}
	if in.AgentInfo != nil {
		res.Name, res.Version, res.Title = in.AgentInfo.Name, in.AgentInfo.Version, deref(in.AgentInfo.Title)
	}
	if res.Name == "" {
		res.Name = agentLabel(r.opts.Agent)
	}
	c := in.AgentCapabilities
	res.Capabilities = protocol.AgentCaps{
		LoadSession: c.LoadSession, ResumeSession: c.SessionCapabilities.Resume != nil,
		CloseSession: c.SessionCapabilities.Close != nil, ListSessions: c.SessionCapabilities.List != nil, Logout: c.Auth.Logout != nil,
		Images: c.PromptCapabilities.Image, Audio: c.PromptCapabilities.Audio, EmbeddedContext: c.PromptCapabilities.EmbeddedContext,
		MCPHTTP: c.McpCapabilities.Http, MCPSSE: c.McpCapabilities.Sse,
	}
	for _, m := range in.AuthMethods {
		res.AuthMethods = append(res.AuthMethods, authMethod(m))
	}
	return res, nil
}

func authMethod(m sdk.AuthMethod) protocol.AuthMethod {
	switch {
	case m.Agent != nil:
		return protocol.AuthMethod{ID: m.Agent.Id, Name: m.Agent.Name, Description: deref(m.Agent.Description)}
	case m.EnvVar != nil:
		return protocol.AuthMethod{ID: m.EnvVar.Id, Name: m.EnvVar.Name, Description: deref(m.EnvVar.Description)}
	case m.Terminal != nil:
		return protocol.AuthMethod{ID: m.Terminal.Id, Name: m.Terminal.Name, Description: deref(m.Terminal.Description)}
	}
	return protocol.AuthMethod{}
}

// SessionState runs session.state: the chat's agent session, opened (or reopened)
// when needed, and what it offers.
func (r *Runtime) SessionState(ctx context.Context, p protocol.SessionRefParams) (protocol.AgentState, error) {
	if err := checkRef(p); err != nil {
		return protocol.AgentState{}, err
	}
	a, err := r.ensureAgent(ctx)
	if err != nil {
		return protocol.AgentState{}, err
	}
	r.mu.Lock()
	c := r.chats[p.SessionID]
	busy := c != nil && c.turn != nil
	r.mu.Unlock()
	if !busy {
		if c, _, err = r.openSession(ctx, a, p, nil); err != nil {
			return protocol.AgentState{}, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return c.stateLocked(), nil
}

// SetChoice runs session.set_mode, session.set_model and session.set_option.
func (r *Runtime) SetChoice(ctx context.Context, which string, p protocol.SetOptionParams) (protocol.AgentState, error) {
	if err := checkRef(p.SessionRefParams); err != nil {
		return protocol.AgentState{}, err
	}
	if which == "option" && p.OptionID == "" {
		return protocol.AgentState{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "session.set_option needs an option_id")
	}
	a, err := r.ensureAgent(ctx)
	if err != nil {
		return protocol.AgentState{}, err
	}
	r.mu.Lock()
	c := r.chats[p.SessionID]
	live := c != nil && c.turn != nil && c.gen == a.gen
	r.mu.Unlock()
	if !live {
		if c, _, err = r.openSession(ctx, a, p.SessionRefParams, nil); err != nil {
			return protocol.AgentState{}, err
		}
	}
	if err := r.setChoice(ctx, a, c, which, p.OptionID, p.Value); err != nil {
		return protocol.AgentState{}, err
	}
	r.mu.Lock()
	st := c.stateLocked()
	t := c.turn
	r.mu.Unlock()
	if t != nil {
		t.send(protocol.EvAgentState, st)
	}
	return st, nil
}

func checkRef(p protocol.SessionRefParams) error {
	if p.SessionID == "" {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "a session_id is needed")
	}
	return checkWorkspace(p.Workspace)
}

// checkWorkspace refuses a workspace that is not an absolute path of a folder.
func checkWorkspace(ws string) error {
	if ws == "" || !filepath.IsAbs(ws) {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("The workspace %q is not an absolute folder path: choose the workspace folder in Settings.", ws))
	}
	st, err := os.Stat(ws)
	if err != nil || !st.IsDir() {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("The workspace folder %s does not exist: choose an existing folder in Settings.", ws))
	}
	return nil
}

// evict forgets a session: its YOLO and grants, and its agent session (closed at the
// agent when it offers session/close). With p.Delete (the chat was deleted) the agent
// session is also deleted at the agent when it advertises sessionCapabilities.delete
// (session/delete; the bound one, else p.AgentSessionID), only while the agent runs:
// no agent is started for it. A refused or failed delete is logged and returned as
// AgentError; nothing is sent to an agent that does not advertise it.
func (r *Runtime) evict(ctx context.Context, p protocol.EvictParams) protocol.EvictResult {
	sessionID := p.SessionID
	r.mu.Lock()
	_, had := r.sessions[sessionID]
	delete(r.sessions, sessionID)
	c := r.chats[sessionID]
	gen := 0
	if c != nil {
		gen = c.gen // unbindLocked clears it
	}
	if c != nil && c.turn == nil {
		delete(r.chats, sessionID)
		r.unbindLocked(c)
		had = true
	}
	a := r.agent
	r.mu.Unlock()
	r.terms.releaseSession(sessionID)
	res := protocol.EvictResult{Evicted: had}
	if a == nil || !a.alive() {
		return res
	}
	sid := ""
	if c != nil && c.turn == nil && c.agentSID != "" && a.gen == gen {
		sid = c.agentSID
		if a.init.AgentCapabilities.SessionCapabilities.Close != nil {
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			if _, err := a.conn.CloseSession(cctx, sdk.CloseSessionRequest{SessionId: sdk.SessionId(c.agentSID)}); err != nil {
				r.log.Debug("session/close failed", "err", requestMessage(err))
			}
			cancel()
		}
	}
	if sid == "" && (c == nil || c.turn == nil) {
		sid = p.AgentSessionID
	}
	if p.Delete && sid != "" && a.side.deletes() {
		dctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := a.side.call(dctx, a.dead, "session/delete", deleteSessionRequest{SessionID: sid}); err != nil {
			r.log.Warn("session/delete failed; the chat is deleted, the agent keeps its session", "err", err)
			res.AgentError = fmt.Sprintf("%s did not delete its session: %v", a.name(r.opts.Agent), err)
		}
	}
	return res
}

// deadError is the error of a call that found the agent dead: agent_unavailable,
// saying how it ended and that the next turn starts it again.
func (r *Runtime) deadError(a *agentConn, when string) *protocol.Error {
	name := a.name(r.opts.Agent)
	return agentError(protocol.CondAgentUnavailable, fmt.Sprintf("%s stopped %s: %v", name, when, a.reason()),
		"Talaria starts it again when you send your next message; if this repeats, check the agent's log in Diagnostics.")
}

// requestError is the error of an ACP request the agent refused: credential_missing
// when it asks to sign in, else agent_error with its words.
func (r *Runtime) requestError(a *agentConn, what string, err error) *protocol.Error {
	name := a.name(r.opts.Agent)
	if isAuthRequired(err) {
		hint := authHint(a)
		return agentError(protocol.CondCredentialMissing, fmt.Sprintf("%s needs you to sign in (%s)", name, requestMessage(err)), hint)
	}
	return agentError(protocol.CondAgentError, fmt.Sprintf("%s %s: %s", name, what, requestMessage(err)), "")
}

func (r *Runtime) sandboxStatus() sandbox.Status { return r.opts.SandboxStatus() }

// redactLine replaces the configured secrets, and those of the MCP servers handed to
// the agent, in an agent stderr line.
func (r *Runtime) redactLine(s string) string {
	for _, v := range r.secrets() {
		s = strings.ReplaceAll(s, v, "[REDACTED]")
	}
	return s
}

// secrets are the values redactLine replaces (at least 4 bytes each), longest first,
// so a secret that contains another is replaced whole.
func (r *Runtime) secrets() []string {
	var out []string
	for _, v := range r.opts.Secrets {
		if len(v) >= 4 {
			out = append(out, v)
		}
	}
	r.secretMu.RLock()
	for v := range r.mcpSecrets {
		out = append(out, v)
	}
	r.secretMu.RUnlock()
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// secretsJSON are the secrets redactLine replaces, each as it appears inside a JSON
// string (json.Marshal's escaping); nil when there are none.
func (r *Runtime) secretsJSON() [][]byte {
	var out [][]byte
	for _, v := range r.secrets() {
		b, _ := json.Marshal(v)
		out = append(out, b[1:len(b)-1])
	}
	return out
}

// redactingEmit is emit with every frame's data redacted of the secrets redactLine
// knows (as JSON: the data is encoded here, and sent as that encoding). With none
// known, frames go through as they are.
func (r *Runtime) redactingEmit(emit server.EmitFunc) server.EmitFunc {
	return func(event string, data any) error { return emit(event, r.redactData(data)) }
}

// redactData is data as JSON with the secrets the runtime knows replaced by
// [REDACTED] (a json.RawMessage), or data itself when none is known (or it does not
// encode).
func (r *Runtime) redactData(data any) any {
	secrets := r.secretsJSON()
	if len(secrets) == 0 {
		return data
	}
	b, err := json.Marshal(data)
	if err != nil {
		return data
	}
	for _, s := range secrets {
		b = bytes.ReplaceAll(b, s, []byte("[REDACTED]"))
	}
	return json.RawMessage(b)
}

// redactJSONWith redacts *v of secrets (as secretsJSON gives them) through its JSON
// encoding; *v is left as it is when none occurs. Errors: an encoding error (none for
// the protocol's types).
func redactJSONWith[T any](secrets [][]byte, v *T) error {
	if len(secrets) == 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	found := false
	for _, s := range secrets {
		if bytes.Contains(b, s) {
			found = true
			b = bytes.ReplaceAll(b, s, []byte("[REDACTED]"))
		}
	}
	if !found {
		return nil
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		return err
	}
	*v = out
	return nil
}

// redactJSON is redactJSONWith of the runtime's secrets.
func (r *Runtime) redactJSON(res *protocol.ChatResult) error {
	return redactJSONWith(r.secretsJSON(), res)
}

// learnMCPSecrets adds the secret values of servers' settings (mcp.Secrets: the
// secret env and headers, an Authorization header) to what redactLine replaces,
// before they are handed to the agent.
func (r *Runtime) learnMCPSecrets(servers []protocol.MCPServer) {
	r.secretMu.Lock()
	defer r.secretMu.Unlock()
	for _, s := range servers {
		for _, v := range mcp.Secrets(s) {
			if r.mcpSecrets == nil {
				r.mcpSecrets = map[string]bool{}
			}
			r.mcpSecrets[v] = true
		}
	}
}

// RuntimeName is the --runtime value and rpc.hello's runtime of this package.
const RuntimeName = protocol.RuntimeACP

// Early updates kept per session, and sessions with early updates, at most.
const (
	maxEarlyUpdates  = 16
	maxEarlySessions = 8
)

// keepEarly keeps state update u of agent session sid, not bound to a chat yet, for
// bind to apply; false when it is not kept (another agent process's, or the bounds).
func (r *Runtime) keepEarly(a *agentConn, sid string, u sdk.SessionUpdate) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if a.gen != r.gen {
		return false
	}
	q, ok := r.early[sid]
	if !ok && len(r.early) >= maxEarlySessions {
		return false
	}
	if len(q) >= maxEarlyUpdates {
		q = q[1:]
	}
	r.early[sid] = append(q, u)
	return true
}

// applyEarlyLocked applies the state updates kept for c's agent session before it
// was bound (keepEarly), in the order they came. r.mu must be held.
func (r *Runtime) applyEarlyLocked(c *chat) {
	for _, u := range r.early[c.agentSID] {
		c.applyStateLocked(u, true)
	}
	delete(r.early, c.agentSID)
}

// SetNotify is called by the server with the function that sends $/session_event.
func (r *Runtime) SetNotify(notify func(method string, params any) error) {
	r.mu.Lock()
	r.notify = notify
	r.mu.Unlock()
}

// sendSessionEvent sends $/session_event for Talaria session sessionID (a chat's
// state that changed outside a turn), redacted of the secrets the runtime knows as a
// turn's frames are; nothing without a notifier.
func (r *Runtime) sendSessionEvent(sessionID, event string, data any) {
	data = r.redactData(data)
	r.mu.Lock()
	notify := r.notify
	r.mu.Unlock()
	if notify == nil || sessionID == "" {
		return
	}
	if err := notify(protocol.MethodSessionEvent, protocol.SessionEventParams{SessionID: sessionID, Event: event, Data: data}); err != nil {
		r.log.Warn("sending a session event failed", "event", event, "err", err)
	}
}
