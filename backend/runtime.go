package backend

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

// keyDefaultRuntime is the settings key of the runtime new chats use.
const keyDefaultRuntime = "runtime.default"

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
// Service.RegisterRuntimeKind before Start; their methods are called from many
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

// runtimeKindOf returns the kind part of a runtime id ("hermes:work" -> "hermes").
func runtimeKindOf(id string) string {
	kind, _, _ := strings.Cut(id, ":")
	return kind
}

// canonicalRuntime maps "" (sessions older than runtimes) to the built-in runtime.
func canonicalRuntime(id string) string {
	if id == "" {
		return store.RuntimeBuiltin
	}
	return id
}

// runtimePool keeps one supervised sidecar per runtime id. The built-in one is
// Service.Sidecar, started with the app; the others start on first use and restart
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
func (s *Service) RegisterRuntimeKind(k RuntimeKind) {
	s.runtimes.mu.Lock()
	defer s.runtimes.mu.Unlock()
	s.runtimes.kinds[k.Kind()] = k
}

func (s *Service) runtimeKind(kind string) RuntimeKind {
	s.runtimes.mu.Lock()
	defer s.runtimes.mu.Unlock()
	return s.runtimes.kinds[kind]
}

// builtinSpec is the built-in runtime: the sidecar started with the app.
func builtinSpec() RuntimeSpec {
	return RuntimeSpec{ID: store.RuntimeBuiltin, Kind: protocol.RuntimeBuiltin, Label: "Built-in"}
}

// runtimeSpec resolves a runtime id to how it starts. Errors: *RuntimeUnavailableError.
func (s *Service) runtimeSpec(ctx context.Context, id string) (RuntimeSpec, error) {
	id = canonicalRuntime(id)
	if id == store.RuntimeBuiltin {
		return builtinSpec(), nil
	}
	k := s.runtimeKind(runtimeKindOf(id))
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

// supervisorFor returns the running (or starting) sidecar of runtime id and its spec,
// starting it when it is not running yet and restarting it when its spec changed.
// Errors: *RuntimeUnavailableError, also after Close.
func (s *Service) supervisorFor(ctx context.Context, id string) (*supervisor.Supervisor, RuntimeSpec, error) {
	spec, err := s.runtimeSpec(ctx, id)
	if err != nil {
		return nil, spec, err
	}
	if spec.ID == store.RuntimeBuiltin {
		return s.Sidecar, spec, nil
	}
	p := &s.runtimes
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, spec, &RuntimeUnavailableError{RuntimeID: spec.ID, Message: "Talaria is quitting."}
	}
	var old *supervisor.Supervisor
	if e := p.entries[spec.ID]; e != nil {
		if slices.Equal(e.spec.Args, spec.Args) && slices.Equal(e.spec.Env, spec.Env) {
			p.mu.Unlock()
			return e.sup, spec, nil
		}
		old = e.sup
	}
	sup := s.newSupervisor(spec)
	p.entries[spec.ID] = &poolEntry{spec: spec, sup: sup}
	p.mu.Unlock()
	if old != nil {
		s.Log.Info("runtime settings changed; restarting its agent", "runtime", spec.ID)
		go func() {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = old.Shutdown(sctx)
		}()
	}
	sup.Start(context.Background())
	return sup, spec, nil
}

// startedSupervisor returns the sidecar already running for runtime id, without
// resolving its spec again (nil when none was started): answers to a turn's cards go
// to the process that asked.
func (s *Service) startedSupervisor(id string) *supervisor.Supervisor {
	id = canonicalRuntime(id)
	if id == store.RuntimeBuiltin {
		return s.Sidecar
	}
	s.runtimes.mu.Lock()
	defer s.runtimes.mu.Unlock()
	if e := s.runtimes.entries[id]; e != nil {
		return e.sup
	}
	return nil
}

// callerForSession is the sidecar that serves sessionID: the one its live turn runs on,
// else the one started for its runtime, else the built-in one (which answers "not
// waiting" for anything it does not know).
func (s *Service) callerForSession(ctx context.Context, sessionID string) turn.Caller {
	if c := s.Runner.CallerOf(sessionID); c != nil {
		return c
	}
	if sess, err := s.Store.GetSession(ctx, sessionID); err == nil {
		if sup := s.startedSupervisor(sess.Runtime); sup != nil {
			return sup
		}
	}
	return s.Sidecar
}

