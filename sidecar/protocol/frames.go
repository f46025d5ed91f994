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
		EvProviderPhase, EvNotice, EvNoticeClear}
	HostEvents = []string{EvUserMessage, EvTodoState, EvMetering, EvRunStatus, EvSteerConsumed,
		EvSteerWithdrawn, EvTitle, EvDone, EvAppError, EvCancel, EvStreamEnd}
)

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

// RateLimitWaitData is the data of rate_limit_wait. Until is in epoch seconds.
type RateLimitWaitData struct {
	Provider  string  `json:"provider"`
	Until     float64 `json:"until"`
	UntilKind string  `json:"until_kind"` // "reset" or "retry"
}
