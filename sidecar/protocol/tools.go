package protocol

import "encoding/json"

// Methods of the tool, approval and clarify flow (docs/protocol.md, "Tools, approvals
// and clarify").
const (
	MethodApprovalRespond = "approval.respond"
	MethodApprovalYolo    = "approval.yolo"
	MethodClarifyRespond  = "clarify.respond"
)

// Approval choices of approval.respond.
const (
	ChoiceOnce    = "once"    // run this command this time
	ChoiceSession = "session" // allow this pattern for the rest of the session
	ChoiceAlways  = "always"  // allow this pattern from now on (the host persists it)
	ChoiceDeny    = "deny"    // refuse; the model is told the user denied it
)

// Reasons of approval_resolved and clarify_resolved.
const (
	ResolvedAnswered    = "answered"
	ResolvedTimeout     = "timeout"
	ResolvedInterrupted = "interrupted" // the turn was cancelled or the sidecar drained
	ResolvedYolo        = "yolo"        // let through by approval.yolo
)

// Statuses of a TodoItem.
const (
	TodoPending    = "pending"
	TodoInProgress = "in_progress"
	TodoCompleted  = "completed"
	TodoCancelled  = "cancelled"
)

// Clarify kinds.
const (
	ClarifyKindClarify = "clarify"
	ClarifyKindVault   = "vault"
)

// ToolData is the data of a tool frame: a tool call is starting. Args are the call's
// arguments with long string values capped (2 KiB each); KeyArg is the one argument a
// card shows in its title (the command, the path, the pattern), capped at 200 bytes.
type ToolData struct {
	TID    string         `json:"tid"`
	Name   string         `json:"name"`
	Args   map[string]any `json:"args"`
	KeyArg string         `json:"key_arg"`
	// MCP names the server and tool of an MCP tool call (nil for the runtime's own
	// tools).
	MCP *MCPToolRef `json:"mcp,omitempty"`
}

// ToolCompleteData is the data of a tool_complete frame. Preview is the result as text,
// capped at 8 KiB; RawResult is the tool's result object, bounded (string values capped
// at 8 KiB), from which the host decides is_error; ResultDiff is the whole unified diff
// when the tool edited files; TodoResult is the todo tool's whole list. DurationS is the
// tool's run time in seconds, measured by the sidecar.
type ToolCompleteData struct {
	TID        string          `json:"tid"`
	Name       string          `json:"name"`
	Preview    string          `json:"preview"`
	RawResult  json.RawMessage `json:"raw_result,omitempty" ts:"Record<string, unknown>"`
	ResultDiff string          `json:"result_diff,omitempty"`
	TodoResult *TodoList       `json:"todo_result,omitempty"`
	DurationS  float64         `json:"duration_s"`
	// MCP is an MCP tool's answer as the card shows it: text, images, resource links.
	MCP *MCPToolResult `json:"mcp,omitempty"`
}

// TodoList is the todo tool's list. Status is pending, in_progress, completed or
// cancelled.
type TodoList struct {
	Todos []TodoItem `json:"todos"`
}

// TodoItem is one entry of a TodoList.
type TodoItem struct {
	ID      string `json:"id"`
	Content string `json:"content"`
	Status  string `json:"status" ts:"TodoStatus"`
}

