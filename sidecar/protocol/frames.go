package protocol

import "encoding/json"

// Frame event names. The sidecar sends the first group as $/frame notifications; the
// host adds the second group; the window sees both in its `frames` events (less
// steer_pending, which the host consumes and answers with steer_queue). Each has its
// data type registered in backend/contract, which generates the TypeScript
// (frontend/src/lib/protocol.gen.ts) and fails its tests when the two drift.
const (
	// Sent by a sidecar runtime.
	EvToken               = "token"
	EvReasoning           = "reasoning"
	EvInterimAssistant    = "interim_assistant"
	EvTool                = "tool"
	EvToolComplete        = "tool_complete"
	EvUsage               = "usage"
	EvSteerPending        = "steer_pending"
	EvApproval            = "approval"
	EvApprovalResolved    = "approval_resolved"
	EvClarify             = "clarify"
	EvClarifyResolved     = "clarify_resolved"
	EvStatus              = "status"
	EvWarning             = "warning"
	EvCompressing         = "compressing"
	EvCompressionFinished = "compression_finished"
	EvRateLimitWait       = "rate_limit_wait"
	EvProviderPhase       = "provider_phase"
	EvNotice              = "notice"
	EvNoticeClear         = "notice_clear"
	EvApprovalAuto        = "approval_auto"
	// EvAgentSession reports the agent's own session id as soon as the runtime knows it
	// (data AgentSessionData). The host stores it on the session and does not relay it.
	EvAgentSession = "agent_session"
	// EvAgentTitle: {title}, a title the agent gave the session itself (data
	// AgentTitleData); the host applies it unless the user renamed the session.
	EvAgentTitle = "agent_title"
	// EvAgentStatus: {kind, text}, the agent's own status line (data AgentStatusData);
	// the host shows it as run_status detail.
	EvAgentStatus = "agent_status"
	// EvAgentState: the ACP runtime's AgentState of the chat's agent session (modes,
	// models, options, slash commands) whenever it changes; latest wins.
	EvAgentState = "agent_state"
	// EvPlan: {todos}, an agent's whole plan as a todo list (TodoList); the host shows
	// it as todo_state. Each frame replaces the previous list.
	EvPlan = "plan"
	// EvTruncated: {reason, message}, the model stopped before its answer was whole
	// (data TruncatedData): its output limit (finish_reason "length") or the provider's
	// content filter. The answer so far is kept; the result's truncated says the same.
	EvTruncated = "truncated"

	// Added by the host.
	EvUserMessage    = "user_message"
	EvTodoState      = "todo_state"
	EvMetering       = "metering"
	EvRunStatus      = "run_status"
	EvSteerQueue     = "steer_queue"
	EvSteerConsumed  = "steer_consumed"
	EvSteerWithdrawn = "steer_withdrawn"
	EvTitle          = "title"
	EvDone           = "done"
	EvAppError       = "apperror"
	EvCancel         = "cancel"
	EvStreamEnd      = "stream_end"
)

// SidecarEvents lists the events a runtime may send, HostEvents those the host adds.
var (
	SidecarEvents = []string{EvToken, EvReasoning, EvInterimAssistant, EvTool, EvToolComplete,
		EvUsage, EvSteerPending, EvApproval, EvApprovalResolved, EvClarify, EvClarifyResolved,
		EvStatus, EvWarning, EvCompressing, EvCompressionFinished, EvRateLimitWait,
		EvProviderPhase, EvNotice, EvNoticeClear, EvAgentSession, EvAgentTitle, EvAgentStatus, EvAgentState, EvPlan,
		EvApprovalAuto, EvTruncated}
	HostEvents = []string{EvUserMessage, EvTodoState, EvMetering, EvRunStatus, EvSteerQueue, EvSteerConsumed,
		EvSteerWithdrawn, EvTitle, EvDone, EvAppError, EvCancel, EvStreamEnd}
)

// AgentSessionData is the data of an agent_session frame.
type AgentSessionData struct {
	AgentSessionID string `json:"agent_session_id"`
}

// TextData is the data of token, reasoning and interim_assistant frames.
type TextData struct {
	Text string `json:"text"`
}

