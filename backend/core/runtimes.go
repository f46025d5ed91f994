package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// The runtime pool: one supervised sidecar per agent runtime (the built-in one, each
// Hermes profile, each ACP agent), started on first use and restarted when its spec
// changes; the kinds of runtime register themselves (backend/agents).

// KeyDefaultRuntime is the settings key of the runtime new chats use.
const KeyDefaultRuntime = "runtime.default"

// RuntimeSpec says how to start one runtime's sidecar: `talaria sidecar <Args...>` with
// Env added to the app's environment. ID is stable (it is stored on sessions): the kind,
// then for kinds with several runtimes a colon and the instance ("hermes:work",
// "acp:opencode"). Two specs with the same ID and different Args or Env mean the
// runtime's settings changed: its sidecar is restarted.
type RuntimeSpec struct {
	ID string
	// Kind is the sidecar's runtime (protocol.RuntimeBuiltin, RuntimeHermes,
	// RuntimeACP). A built-in kind is sent Talaria's configured model and endpoint;
	// the others bring their own.
	Kind  string
	Label string // shown to the user, e.g. "Hermes Agent (work)"
	Args  []string
	Env   []string // "K=V" entries
	// ReadyWait, when set, is how long a call waits for this runtime's sidecar to come
	// up (supervisor.Config.ReadyWait; 15 s when zero). Agents with a slow first start
	// set more.
	ReadyWait time.Duration
	// HelloTimeout, when set, is how long the sidecar may take to answer rpc.hello
	// (supervisor.Config.HelloTimeout; 10 s when zero): a Hermes sidecar answers once
	// its gateway is up.
	HelloTimeout time.Duration
	// Transport, when set, runs the sidecar somewhere else than this machine (a
	// remote host through ssh: backend/remote); nil runs it here.
	Transport Transport
}

// Transport runs a runtime's sidecar on another machine, speaking the same protocol
// over the transport's stdio (backend/remote: the system ssh client).
type Transport interface {
	// Key identifies the transport's settings (host, port, identity); a spec whose
	// Key changed restarts its sidecar.
	Key() string
	// Command returns the local command (executable and its arguments) that runs
	// `talaria <argv...>` there with env ("K=V" entries) set.
	Command(argv, env []string) (string, []string)
	// Prepare runs before each start of the sidecar (it installs the sidecar there
	// when missing). Its errors may carry Hint() and Permanent() (supervisor.Config).
	Prepare(ctx context.Context) error
}

// Stager is a Transport that copies files there for the sidecar to read (the images a
// message carries as image_file parts name a path the runtime opens).
type Stager interface {
	// Stage makes the file at localPath, whose SHA-256 is sha256 (lowercase hex),
	// readable there and returns its path there.
	Stage(ctx context.Context, localPath, sha256 string) (string, error)
}

// Loser is a Transport whose sidecar's end usually means a lost connection: Lost says
// so, and what to do (supervisor.Config.Lost).
type Loser interface {
	Lost() (why, hint string)
}

// Patient is a Transport whose calls may wait long for an answer (a remote sidecar's
// link answers a call made during a dropped connection once it is back): CallWait
// replaces the supervisor's health-check timeout (supervisor.Config.PingTimeout).
type Patient interface {
	CallWait() time.Duration
}

// Explainer is a Transport that can say why its process ended before the sidecar
// answered (supervisor.Config.ExplainExit): nil when it cannot tell.
type Explainer interface {
	ExplainExit(status int, stderr string) error
}

// Workspacer is a Transport whose chats work in a folder there rather than in the
// chat's folder here (which names a path of this machine).
type Workspacer interface {
	// Workspace returns the absolute folder there that chats work in.
	Workspace(ctx context.Context) (string, error)
}

func transportKey(t Transport) string {
	if t == nil {
		return ""
	}
	return t.Key()
}

// RuntimeOption is one entry of the runtime pickers (Settings and a chat's header).
type RuntimeOption struct {
	ID        string `json:"id"`
	Kind      string `json:"kind"`
	Label     string `json:"label"`
	Detail    string `json:"detail"`    // e.g. "Hermes Agent 0.19.0 · ~/.hermes"
	Available bool   `json:"available"` // it can be started now
	Problem   string `json:"problem"`   // why not, when it cannot
	Hint      string `json:"hint"`      // what to do about it
	Default   bool   `json:"default"`   // new chats use it
}