var unsafeLogName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// newSupervisor builds the (stopped) supervisor of a runtime other than the built-in
// one: the same command as the built-in sidecar with the spec's flags, its stderr in
// logs/sidecar-<id>.log, its status published on the bus.
func (s *Service) newSupervisor(spec RuntimeSpec) *supervisor.Supervisor {
	base := s.sidecarConfig
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
	if base.LogPath != "" {
		cfg.LogPath = filepath.Join(filepath.Dir(base.LogPath), "sidecar-"+unsafeLogName.ReplaceAllString(spec.ID, "_")+".log")
	}
	sup := supervisor.New(cfg, s.Log.With("component", "supervisor", "runtime", spec.ID))
	sup.OnStatus(func(status supervisor.Status) {
		s.Bus.Publish(bus.Event{Name: bus.EventSidecarStatus, Payload: status})
	})
	runtimeID := spec.ID
	sup.OnNotification(func(method string, params json.RawMessage) {
		go s.sessionEvent(runtimeID, params)
	})
	return sup
}

// sessionEvent applies a runtime's $/session_event: a title the agent gave a chat
// after its turn ended (never over the user's), or the agent session it moved to.
func (s *Service) sessionEvent(runtimeID string, params json.RawMessage) {
	var ev struct {
		SessionID string          `json:"session_id"`
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(params, &ev); err != nil || ev.SessionID == "" {
		s.Log.Warn("malformed session event from a runtime", "runtime", runtimeID)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sess, err := s.Store.GetSession(ctx, ev.SessionID)
	if err != nil || canonicalRuntime(sess.Runtime) != runtimeID {
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
		if err := s.Store.SetTitle(ctx, ev.SessionID, title, false); err == nil {
			s.sessionsChanged()
		}
	case protocol.EvAgentSession:
		var d protocol.AgentSessionData
		if json.Unmarshal(ev.Data, &d) == nil && d.AgentSessionID != "" {
			s.Store.SetAgentSession(ctx, ev.SessionID, runtimeID, d.AgentSessionID) //nolint:errcheck // the next result reports it again
		}
	default:
		s.Log.Debug("unknown session event from a runtime", "runtime", runtimeID, "event", ev.Event)
	}
}

// runtimeSupervisors returns every started sidecar, the built-in one first, then by
// runtime id.
func (s *Service) runtimeSupervisors() []*supervisor.Supervisor {
	s.runtimes.mu.Lock()
	ids := make([]string, 0, len(s.runtimes.entries))
	for id := range s.runtimes.entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := []*supervisor.Supervisor{s.Sidecar}
	for _, id := range ids {
		out = append(out, s.runtimes.entries[id].sup)
	}
	s.runtimes.mu.Unlock()
	return out
}

// stopRuntime shuts down runtime id's sidecar (when one runs) and forgets it, so its
// next use starts a fresh one (a removed ACP agent).
func (s *Service) stopRuntime(id string) {
	s.runtimes.mu.Lock()
	e := s.runtimes.entries[id]
	delete(s.runtimes.entries, id)
	s.runtimes.mu.Unlock()
	if e == nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.sup.Shutdown(ctx)
	}()
}

// closeRuntimes shuts down every started sidecar but the built-in one (Close stops
// that one last) and refuses new ones.
func (s *Service) closeRuntimes(ctx context.Context) error {
	s.runtimes.mu.Lock()
	s.runtimes.closed = true
	var sups []*supervisor.Supervisor
	for _, e := range s.runtimes.entries {
		sups = append(sups, e.sup)
	}
	s.runtimes.mu.Unlock()
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
func (s *Service) RuntimeStatuses() []supervisor.Status {
	sups := s.runtimeSupervisors()
	out := make([]supervisor.Status, len(sups))
	for i, sup := range sups {
		out[i] = sup.Status()
	}
	return out
}

// RestartRuntime restarts the sidecar of runtime id ("" or "builtin": the built-in
// one). A runtime that was never started is started. Errors: *RuntimeUnavailableError.
func (s *Service) RestartRuntime(ctx context.Context, id string) error {
	if sup := s.startedSupervisor(id); sup != nil {
		sup.Restart()
		return nil
	}
	_, _, err := s.supervisorFor(ctx, id)
	return err
}

// DefaultRuntime returns the id of the runtime new chats use (the built-in one unless
// Settings chose another).
func (s *Service) DefaultRuntime(ctx context.Context) (string, error) {
	v, err := s.setting(ctx, keyDefaultRuntime, store.RuntimeBuiltin)
	return canonicalRuntime(v), err
}

// ListRuntimes returns what the runtime pickers offer: the built-in runtime, then each
// registered kind's runtimes, the default one marked. A kind whose discovery fails is
// listed as one unavailable entry saying why.
func (s *Service) ListRuntimes(ctx context.Context) ([]RuntimeOption, error) {
	def, err := s.DefaultRuntime(ctx)
	if err != nil {
		return nil, err
	}
	out := []RuntimeOption{{ID: store.RuntimeBuiltin, Kind: protocol.RuntimeBuiltin, Label: "Built-in",
		Detail: "Talaria's own agent, for any OpenAI-compatible endpoint", Available: true}}
	s.runtimes.mu.Lock()
	kinds := make([]RuntimeKind, 0, len(s.runtimes.kinds))
	for _, k := range s.runtimes.kinds {
		kinds = append(kinds, k)
	}
	s.runtimes.mu.Unlock()
	sort.Slice(kinds, func(i, j int) bool { return kinds[i].Kind() < kinds[j].Kind() })
	for _, k := range kinds {
		opts, err := k.Runtimes(ctx)
		if err != nil {
			out = append(out, RuntimeOption{ID: k.Kind(), Kind: k.Kind(), Label: k.Kind(), Problem: err.Error(),
				Hint: "See the sidecar log in the logs folder."})
			continue
		}
		for _, o := range opts {
			o.Kind = k.Kind()
			out = append(out, o)
		}
	}
	for i := range out {
		out[i].Default = out[i].ID == def
	}
	return out, nil
}

// SetDefaultRuntime makes runtime id the one new chats use. Errors:
// *RuntimeUnavailableError when no runtime of that id is known or it cannot run now.
func (s *Service) SetDefaultRuntime(ctx context.Context, id string) error {
	id = canonicalRuntime(id)
	if _, err := s.runtimeSpec(ctx, id); err != nil {
		return err
	}
	return s.Store.SetSetting(ctx, keyDefaultRuntime, id)
}

// SetSessionRuntime moves an idle chat to runtime id; the agent-side session of the
// old runtime is forgotten (the new runtime starts its own from the transcript), and
// the old runtime drops what it kept in memory for the chat. Errors:
// *RuntimeUnavailableError; *store.BusyError while a turn runs; store.ErrNotFound.
func (s *Service) SetSessionRuntime(ctx context.Context, sessionID, id string) (store.Session, error) {
	id = canonicalRuntime(id)
	if _, err := s.runtimeSpec(ctx, id); err != nil {
		return store.Session{}, err
	}
	before, err := s.Store.GetSession(ctx, sessionID)
	if err != nil {
		return store.Session{}, err
	}
	if s.Runner.Busy(sessionID) {
		return store.Session{}, &store.BusyError{SessionID: sessionID, StreamID: before.ActiveStreamID}
	}
	if err := s.Store.SetSessionRuntime(ctx, sessionID, id); err != nil {
		return store.Session{}, err
	}
	if before.Runtime != id {
		s.evict(ctx, before.Runtime, sessionID)
	}
	s.sessionsChanged()
	return s.Store.GetSession(ctx, sessionID)
}

// evict asks runtime id's sidecar (when it runs) to drop its memory of sessionID.
func (s *Service) evict(ctx context.Context, runtimeID, sessionID string) {
	sup := s.startedSupervisor(runtimeID)
	if sup == nil {
		return
	}
	var ev protocol.EvictResult
	ectx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := sup.Call(ectx, protocol.MethodChatEvict, protocol.EvictParams{SessionID: sessionID}, nil, &ev); err != nil {
		s.Log.Info("chat.evict failed (the agent restarts empty anyway)", "runtime", runtimeID, "err", err)
	}
}
