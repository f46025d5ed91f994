package protocol

// The ACP runtime's additions to the protocol (docs/protocol.md, "The ACP runtime"):
// methods to read the agent's description and a chat's agent session (modes, models,
// slash commands) outside a turn, the frames that report them during a turn, and the
// members an approval carries when an agent asks permission with its own options.

// Methods served by the ACP runtime besides chat.start and the answer methods.
const (
	// MethodAgentInfo starts the agent when needed and returns what it said about
	// itself in ACP's initialize (AgentInfoResult).
	MethodAgentInfo = "agent.info"
	// MethodSessionState opens (or loads) a chat's agent session and returns its
	// state (AgentState), so the window can show the pickers and the slash commands
	// before the first message.
	MethodSessionState = "session.state"
	// MethodSessionSetMode, MethodSessionSetModel and MethodSessionSetOption change
	// the agent session's mode, model or another of its options; each returns the new
	// AgentState.
	MethodSessionSetMode   = "session.set_mode"
	MethodSessionSetModel  = "session.set_model"
	MethodSessionSetOption = "session.set_option"
	// MethodAgentAuthenticate signs in to the agent with one of the auth methods its
	// initialize offered (ACP authenticate; AuthenticateParams, result {}).
	MethodAgentAuthenticate = "agent.authenticate"
	// MethodAgentLogout signs out of the agent (ACP logout, only when the agent
	// advertises it: AgentCaps.Logout; no params, result {}).
	MethodAgentLogout = "agent.logout"
)

// AuthenticateParams are agent.authenticate's params: MethodID is the id of one of
// agent.info's auth_methods.
type AuthenticateParams struct {
	MethodID string `json:"method_id"`
}

// AgentInfoResult is the result of agent.info: the agent's own description from its
// initialize answer, and what Talaria makes of it. Version is "" when the agent did not
// say. PID is the agent process's id (0 when it is not running).
type AgentInfoResult struct {
	Name            string       `json:"name"`
	Title           string       `json:"title,omitempty"`
	Version         string       `json:"version"`
	ProtocolVersion int          `json:"protocol_version"`
	Capabilities    AgentCaps    `json:"capabilities"`
	AuthMethods     []AuthMethod `json:"auth_methods"`
	PID             int          `json:"pid"`
	// Command is the agent's command line as started (arguments included).
	Command []string `json:"command"`
}

// AgentCaps is the part of an ACP agent's capabilities Talaria uses. Each field says
// whether the agent advertised the feature; what it did not advertise is hidden.
type AgentCaps struct {
	LoadSession   bool `json:"load_session"`
	ResumeSession bool `json:"resume_session"`
	CloseSession  bool `json:"close_session"`
	ListSessions  bool `json:"list_sessions"`
	// Logout: the agent offers ACP logout (unstable in ACP: auth.logout).
	Logout          bool `json:"logout"`
	Images          bool `json:"images"`
	Audio           bool `json:"audio"`
	EmbeddedContext bool `json:"embedded_context"`
	MCPHTTP         bool `json:"mcp_http"`
	MCPSSE          bool `json:"mcp_sse"`
}

// AuthMethod is one way an agent offers to sign in (ACP authMethods).
type AuthMethod struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
}

// SessionRefParams name a chat and what its agent session needs: SessionID is
// Talaria's session, Workspace the folder the agent works in (absolute),
// AgentSessionID the agent's session to load or resume ("" for a new one).
type SessionRefParams struct {
	SessionID      string `json:"session_id"`
	Workspace      string `json:"workspace"`
	AgentSessionID string `json:"agent_session_id,omitempty"`
}

// SetOptionParams are the params of session.set_mode (Value: the mode id),
// session.set_model (Value: the model id) and session.set_option (OptionID: the
// config option's id, Value: one of its choices).
type SetOptionParams struct {
	SessionRefParams
	OptionID string `json:"option_id,omitempty"`
	Value    string `json:"value"`
}

// AgentState is what a chat's agent session offers: its mode and model pickers (nil
// when the agent has none), its other selectable options, and its slash commands.
// SelfApproves says why the agent is known to act without asking in its current mode
// (or, when it has no modes, at all): the current mode choice's SelfApproves; "" when
// not known.
type AgentState struct {
	AgentSessionID string         `json:"agent_session_id"`
	Modes          *Picker        `json:"modes"`
	Models         *Picker        `json:"models"`
	Options        []Picker       `json:"options"`
	Commands       []SlashCommand `json:"commands"`
	SelfApproves   string         `json:"self_approves,omitempty"`
}

// Picker is one choice the agent lets the user make: ID names it (a config option id,
// or "mode"/"model" for ACP's session modes and models), Current is the chosen value.
type Picker struct {
	ID      string         `json:"id"`
	Name    string         `json:"name"`
	Current string         `json:"current"`
	Choices []PickerChoice `json:"choices"`
}

// PickerChoice is one value of a Picker. SelfApproves, on a mode, says why the agent is
// known to act without asking in it ("" when not known): its description says so
// ("Auto-allow file edits"), or it was seen editing or running a command in that mode
// with no permission request. Such actions never reach Talaria's approval cards.
type PickerChoice struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description,omitempty"`
	SelfApproves string `json:"self_approves,omitempty"`
}

// SlashCommand is one command the agent runs when a prompt starts with /Name. Hint,
// when set, describes the text expected after the name.
type SlashCommand struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Hint        string `json:"hint,omitempty"`
}

// ApprovalOption is one answer an agent offers to a permission request (ACP
// session/request_permission). OptionID is the agent's id, Name its label, Kind one of
// allow_once, allow_always, reject_once, reject_always; Choice is the approval.respond
// choice the option stands for (once, always or deny).
type ApprovalOption struct {
	OptionID string `json:"option_id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Choice   string `json:"choice"`
}

// ACP permission option kinds.
const (
	OptionAllowOnce    = "allow_once"
	OptionAllowAlways  = "allow_always"
	OptionRejectOnce   = "reject_once"
	OptionRejectAlways = "reject_always"
)