// RuntimeKind is one kind of runtime (Hermes, ACP agents): what runtimes of the kind
// exist and how to start each. Implementations are registered with
// Core.RegisterRuntimeKind before Start; their methods are called from many
// goroutines and on the turn's admission path, so they answer from what they cached
// (discovery that runs programs belongs in Runtimes, not in Spec).
type RuntimeKind interface {
	// Kind is the id prefix the kind owns (protocol.RuntimeHermes, RuntimeACP).
	Kind() string
	// Runtimes lists the kind's runtimes for the pickers, available or not.
	Runtimes(ctx context.Context) ([]RuntimeOption, error)
	// Spec returns how to start runtime id (whose kind part is Kind()). When it cannot
	// be started it returns a *RuntimeUnavailableError saying why and what to do.
	Spec(ctx context.Context, id string) (RuntimeSpec, error)
}

// RuntimeUnavailableError says a chat's runtime cannot run: unknown, not installed,
// misconfigured. Message says what is wrong, Hint what to do.
type RuntimeUnavailableError struct {
	RuntimeID string
	Message   string
	Hint      string
}

func (e *RuntimeUnavailableError) Error() string {
	msg := e.Message
	if e.Hint != "" {
		msg += " " + e.Hint
	}
	return msg
}

// KindOf returns the kind part of a runtime id ("hermes:work" -> "hermes").
func KindOf(id string) string {
	kind, _, _ := strings.Cut(id, ":")
	return kind
}

// KindRemote is the id prefix of runtimes on another machine (backend/remote):
// "ssh:<host>" runs the built-in runtime there, "ssh:<host>:<id>" runtime id there.
const KindRemote = "ssh"

// AgentKind returns the kind of agent runtime id runs, wherever it runs
// (protocol.RuntimeBuiltin, RuntimeHermes or RuntimeACP for the known kinds): for a
// remote runtime, the kind of the runtime it runs on its host.
func AgentKind(id string) string {
	id = CanonicalRuntime(id)
	if rest, ok := strings.CutPrefix(id, KindRemote+":"); ok {
		_, inner, _ := strings.Cut(rest, ":")
		if inner == "" {
			return protocol.RuntimeBuiltin
		}
		return KindOf(inner)
	}
	return KindOf(id)
}

// CanonicalRuntime maps "" (sessions older than runtimes) to the built-in runtime.
func CanonicalRuntime(id string) string {
	if id == "" {
		return store.RuntimeBuiltin
	}
	return id
}

// runtimePool keeps one supervised sidecar per runtime id. The built-in one is
// Core.Sidecar, started with the app; the others start on first use and restart
// when their spec changes.
type runtimePool struct {
	mu      sync.Mutex
	kinds   map[string]RuntimeKind
	entries map[string]*poolEntry // by runtime id, the built-in one included
	closed  bool
}

type poolEntry struct {
	spec RuntimeSpec
	sup  *supervisor.Supervisor
}

// RegisterRuntimeKind adds a kind of runtime. Call it before Start; a second kind with
// the same Kind() replaces the first.
func (c *Core) RegisterRuntimeKind(k RuntimeKind) {
	c.runtimes.mu.Lock()
	defer c.runtimes.mu.Unlock()
	c.runtimes.kinds[k.Kind()] = k
}

// RuntimeKind returns the registered kind of runtime named kind (nil: none).
func (c *Core) RuntimeKind(kind string) RuntimeKind {
	c.runtimes.mu.Lock()
	defer c.runtimes.mu.Unlock()
	return c.runtimes.kinds[kind]
}

// RuntimeKinds returns the registered kinds of runtime, by Kind().
func (c *Core) RuntimeKinds() []RuntimeKind {
	c.runtimes.mu.Lock()
	kinds := make([]RuntimeKind, 0, len(c.runtimes.kinds))
	for _, k := range c.runtimes.kinds {
		kinds = append(kinds, k)
	}
	c.runtimes.mu.Unlock()
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Kind() < kinds[j].Kind() })
	return kinds
}