// StatusData is the data of a status frame (Kind: terminal_error).
type StatusData struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// WarningData is the data of a warning frame (Type: fallback, retry).
// Reasons a model's answer was cut (TruncatedData.Reason, ChatResult.Truncated).
const (
	// TruncatedLength: the answer reached its output limit (finish_reason "length";
	// max_output_tokens or the provider's own limit).
	TruncatedLength = "length"
	// TruncatedContentFilter: the provider's content filter stopped the answer
	// (finish_reason "content_filter").
	TruncatedContentFilter = "content_filter"
)

// TruncatedData is the data of a truncated frame: Reason is TruncatedLength or
// TruncatedContentFilter; Message says it in a sentence for the user.
type TruncatedData struct {
	Reason  string `json:"reason" ts:"TruncatedReason"`
	Message string `json:"message"`
}

type WarningData struct {
	Type    string `json:"type" ts:"WarningType"`
	Message string `json:"message"`
}

// MessageData is the data of compressing and compression_finished: what the agent says
// about compacting the conversation.
type MessageData struct {
	Message string `json:"message"`
}

// CompressionFinishedData is the data of compression_finished: Message says how it
// went. When the host compacted the conversation itself, SummaryCovers is how many rows
// from the start the summary stands for and Summary is its text (both empty when the
// summary failed).
type CompressionFinishedData struct {
	Message       string `json:"message"`
	SummaryCovers int    `json:"summary_covers,omitempty"`
	Summary       string `json:"summary,omitempty"`
}

// NoticeData is the data of notice: a note the runtime wants shown under Key until a
// notice_clear of that key, or until ExpiresAt (epoch milliseconds; 0: no expiry).
// Level is info, warning or error.
type NoticeData struct {
	Key       string `json:"key"`
	Text      string `json:"text"`
	Level     string `json:"level"`
	ExpiresAt int64  `json:"expires_at"`
}

// NoticeClearData is the data of notice_clear: the notice of Key is over.
type NoticeClearData struct {
	Key string `json:"key"`
}

// Warning types.
const (
	WarningFallback   = "fallback"
	WarningRetry      = "retry"      // a model call failed and is retried after a wait
	WarningCompaction = "compaction" // the conversation could not be summarised; it is sent whole
	WarningSilence    = "silence"    // the agent has sent nothing for a while (an ACP turn)
	WarningRefused    = "refused"    // Talaria refused an agent's file request (an ACP turn)
)

// RateLimitWaitData is the data of rate_limit_wait. Until is when the wait ends, in
// epoch milliseconds (every time on the wire is).
type RateLimitWaitData struct {
	Provider  string `json:"provider"`
	Until     int64  `json:"until"`
	UntilKind string `json:"until_kind" ts:"UntilKind"` // "reset" or "retry"
}

// UntilKind values of rate_limit_wait: the wait ends when the provider's rate-limit
// window resets (from its reset headers), or when the runtime retries (Retry-After or
// its own back-off).
const (
	UntilReset = "reset"
	UntilRetry = "retry"
)

// ProviderPhaseData is the data of provider_phase: Phase is nil when the provider is
// simply working (the end of a wait or of prompt reading).
type ProviderPhaseData struct {
	Phase *ProviderPhase `json:"phase"`
}

// ProviderPhase is a phase the provider reports. Phase is "prompt_reading" (the
// server reads a long prompt before the first token), ProgressPercent 0 to 100.
type ProviderPhase struct {
	Phase           string  `json:"phase"`
	ProgressPercent float64 `json:"progress_percent"`
}

// PhasePromptReading is the ProviderPhase.Phase of a server reading the prompt.
const PhasePromptReading = "prompt_reading"

// AgentTitleData is the data of agent_title frames.
type AgentTitleData struct {
	Title string `json:"title"`
}

// AgentStatusData is the data of agent_status frames: Kind is the agent's own word
// for the line (Hermes: status, process, compacting, ...), Text the line.
type AgentStatusData struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// MethodSessionEvent is the notification a sidecar sends for a session outside any
// request: {session_id, event, data}, with event agent_title, agent_session or
// agent_state (e.g. a title the agent made after the turn's reply; the commands an ACP
// agent told between turns).
const MethodSessionEvent = "$/session_event"

