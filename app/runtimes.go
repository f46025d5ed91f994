package app

import (
	"talaria/backend"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
)

// Runtimes: which agent runtime a chat runs on (built-in, Hermes, ACP agents), the
// default for new chats, each runtime's sidecar status, and a chat's own options.

// ListRuntimes lists the runtimes the pickers offer, the default one marked.
func (a *App) ListRuntimes() ([]core.RuntimeOption, error) {
	out, err := a.service().ListRuntimes(a.bg())
	if out == nil {
		out = []core.RuntimeOption{}
	}
	return out, userError(err)
}

// SetDefaultRuntime makes runtime id the one new chats use.
func (a *App) SetDefaultRuntime(id string) error {
	return userError(a.service().SetDefaultRuntime(a.bg(), id))
}

// SetSessionRuntime moves an idle chat to runtime id.
func (a *App) SetSessionRuntime(sessionID, id string) (store.Session, error) {
	s, err := a.service().SetSessionRuntime(a.bg(), sessionID, id)
	return s, userError(err)
}

// RuntimeStatuses returns every started runtime's sidecar status.
func (a *App) RuntimeStatuses() []supervisor.Status { return a.service().RuntimeStatuses() }

// RestartRuntime restarts (or starts) the sidecar of runtime id.
func (a *App) RestartRuntime(id string) error {
	return userError(a.service().RestartRuntime(a.bg(), id))
}

// GetChatOptions returns a chat's own options.
func (a *App) GetChatOptions(sessionID string) (backend.ChatOptions, error) {
	o, err := a.service().GetChatOptions(a.bg(), sessionID)
	return o, userError(err)
}

// SetChatOptions replaces a chat's own options; they apply from its next turn.
func (a *App) SetChatOptions(sessionID string, o backend.ChatOptions) (store.Session, error) {
	s, err := a.service().SetChatOptions(a.bg(), sessionID, o)
	return s, userError(err)
}