// BuiltinSpec is the built-in runtime: the sidecar started with the app.
func BuiltinSpec() RuntimeSpec {
	return RuntimeSpec{ID: store.RuntimeBuiltin, Kind: protocol.RuntimeBuiltin, Label: "Built-in"}
}

// Spec resolves a runtime id to how it starts. Errors: *RuntimeUnavailableError.
func (c *Core) Spec(ctx context.Context, id string) (RuntimeSpec, error) {
	id = CanonicalRuntime(id)
	if id == store.RuntimeBuiltin {
		return BuiltinSpec(), nil
	}
	k := c.RuntimeKind(KindOf(id))
	if k == nil {
		return RuntimeSpec{}, &RuntimeUnavailableError{RuntimeID: id,
			Message: fmt.Sprintf("This chat uses the agent runtime %q, which this version of Talaria does not know.", id),
			Hint:    "Choose another runtime for the chat (its menu in the chat header), or update Talaria."}
	}
	spec, err := k.Spec(ctx, id)
	if err != nil {
		var ru *RuntimeUnavailableError
		if errors.As(err, &ru) {
			return RuntimeSpec{}, err
		}
		return RuntimeSpec{}, &RuntimeUnavailableError{RuntimeID: id, Message: err.Error(),
			Hint: "Check the runtime in Settings, or choose another runtime for the chat."}
	}
	spec.ID = id
	return spec, nil
}

// SupervisorFor returns the running (or starting) sidecar of runtime id and its spec,
// starting it when it is not running yet and restarting it when its spec changed.
// Errors: *RuntimeUnavailableError, also after Close.
func (c *Core) SupervisorFor(ctx context.Context, id string) (*supervisor.Supervisor, RuntimeSpec, error) {
	spec, err := c.Spec(ctx, id)
	if err != nil {
		return nil, spec, err
	}
	if spec.ID == store.RuntimeBuiltin {
		return c.Sidecar, spec, nil
	}
	p := &c.runtimes
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, spec, &RuntimeUnavailableError{RuntimeID: spec.ID, Message: "Talaria is quitting."}
	}
	var old *supervisor.Supervisor
	if e := p.entries[spec.ID]; e != nil {
		if slices.Equal(e.spec.Args, spec.Args) && slices.Equal(e.spec.Env, spec.Env) &&
			transportKey(e.spec.Transport) == transportKey(spec.Transport) {
			p.mu.Unlock()
			return e.sup, spec, nil
		}
		old = e.sup
	}
	sup := c.newSupervisor(spec)
	p.entries[spec.ID] = &poolEntry{spec: spec, sup: sup}
	p.mu.Unlock()
	if old != nil {
		c.Log.Info("runtime settings changed; restarting its agent", "runtime", spec.ID)
		go func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = old.Shutdown(sctx)
		}()
	}
	sup.Start(context.Background())
	return sup, spec, nil
}

// StartedSupervisor returns the sidecar already running for runtime id, without
// resolving its spec again (nil when none was started): answers to a turn's cards go
// to the process that asked.
func (c *Core) StartedSupervisor(id string) *supervisor.Supervisor {
	id = CanonicalRuntime(id)
	if id == store.RuntimeBuiltin {
		return c.Sidecar
	}
	c.runtimes.mu.Lock()
	defer c.runtimes.mu.Unlock()
	if e := c.runtimes.entries[id]; e != nil {
		return e.sup
	}
	return nil
}

// CallerForSession is the sidecar that serves sessionID: the one its live turn runs on,
// else the one started for its runtime, else the built-in one (which answers "not
// waiting" for anything it does not know).
func (c *Core) CallerForSession(ctx context.Context, sessionID string) turn.Caller {
	if caller := c.Runner.CallerOf(sessionID); caller != nil {
		return caller
	}
	if sess, err := c.Store.GetSession(ctx, sessionID); err == nil {
		if sup := c.StartedSupervisor(sess.Runtime); sup != nil {
			return sup
		}
	}
	return c.Sidecar
}

