package backend

import (
	"context"
	"encoding/json"
	"strings"

	"talaria/backend/bus"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/turn"
)

// SessionView is a session with its transcript.
type SessionView struct {
	Session  store.Session   `json:"session"`
	Messages []store.Message `json:"messages"`
}

// Status is what the status bar and Diagnostics show. Sidecar is the built-in
// runtime's sidecar; Runtimes every started runtime's, the built-in one first.
type Status struct {
	Sidecar    supervisor.Status   `json:"sidecar"`
	Runtimes   []supervisor.Status `json:"runtimes"`
	Version    string              `json:"version"`
	Paths      core.Paths          `json:"paths"`
	UptimeS    float64             `json:"uptime_s"` // seconds since Start
	StderrTail []string            `json:"stderr_tail"`
}

// NewSession creates an empty session on the default runtime (its model and workspace
// are read from Settings at each turn until the chat sets its own).
func (area *ChatsArea) NewSession(ctx context.Context) (store.Session, error) {
	s := area.s
	rt, err := s.core.DefaultRuntime(ctx)
	if err != nil {
		return store.Session{}, err
	}
	// The chat starts from the defaults: the custom instructions of Settings. Its model
	// follows Settings' until the chat picks one (docs/decisions.md, "Per-chat
	// settings").
	var opts store.JSONObject
	if prompt, _ := s.core.Setting(ctx, keyDefaultPrompt, ""); strings.TrimSpace(prompt) != "" {
		b, _ := json.Marshal(ChatOptions{SystemPrompt: prompt})
		opts = store.JSONObject(b)
	}
	sess, err := s.Store.CreateSession(ctx, store.NewSession{Runtime: rt, Options: opts, Workspace: s.initialWorkspace(ctx)})
	if err == nil {
		s.Bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	}
	return sess, err
}

// ListSessions returns the first 500 sessions, newest first (metadata only).
func (area *ChatsArea) ListSessions(ctx context.Context) ([]store.Session, error) {
	s := area.s
	out, err := s.Store.ListSessions(ctx, 500, 0)
	if out == nil {
		out = []store.Session{}
	}
	return out, err
}

// GetSession returns a session and its messages; store.ErrNotFound when it is gone.
func (area *ChatsArea) GetSession(ctx context.Context, id string) (SessionView, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return SessionView{}, err
	}
	msgs, err := s.Store.Messages(ctx, id)
	if msgs == nil {
		msgs = []store.Message{}
	}
	return SessionView{Session: sess, Messages: msgs}, err
}

// StartTurn sends text as the next user message of session id (see turn.Runner.StartTurn).
func (area *TurnsArea) StartTurn(ctx context.Context, id, text string) (turn.Started, error) {
	s := area.s
	return s.Runner.StartTurn(ctx, id, text)
}

// Cancel stops a running turn; a no-op for a stream that already ended.
func (area *TurnsArea) Cancel(streamID string) error { return area.s.Runner.Cancel(streamID) }

// StreamSince returns the frames of streamID after seq.
func (area *TurnsArea) StreamSince(ctx context.Context, streamID string, seq int64) ([]turn.Frame, error) {
	s := area.s
	out, err := s.Runner.StreamSince(ctx, streamID, seq)
	if out == nil {
		out = []turn.Frame{}
	}
	return out, err
}

// GetStatus returns the agent's status, the version and the data paths.
func (area *AgentsArea) GetStatus(ctx context.Context) Status {
	s := area.s
	return Status{Sidecar: s.Sidecar.Status(), Runtimes: s.core.RuntimeStatuses(), Version: s.Version, Paths: s.Paths,
		UptimeS: s.core.UptimeS(), StderrTail: s.Sidecar.StderrTail()}
}

// RestartAgent restarts the sidecar process.
func (area *AgentsArea) RestartAgent() { area.s.Sidecar.Restart() }
