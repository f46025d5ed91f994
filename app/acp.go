package app

import (
	"talaria/backend"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// ACP is bound to the window: Settings' list of agents speaking the Agent Client
// Protocol, their presets and "Test", a chat's agent state (modes, models, slash
// commands), signing in and out of an agent, and its earlier sessions. A runtimeID is
// "acp:<agent>".
type ACP struct{ app *App }

// ACPAgents lists the configured ACP agents (secret values left out).
func (ac *ACP) ACPAgents() ([]backend.ACPAgent, error) {
	out, err := ac.app.service().ACP().ACPAgents(ac.app.bg())
	return lists(out), userError(err)
}

// ACPPresets lists the agents Settings offers to add with their usual command.
func (ac *ACP) ACPPresets() []backend.ACPPreset { return lists(backend.ACPPresets) }

// SaveACPAgent adds (empty id) or changes an agent; a secret variable left empty keeps
// its stored value.
func (ac *ACP) SaveACPAgent(agent backend.ACPAgent) (backend.ACPAgent, error) {
	out, err := ac.app.service().ACP().SaveACPAgent(ac.app.bg(), agent)
	return lists(out), userError(err)
}

// DeleteACPAgent removes an agent and its secrets.
func (ac *ACP) DeleteACPAgent(id string) error {
	return userError(ac.app.service().ACP().DeleteACPAgent(ac.app.bg(), id))
}

// TestACPAgent starts the agent as given, asks it to describe itself (ACP initialize)
// and stops it; the result says what it answered or why it failed.
func (ac *ACP) TestACPAgent(agent backend.ACPAgent) (backend.ACPTestResult, error) {
	out, err := ac.app.service().ACP().TestACPAgent(ac.app.bg(), agent)
	return lists(out), userError(err)
}

// ACPState returns what a chat's ACP agent offers: modes, models, options, commands.
func (ac *ACP) ACPState(sessionID string) (protocol.AgentState, error) {
	st, err := ac.app.service().ACP().ACPState(ac.app.bg(), sessionID)
	return lists(st), userError(err)
}

// SetACPChoice sets a chat's mode ("mode"), model ("model") or another option
// ("option", optionID) at its ACP agent.
func (ac *ACP) SetACPChoice(sessionID, which, optionID, value string) (protocol.AgentState, error) {
	st, err := ac.app.service().ACP().SetACPChoice(ac.app.bg(), sessionID, which, optionID, value)
	return lists(st), userError(err)
}

// ACPAgentInfo asks runtime id's agent to describe itself (starting it when needed):
// its sign-in methods for the sign-in card and what it offers (listing its sessions,
// signing out).
func (ac *ACP) ACPAgentInfo(runtimeID string) (protocol.AgentInfoResult, error) {
	info, err := ac.app.service().ACP().ACPAgentInfo(ac.app.bg(), runtimeID)
	return lists(info), userError(err)
}

// ACPAuthenticate signs in to runtime id's agent with one of its sign-in methods (ACP
// authenticate).
func (ac *ACP) ACPAuthenticate(runtimeID, methodID string) error {
	return userError(ac.app.service().ACP().ACPAuthenticate(ac.app.bg(), runtimeID, methodID))
}

// ACPLogout signs out of runtime id's agent (ACP logout), when the agent offers it.
func (ac *ACP) ACPLogout(runtimeID string) error {
	return userError(ac.app.service().ACP().ACPLogout(ac.app.bg(), runtimeID))
}

// ACPSessions lists runtime id's agent's own sessions (ACP session/list), each with the
// chat bound to it when there is one.
func (ac *ACP) ACPSessions(runtimeID string) ([]backend.ACPSession, error) {
	out, err := ac.app.service().ACP().ACPSessions(ac.app.bg(), runtimeID)
	return lists(out), userError(err)
}

// ContinueACPSession makes (or finds) the chat bound to one of the agent's own sessions.
func (ac *ACP) ContinueACPSession(runtimeID, agentSessionID string) (store.Session, error) {
	s, err := ac.app.service().ACP().ContinueACPSession(ac.app.bg(), runtimeID, agentSessionID)
	return s, userError(err)
}
