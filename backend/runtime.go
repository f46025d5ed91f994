package backend

import (
	"context"
	"strings"

	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/sidecar/protocol"
)

// RestartRuntime restarts the sidecar of runtime id ("" or "builtin": the built-in
// one). A runtime that was never started is started. Errors: *core.RuntimeUnavailableError.
func (area *AgentsArea) RestartRuntime(ctx context.Context, id string) error {
	s := area.s
	if sup := s.core.StartedSupervisor(id); sup != nil {
		sup.Restart()
		return nil
	}
	_, _, err := s.core.SupervisorFor(ctx, id)
	return err
}

// ListRuntimes returns what the runtime pickers offer: the built-in runtime, then each
// registered kind's runtimes, the default one marked. A kind whose discovery fails is
// listed as one unavailable entry saying why.
func (area *AgentsArea) ListRuntimes(ctx context.Context) ([]core.RuntimeOption, error) {
	s := area.s
	def, err := s.core.DefaultRuntime(ctx)
	if err != nil {
		return nil, err
	}
	out := []core.RuntimeOption{{ID: store.RuntimeBuiltin, Kind: protocol.RuntimeBuiltin, Label: "Built-in",
		Detail: "Talaria's own agent, for any OpenAI-compatible endpoint", Available: true}}
	for _, k := range s.core.RuntimeKinds() {
		opts, err := k.Runtimes(ctx)
		if err != nil {
			out = append(out, core.RuntimeOption{ID: k.Kind(), Kind: k.Kind(), Label: k.Kind(), Problem: err.Error(),
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
	distinctLabels(out)
	return out, nil
}

// distinctLabels gives runtimes that share a label (two agents both named "OpenCode")
// their id's instance after it, "OpenCode (opencode-2)", so no two picker entries read
// the same.
func distinctLabels(opts []core.RuntimeOption) {
	count := map[string]int{}
	for _, o := range opts {
		count[o.Label]++
	}
	for i, o := range opts {
		if count[o.Label] > 1 {
			_, inst, ok := strings.Cut(o.ID, ":")
			if !ok {
				inst = o.ID
			}
			opts[i].Label = o.Label + " (" + inst + ")"
		}
	}
}

// SetDefaultRuntime makes runtime id the one new chats use. Errors:
// *core.RuntimeUnavailableError when no runtime of that id is known or it cannot run now.
func (area *AgentsArea) SetDefaultRuntime(ctx context.Context, id string) error {
	s := area.s
	id = core.CanonicalRuntime(id)
	if _, err := s.core.Spec(ctx, id); err != nil {
		return err
	}
	return s.Store.SetSetting(ctx, core.KeyDefaultRuntime, id)
}

// SetSessionRuntime moves an idle chat to runtime id; the agent-side session of the
// old runtime is forgotten (the new runtime starts its own from the transcript), and
// the old runtime drops what it kept in memory for the chat. Errors:
// *core.RuntimeUnavailableError; *store.BusyError while a turn runs; store.ErrNotFound.
func (area *AgentsArea) SetSessionRuntime(ctx context.Context, sessionID, id string) (store.Session, error) {
	s := area.s
	id = core.CanonicalRuntime(id)
	if _, err := s.core.Spec(ctx, id); err != nil {
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
		s.core.Evict(ctx, before.Runtime, sessionID)
	}
	s.core.SessionsChanged()
	return s.Store.GetSession(ctx, sessionID)
}

// RuntimeStatuses returns the status of every started runtime's sidecar, the built-in
// one first (core.Core.RuntimeStatuses).
func (area *AgentsArea) RuntimeStatuses() []supervisor.Status { return area.s.core.RuntimeStatuses() }

// RegisterRuntimeKind adds a kind of runtime (core.Core.RegisterRuntimeKind). Call it
// before Start.
func (area *AgentsArea) RegisterRuntimeKind(k core.RuntimeKind) { area.s.core.RegisterRuntimeKind(k) }