var unsafeLogName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// newSupervisor builds the (stopped) supervisor of a runtime other than the built-in
// one: the same command as the built-in sidecar with the spec's flags, its stderr in
// logs/sidecar-<id>.log, its status published on the bus.
func (c *Core) newSupervisor(spec RuntimeSpec) *supervisor.Supervisor {
	base := c.sidecarConfig
	cfg := base
	cfg.RuntimeID = spec.ID
	cfg.Args = append(slices.Clone(base.Args), spec.Args...)
	cfg.Env = append(slices.Clone(base.Env), spec.Env...)
	if spec.ReadyWait > 0 {
		cfg.ReadyWait = spec.ReadyWait
	}
	if spec.HelloTimeout > 0 {
		cfg.HelloTimeout = spec.HelloTimeout
	}
	if spec.Transport != nil {
		// The env goes there on the command line, and to the local process that
		// reaches there (this binary's `sidecar link`) as it would to a local sidecar.
		cfg.Command, cfg.Args = spec.Transport.Command(cfg.Args, cfg.Env)
		cfg.Prepare = spec.Transport.Prepare
		cfg.FailFast = true
		if e, ok := spec.Transport.(Explainer); ok {
			cfg.ExplainExit = e.ExplainExit
		}
		if l, ok := spec.Transport.(Loser); ok {
			cfg.Lost, cfg.LostHint = l.Lost()
		}
		if p, ok := spec.Transport.(Patient); ok {
			cfg.PingTimeout = p.CallWait()
		}
	}
	if base.LogPath != "" {
		cfg.LogPath = filepath.Join(filepath.Dir(base.LogPath), "sidecar-"+unsafeLogName.ReplaceAllString(spec.ID, "_")+".log")
	}
	sup := supervisor.New(cfg, c.Log.With("component", "supervisor", "runtime", spec.ID))
	sup.OnStatus(func(status supervisor.Status) {
		c.Bus.Publish(bus.Event{Name: bus.EventSidecarStatus, Payload: status})
	})
	runtimeID := spec.ID
	sup.OnNotification(func(method string, params json.RawMessage) {
		go c.sessionEvent(runtimeID, params)
	})
	return sup
}

