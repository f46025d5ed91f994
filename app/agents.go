package app

import (
	"talaria/backend"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/sidecar/protocol"
)

// Agents is bound to the window: the agent runtimes (the built-in sidecar, Hermes;
// ACP agents are ACP's), their status and restarts, which runtime a chat uses, and a chat's
// sandbox policy. A runtimeID names a runtime as core.RuntimeOption.ID does; for the
// Hermes calls it is a Hermes runtime ("hermes" or "hermes:<profile>"; "" = the
// default profile).
type Agents struct{ app *App }

// GetStatus returns the agent's status and the data paths.
func (ag *Agents) GetStatus() backend.Status {
	return lists(ag.app.service().Agents().GetStatus(ag.app.bg()))
}

// RestartAgent restarts the sidecar.
func (ag *Agents) RestartAgent() { ag.app.service().Agents().RestartAgent() }

// GetHermesSettings returns the Hermes settings and what discovery found with them.
func (ag *Agents) GetHermesSettings() (backend.HermesSettings, error) {
	s, err := ag.app.service().Agents().GetHermesSettings(ag.app.bg())
	return lists(s), userError(err)
}

// SaveHermesSettings stores the Hermes path override, home and model and rediscovers.
func (ag *Agents) SaveHermesSettings(in backend.HermesSettings) (backend.HermesSettings, error) {
	s, err := ag.app.service().Agents().SaveHermesSettings(ag.app.bg(), in)
	return lists(s), userError(err)
}

// HermesSessions lists the user's own Hermes sessions, most recent first.
func (ag *Agents) HermesSessions(runtimeID string) ([]backend.HermesSession, error) {
	out, err := ag.app.service().Agents().HermesSessions(ag.app.bg(), runtimeID)
	return lists(out), userError(err)
}

// HermesHistory reads one Hermes session's transcript, read-only.
func (ag *Agents) HermesHistory(runtimeID, agentSessionID string) (protocol.AgentHistoryResult, error) {
	h, err := ag.app.service().Agents().HermesHistory(ag.app.bg(), runtimeID, agentSessionID)
	return lists(h), userError(err)
}

// ContinueHermesSession makes (or finds) the Talaria chat bound to a Hermes session.
func (ag *Agents) ContinueHermesSession(runtimeID, agentSessionID string) (store.Session, error) {
	s, err := ag.app.service().Agents().ContinueHermesSession(ag.app.bg(), runtimeID, agentSessionID)
	return s, userError(err)
}

// HermesModels lists the models Hermes can use.
func (ag *Agents) HermesModels(runtimeID string) (protocol.AgentModelsResult, error) {
	m, err := ag.app.service().Agents().HermesModels(ag.app.bg(), runtimeID)
	return lists(m), userError(err)
}

// ListRuntimes lists the runtimes the pickers offer, the default one marked.
func (ag *Agents) ListRuntimes() ([]core.RuntimeOption, error) {
	out, err := ag.app.service().Agents().ListRuntimes(ag.app.bg())
	return lists(out), userError(err)
}

// SetDefaultRuntime makes runtime id the one new chats use.
func (ag *Agents) SetDefaultRuntime(id string) error {
	return userError(ag.app.service().Agents().SetDefaultRuntime(ag.app.bg(), id))
}

// SetSessionRuntime moves an idle chat to runtime id.
func (ag *Agents) SetSessionRuntime(sessionID, id string) (store.Session, error) {
	s, err := ag.app.service().Agents().SetSessionRuntime(ag.app.bg(), sessionID, id)
	return s, userError(err)
}

// RuntimeStatuses returns every started runtime's sidecar status.
func (ag *Agents) RuntimeStatuses() []supervisor.Status {
	return lists(ag.app.service().Agents().RuntimeStatuses())
}

// RestartRuntime restarts (or starts) the sidecar of runtime id.
func (ag *Agents) RestartRuntime(id string) error {
	return userError(ag.app.service().Agents().RestartRuntime(ag.app.bg(), id))
}

// GetSessionSandbox returns a chat's sandbox policy.
func (ag *Agents) GetSessionSandbox(sessionID string) (backend.SessionSandbox, error) {
	v, err := ag.app.service().Agents().GetSessionSandbox(ag.app.bg(), sessionID)
	return v, userError(err)
}

// SetSessionSandbox sets a chat's sandbox policy (read-only, workspace-write or
// full-access; network on or off), from its next command on.
func (ag *Agents) SetSessionSandbox(sessionID string, v backend.SessionSandbox) error {
	return userError(ag.app.service().Agents().SetSessionSandbox(ag.app.bg(), sessionID, v))
}

// GetDefaultSandbox returns the policy new chats start with.
func (ag *Agents) GetDefaultSandbox() (backend.SessionSandbox, error) {
	v, err := ag.app.service().Agents().DefaultSandbox(ag.app.bg())
	return v, userError(err)
}

// SetDefaultSandbox sets the policy new chats start with (never full access).
func (ag *Agents) SetDefaultSandbox(v backend.SessionSandbox) error {
	return userError(ag.app.service().Agents().SetDefaultSandbox(ag.app.bg(), v))
}

// HistoryKeptBy names the agent that keeps session id's history when the chat is
// deleted: the chat came from the agent's own sessions, so deleting it removes it
// from Talaria only ("" when deleting it deletes the agent's session too, or there is
// none). The delete dialog says so.
func (ag *Agents) HistoryKeptBy(id string) (string, error) {
	name, err := ag.app.service().Chats().HistoryKeptBy(ag.app.bg(), id)
	return name, userError(err)
}
