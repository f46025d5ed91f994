package app

import (
	"talaria/backend"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// Hermes Agent: its settings (path override, home, model), the user's own Hermes
// sessions (read-only view, "Continue here") and the models Hermes offers. runtimeID is
// a Hermes runtime id ("hermes" or "hermes:<profile>"; "" = the default profile).

// GetHermesSettings returns the Hermes settings and what discovery found with them.
func (a *App) GetHermesSettings() (backend.HermesSettings, error) {
	s, err := a.service().GetHermesSettings(a.bg())
	return s, userError(err)
}

// SaveHermesSettings stores the Hermes path override, home and model and rediscovers.
func (a *App) SaveHermesSettings(in backend.HermesSettings) (backend.HermesSettings, error) {
	s, err := a.service().SaveHermesSettings(a.bg(), in)
	return s, userError(err)
}

// HermesSessions lists the user's own Hermes sessions, most recent first.
func (a *App) HermesSessions(runtimeID string) ([]backend.HermesSession, error) {
	out, err := a.service().HermesSessions(a.bg(), runtimeID)
	if out == nil {
		out = []backend.HermesSession{}
	}
	return out, userError(err)
}

// HermesHistory reads one Hermes session's transcript, read-only.
func (a *App) HermesHistory(runtimeID, agentSessionID string) (protocol.AgentHistoryResult, error) {
	h, err := a.service().HermesHistory(a.bg(), runtimeID, agentSessionID)
	if h.Messages == nil {
		h.Messages = []protocol.AgentHistoryMessage{}
	}
	return h, userError(err)
}

// ContinueHermesSession makes (or finds) the Talaria chat bound to a Hermes session.
func (a *App) ContinueHermesSession(runtimeID, agentSessionID string) (store.Session, error) {
	s, err := a.service().ContinueHermesSession(a.bg(), runtimeID, agentSessionID)
	return s, userError(err)
}

// HermesModels lists the models Hermes can use.
func (a *App) HermesModels(runtimeID string) (protocol.AgentModelsResult, error) {
	m, err := a.service().HermesModels(a.bg(), runtimeID)
	return m, userError(err)
}