// sessionEvent applies a runtime's $/session_event: a title the agent gave a chat
// after its turn ended (never over the user's), the agent session it moved to, or the
// chat's agent state (commands, modes, options) changed between turns, for the window.
func (c *Core) sessionEvent(runtimeID string, params json.RawMessage) {
	var ev struct {
		SessionID string          `json:"session_id"`
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(params, &ev); err != nil || ev.SessionID == "" {
		c.Log.Warn("malformed session event from a runtime", "runtime", runtimeID)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sess, err := c.Store.GetSession(ctx, ev.SessionID)
	if err != nil || CanonicalRuntime(sess.Runtime) != runtimeID {
		return // gone, or the chat moved to another runtime since
	}
	switch ev.Event {
	case protocol.EvAgentTitle:
		var d protocol.AgentTitleData
		if json.Unmarshal(ev.Data, &d) != nil || sess.TitleManual {
			return
		}
		title := turn.CleanTitle(d.Title)
		if title == "" || title == sess.Title {
			return
		}
		if err := c.Store.SetTitle(ctx, ev.SessionID, title, false); err == nil {
			c.SessionsChanged()
		}
	case protocol.EvAgentState:
		var st protocol.AgentState
		if json.Unmarshal(ev.Data, &st) != nil {
			c.Log.Warn("malformed agent state from a runtime", "runtime", runtimeID)
			return
		}
		c.Bus.Publish(bus.Event{Name: bus.EventAgentState, Payload: bus.AgentStateData{SessionID: ev.SessionID, State: ev.Data}})
	case protocol.EvAgentSession:
		var d protocol.AgentSessionData
		if json.Unmarshal(ev.Data, &d) == nil && d.AgentSessionID != "" {
			c.Store.SetAgentSession(ctx, ev.SessionID, runtimeID, d.AgentSessionID) //nolint:errcheck // the next result reports it again
		}
	default:
		c.Log.Debug("unknown session event from a runtime", "runtime", runtimeID, "event", ev.Event)
	}
}

// Supervisors returns every started sidecar, the built-in one first, then by
// runtime id.
func (c *Core) Supervisors() []*supervisor.Supervisor {
	c.runtimes.mu.Lock()
	ids := make([]string, 0, len(c.runtimes.entries))
	for id := range c.runtimes.entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := []*supervisor.Supervisor{c.Sidecar}
	for _, id := range ids {
		out = append(out, c.runtimes.entries[id].sup)
	}
	c.runtimes.mu.Unlock()
	return out
}

// StopRuntime shuts down runtime id's sidecar (when one runs) and forgets it, so its
// next use starts a fresh one (a removed ACP agent).
func (c *Core) StopRuntime(id string) {
	c.runtimes.mu.Lock()
	e := c.runtimes.entries[id]
	delete(c.runtimes.entries, id)
	c.runtimes.mu.Unlock()
	if e == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.sup.Shutdown(ctx)
	}()
}

// CloseRuntimes shuts down every started sidecar but the built-in one (Close stops
// that one last) and refuses new ones.
func (c *Core) CloseRuntimes(ctx context.Context) error {
	c.runtimes.mu.Lock()
	c.runtimes.closed = true
	var sups []*supervisor.Supervisor
	for _, e := range c.runtimes.entries {
		sups = append(sups, e.sup)
	}
	c.runtimes.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(sups))
	for i, sup := range sups {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = sup.Shutdown(ctx)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// RuntimeStatuses returns the status of every started runtime's sidecar, the built-in
// one first.
func (c *Core) RuntimeStatuses() []supervisor.Status {
	sups := c.Supervisors()
	out := make([]supervisor.Status, len(sups))
	for i, sup := range sups {
		out[i] = sup.Status()
	}
	return out
}

// DefaultRuntime returns the id of the runtime new chats use (the built-in one unless
// Settings chose another).
func (c *Core) DefaultRuntime(ctx context.Context) (string, error) {
	v, err := c.Setting(ctx, KeyDefaultRuntime, store.RuntimeBuiltin)
	return CanonicalRuntime(v), err
}

// Evict asks runtime id's sidecar (when it runs) to drop its memory of sessionID.
func (c *Core) Evict(ctx context.Context, runtimeID, sessionID string) {
	sup := c.StartedSupervisor(runtimeID)
	if sup == nil {
		return
	}
	var ev protocol.EvictResult
	ectx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := sup.Call(ectx, protocol.MethodChatEvict, protocol.EvictParams{SessionID: sessionID}, nil, &ev); err != nil {
		c.Log.Info("chat.evict failed (the agent restarts empty anyway)", "runtime", runtimeID, "err", err)
	}
}

// EvictDeleted is Evict for a chat the user deleted: with deleteAtAgent (Talaria made
// the agent's session; backend's historyKeptBy says when not) an ACP agent that
// advertises session/delete also deletes agentSessionID (the chat's agent session, ""
// when it has none), best effort; without it the session is only closed. It returns
// the agent's refusal or failure, "" when there was none or nothing was asked; the
// failure is logged and never undoes the deletion.
func (c *Core) EvictDeleted(ctx context.Context, runtimeID, sessionID, agentSessionID string, deleteAtAgent bool) string {
	sup := c.StartedSupervisor(runtimeID)
	if sup == nil {
		return ""
	}
	var ev protocol.EvictResult
	ectx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p := protocol.EvictParams{SessionID: sessionID, Delete: deleteAtAgent, AgentSessionID: agentSessionID}
	if err := sup.Call(ectx, protocol.MethodChatEvict, p, nil, &ev); err != nil {
		c.Log.Info("chat.evict failed (the agent restarts empty anyway)", "runtime", runtimeID, "err", err)
		return ""
	}
	if ev.AgentError != "" {
		c.Log.Warn("the agent did not delete the deleted chat's session", "runtime", runtimeID, "session", sessionID, "err", ev.AgentError)
	}
	return ev.AgentError
}
