package protocol

// Frame event names. The sidecar sends the first group as $/frame notifications; the
// host adds the second group; the window sees both in its `frame` event. The list is
// mirrored in frontend/src/lib/protocol.ts and a test keeps the two equal.
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
	// EvAgentSession carries {agent_session_id} as soon as a runtime with agent-side
	// sessions knows it, so a crash mid-turn can still resume.
	EvAgentSession = "agent_session"

	// Added by the host.
	EvUserMessage    = "user_message"
	EvTodoState      = "todo_state"
	EvMetering       = "metering"
	EvRunStatus      = "run_status"
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
		EvProviderPhase, EvNotice, EvNoticeClear, EvAgentSession, EvAgentState, EvSessionTitle, EvPlan}
	HostEvents = []string{EvUserMessage, EvTodoState, EvMetering, EvRunStatus, EvSteerConsumed,
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

// StatusData is the data of a status frame.
type StatusData struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
}

// WarningData is the data of a warning frame (Type: fallback, retry).
type WarningData struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Warning types.
const (
	WarningFallback = "fallback"
	WarningRetry    = "retry" // a model call failed and is retried after a wait
)

// RateLimitWaitData is the data of rate_limit_wait. Until is in epoch seconds.
type RateLimitWaitData struct {
	Provider  string  `json:"provider"`
	Until     float64 `json:"until"`
	UntilKind string  `json:"until_kind"` // "reset" or "retry"
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