// SessionEventParams are the params of $/session_event.
type SessionEventParams struct {
	SessionID string `json:"session_id"`
	Event     string `json:"event"`
	Data      any    `json:"data"`
}

// Agent session methods (runtimes with the feature agent_session).
const (
	// MethodAgentSessions lists the agent's own sessions (made in its CLI, TUI ...).
	MethodAgentSessions = "agent.sessions"
	// MethodAgentHistory reads one agent session's transcript, read-only.
	MethodAgentHistory = "agent.history"
	// MethodAgentModels lists the models the agent can use (Hermes's model.options).
	MethodAgentModels = "agent.models"
)

// AgentSessionsParams are the params of agent.sessions; Limit caps the rows (default
// 200; Hermes runtime). The ACP runtime (ACP session/list, when the agent advertises
// it) takes Workspace, an absolute folder: only the sessions the agent ran there (""
// for all), and Cursor, the previous page's next_cursor ("" for the first page).
type AgentSessionsParams struct {
	Limit     int    `json:"limit,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Cursor    string `json:"cursor,omitempty"`
}

// AgentSessionInfo is one row of agent.sessions. StartedAt is epoch seconds.
type AgentSessionInfo struct {
	AgentSessionID string `json:"agent_session_id"`
	Title          string `json:"title"`
	Preview        string `json:"preview"`
	StartedAt      int64  `json:"started_at"` // epoch milliseconds
	MessageCount   int    `json:"message_count"`
	Source         string `json:"source"`
	// Workspace is the folder the session worked in and UpdatedAt its last activity
	// (epoch milliseconds, 0 when not known): given by the ACP runtime (ACP SessionInfo
	// cwd and updatedAt), which leaves Preview, StartedAt and MessageCount empty.
	Workspace string `json:"workspace,omitempty"`
	UpdatedAt int64  `json:"updated_at,omitempty"`
}

// AgentSessionsResult is the result of agent.sessions, most recently active first (the
// ACP runtime keeps the agent's order). NextCursor, from the ACP runtime, is the cursor
// of the next page ("" on the last one).
type AgentSessionsResult struct {
	Sessions   []AgentSessionInfo `json:"sessions"`
	NextCursor string             `json:"next_cursor,omitempty"`
}

// AgentHistoryParams are the params of agent.history.
type AgentHistoryParams struct {
	AgentSessionID string `json:"agent_session_id"`
}

// AgentHistoryResult is the result of agent.history: the transcript as rows, in
// order. Rows the agent's display transcript does not carry (an assistant row holding
// only tool calls) are absent: the tool rows stand for them.
type AgentHistoryResult struct {
	AgentSessionID string                `json:"agent_session_id"`
	Title          string                `json:"title"`
	Messages       []AgentHistoryMessage `json:"messages"`
}

// AgentHistoryMessage is one row of agent.history. Role is user, assistant, system or
// tool. A tool row is one tool call and its outcome: Name the tool, Content a one-line
// context (the key argument, as the agent shows it), and, when the agent gives them,
// ToolCallID, Args (the call's arguments, a JSON object) and Result (the tool's
// output). CreatedAt is epoch milliseconds, 0 when the agent does not say.
type AgentHistoryMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	Reasoning  string          `json:"reasoning,omitempty"`
	Name       string          `json:"name,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Args       json.RawMessage `json:"args,omitempty" ts_type:"Record<string, any>"`
	Result     string          `json:"result,omitempty"`
	CreatedAt  int64           `json:"created_at,omitempty"`
}

// AgentModelsResult is the result of agent.models: Current is the model the agent
// uses by default ("" when unknown), Providers what it can switch to.
type AgentModelsResult struct {
	Current         string               `json:"current"`
	CurrentProvider string               `json:"current_provider"`
	Providers       []AgentModelProvider `json:"providers"`
}

// AgentModelProvider is one provider of agent.models with its model ids.
type AgentModelProvider struct {
	Name      string   `json:"name"`
	Label     string   `json:"label"`
	Models    []string `json:"models"`
	Current   bool     `json:"current"`
	Available bool     `json:"available"`
}
