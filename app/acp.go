package app

import (
	"talaria/backend"
	"talaria/sidecar/protocol"
)

// ACP agents: Settings' list of agents speaking the Agent Client Protocol, their
// presets and "Test", and a chat's agent state (modes, models, slash commands).

// ACPAgents lists the configured ACP agents (secret values left out).
func (a *App) ACPAgents() ([]backend.ACPAgent, error) {
	out, err := a.service().ACPAgents(a.bg())
	if out == nil {
		out = []backend.ACPAgent{}
	}
	return out, userError(err)
}

// ACPPresets lists the agents Settings offers to add with their usual command.
func (a *App) ACPPresets() []backend.ACPPreset { return backend.ACPPresets }

// SaveACPAgent adds (empty id) or changes an agent; a secret variable left empty keeps
// its stored value.
func (a *App) SaveACPAgent(agent backend.ACPAgent) (backend.ACPAgent, error) {
	out, err := a.service().SaveACPAgent(a.bg(), agent)
	return out, userError(err)
}

// DeleteACPAgent removes an agent and its secrets.
func (a *App) DeleteACPAgent(id string) error {
	return userError(a.service().DeleteACPAgent(a.bg(), id))
}

// TestACPAgent starts the agent as given, asks it to describe itself (ACP initialize)
// and stops it; the result says what it answered or why it failed.
func (a *App) TestACPAgent(agent backend.ACPAgent) (backend.ACPTestResult, error) {
	out, err := a.service().TestACPAgent(a.bg(), agent)
	return out, userError(err)
}

// ACPState returns what a chat's ACP agent offers: modes, models, options, commands.
func (a *App) ACPState(sessionID string) (protocol.AgentState, error) {
	st, err := a.service().ACPState(a.bg(), sessionID)
	return st, userError(err)
}

// SetACPChoice sets a chat's mode ("mode"), model ("model") or another option
// ("option", optionID) at its ACP agent.
func (a *App) SetACPChoice(sessionID, which, optionID, value string) (protocol.AgentState, error) {
	st, err := a.service().SetACPChoice(a.bg(), sessionID, which, optionID, value)
	return st, userError(err)
}

// RespondApprovalOption answers an ACP agent's permission card with one of the
// options it offered.
func (a *App) RespondApprovalOption(sessionID, approvalID, optionID string) error {
	return userError(a.service().RespondApprovalOption(a.bg(), sessionID, approvalID, optionID))
}