// ApprovalData is the data of an approval frame: a dangerous command waits for the
// user. Pattern is the key of the dangerous-command pattern it matched (e.g.
// "recursive_delete"); Description says why it is dangerous; TimeoutS is how long the
// sidecar waits (seconds) before denying.
//
// An ACP agent's permission request (docs/protocol.md, "The ACP runtime") also has
// Title (the agent's title of the tool call), Options (exactly the answers the agent
// offers, in its order; the card shows these instead of the four choices), Diff (a
// unified diff of the edit asked about, when the agent showed one) and ToolCallID.
type ApprovalData struct {
	ApprovalID  string `json:"approval_id"`
	Command     string `json:"command"`
	Description string `json:"description"`
	Pattern     string `json:"pattern"`
	TimeoutS    int    `json:"timeout_s"`
	// Choices are the answers the agent allows, in its order (a subset of once,
	// session, always, deny, and for an MCP tool always_server); omitted means once,
	// session, always and deny. Hermes forbids "always" for
	// some commands and offers only once/deny after its smart check refused one; the
	// built-in runtime offers only once/deny for what it asks every time (leaving the
	// sandbox for one command, a command with no sandbox available).
	Choices []string `json:"choices,omitempty" ts:"ApprovalChoice[]"`
	// SpanStart and SpanEnd are byte offsets into Command of the part that matched
	// (the card highlights it; both 0 when there is none).
	SpanStart int `json:"span_start,omitempty"`
	SpanEnd   int `json:"span_end,omitempty"`
	// Sandbox says how the command runs if allowed (e.g. "workspace-write, no
	// network", "outside the sandbox"); "" when the runtime does not say.
	Sandbox string `json:"sandbox,omitempty"`
	// Justification is the model's reason for leaving the sandbox, when it gave one.
	Justification string `json:"justification,omitempty"`
	// Title, Options, Diff and ToolCallID: an ACP agent's permission request (see
	// above). When Options are set, Choices are the choices they stand for.
	Title      string           `json:"title,omitempty"`
	Options    []ApprovalOption `json:"options,omitempty"`
	Diff       string           `json:"diff,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
	// Kind is ApprovalKindCommand ("", a dangerous command) or ApprovalKindMCP (an MCP
	// tool call: MCP names it, Args are its arguments with long strings capped, Command
	// is "<server> · <tool>" and Description the tool's own description).
	Kind string         `json:"kind,omitempty"`
	MCP  *MCPToolRef    `json:"mcp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Decisions of an approval_auto frame.
const (
	AutoAllowed = "allowed" // a grant for the session or the always-list let it through
	AutoYolo    = "yolo"    // YOLO was on
	AutoRefused = "refused" // a hardline pattern: never run
)

// ApprovalAutoData is the data of an approval_auto frame: something that needs an
// approval was decided without asking (the audit log keeps it). Decision is one of the
// Auto* values; DecidedBy says what decided ("session grant", "always-list", "yolo",
// "hardline"); TID is the tool call; Command, Description, Pattern, Sandbox, Kind and MCP
// are as in an approval frame.
type ApprovalAutoData struct {
	TID         string      `json:"tid,omitempty"`
	Command     string      `json:"command"`
	Description string      `json:"description"`
	Pattern     string      `json:"pattern"`
	Decision    string      `json:"decision"`
	DecidedBy   string      `json:"decided_by"`
	Sandbox     string      `json:"sandbox,omitempty"`
	Kind        string      `json:"kind,omitempty"`
	MCP         *MCPToolRef `json:"mcp,omitempty"`
}

// ResolvedData is the data of approval_resolved and clarify_resolved. Exactly one of
// ApprovalID and ClarifyID is set. Choice is the approval choice when answered.
type ResolvedData struct {
	ApprovalID string `json:"approval_id,omitempty"`
	ClarifyID  string `json:"clarify_id,omitempty"`
	Reason     string `json:"reason"`
	Choice     string `json:"choice,omitempty"`
}

// ClarifyQuestion is one question of a clarify form: up to 4 Choices (empty means free
// text only); MultiSelect allows several choices.
type ClarifyQuestion struct {
	Question    string   `json:"question"`
	Choices     []string `json:"choices"`
	MultiSelect bool     `json:"multi_select"`
}

// ClarifyData is the data of a clarify frame. For kind clarify: Questions (1 to 5; the
// first is repeated in Question/Choices/MultiSelect for simple clients). For kind vault:
// Name is the environment variable the agent needs (e.g. GITHUB_TOKEN), Reason why, and
// SavedHint the keyring account the host may offer ("vault:GITHUB_TOKEN"). TimeoutS is
// how long the sidecar waits (seconds).
type ClarifyData struct {
	ClarifyID   string            `json:"clarify_id"`
	Kind        string            `json:"kind" ts:"ClarifyKind"`
	Question    string            `json:"question"`
	Choices     []string          `json:"choices"`
	MultiSelect bool              `json:"multi_select"`
	Questions   []ClarifyQuestion `json:"questions"`
	Name        string            `json:"name,omitempty"`
	Reason      string            `json:"reason,omitempty"`
	SavedHint   string            `json:"saved_hint,omitempty"`
	TimeoutS    int               `json:"timeout_s"`
	// AgentNotice is a sentence the card shows under a vault prompt when the agent
	// keeps the value itself (Hermes writes secrets to its own .env); "" when not.
	AgentNotice string `json:"agent_notice,omitempty"`
	// Elicitation marks a clarify that is an MCP (or ACP) elicitation: besides
	// answering, the user may decline or cancel it (the spec's three answers: accept,
	// decline, cancel), sent as clarify.respond {"action": "decline"} or
	// {"action": "cancel"}.
	Elicitation bool `json:"elicitation,omitempty"`
}

// The answers without content to an elicitation card (ClarifyData.Elicitation), as the
// MCP and ACP specs name them.
const (
	ElicitDecline = "decline" // the user explicitly declined
	ElicitCancel  = "cancel"  // the user dismissed it without choosing
)

// ApprovalRespondParams are the params of approval.respond. OptionID, for an approval
// that listed Options, names the option the user chose (Choice must be that option's
// choice); without it the first option of Choice's kind is taken.
type ApprovalRespondParams struct {
	SessionID  string `json:"session_id"`
	ApprovalID string `json:"approval_id"`
	Choice     string `json:"choice"`
	OptionID   string `json:"option_id,omitempty"`
}

// ApprovalYoloParams are the params of approval.yolo.
type ApprovalYoloParams struct {
	SessionID string `json:"session_id"`
	Enabled   bool   `json:"enabled"`
}

// ApprovalYoloResult is the result of approval.yolo; Released counts the parked
// approvals let through once.
type ApprovalYoloResult struct {
	YoloEnabled bool `json:"yolo_enabled"`
	Released    int  `json:"released"`
}

// ClarifyRespondParams are the params of clarify.respond. Response is, for a clarify:
// a JSON array with one answer per question (a string, or an array of strings for a
// multi-select question); for a vault prompt: {"value": "..."}, or null to decline.
type ClarifyRespondParams struct {
	SessionID string          `json:"session_id"`
	ClarifyID string          `json:"clarify_id"`
	Response  json.RawMessage `json:"response"`
}

// VaultResponse is the Response of clarify.respond for a vault prompt.
type VaultResponse struct {
	Value string `json:"value"`
}

// Steering methods (docs/protocol.md, "Steering"). A steer is text the user sends while
// a turn runs; the agent reads it as a user message at its next model call.
const (
	MethodChatSteer         = "chat.steer"
	MethodChatSteerWithdraw = "chat.steer_withdraw"
	MethodChatSteerNow      = "chat.steer_now"
)

// SteerItem is one queued steer. The host mints SteerID; both ends name steers by it.
type SteerItem struct {
	SteerID string `json:"steer_id"`
	Text    string `json:"text"`
}

// SteerParams are the params of chat.steer.
type SteerParams struct {
	StreamID string `json:"stream_id"`
	SteerID  string `json:"steer_id"`
	Text     string `json:"text"`
}

// SteerResult is the result of chat.steer: Accepted is false when the stream is not
// running (or is ending), in which case the host keeps the steer for a follow-up turn;
// CanRedirect says whether chat.steer_now can restart the in-flight model request.
type SteerResult struct {
	Accepted    bool `json:"accepted"`
	CanRedirect bool `json:"can_redirect"`
}

// SteerRefParams are the params of chat.steer_withdraw and chat.steer_now.
type SteerRefParams struct {
	StreamID string `json:"stream_id"`
	SteerID  string `json:"steer_id"`
}

// SteerWithdrawResult is the result of chat.steer_withdraw: Withdrawn is false when the
// agent already took the steer (or never had it).
type SteerWithdrawResult struct {
	Withdrawn bool `json:"withdrawn"`
}

// SteerNowResult is the result of chat.steer_now. Delivery is "restart" when the
// in-flight model request was abandoned and restarted with the steer, "steer" when the
// steer stays queued for the next model call (Requeued true), "" when the steer was not
// in the queue (Withdrawn false).
type SteerNowResult struct {
	Withdrawn  bool   `json:"withdrawn"`
	Redirected bool   `json:"redirected"`
	Delivery   string `json:"delivery"`
	Requeued   bool   `json:"requeued"`
}

// SteerPendingData is the data of the sidecar's steer_pending frame: the agent's queue
// of steers not yet taken (Pending, oldest first) and the steers it just took into the
// conversation (Taken, in the order it placed them as user messages). It is sent
// whenever the queue changes, and before the content frames of the model call that
// read a taken steer. A withdrawn steer leaves Pending without appearing in Taken.
type SteerPendingData struct {
	Pending []SteerItem `json:"pending"`
	Taken   []SteerItem `json:"taken,omitempty"`
}
