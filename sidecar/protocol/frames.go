package protocol

// Frame event names. The sidecar sends the first group as $/frame notifications; the
// host adds the second group; the window sees both in its `frame` event (less
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
		EvProviderPhase, EvNotice, EvNoticeClear}
	HostEvents = []string{EvUserMessage, EvTodoState, EvMetering, EvRunStatus, EvSteerQueue, EvSteerConsumed,
		EvSteerWithdrawn, EvTitle, EvDone, EvAppError, EvCancel, EvStreamEnd}
)

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
type WarningData struct {
	Type    string `json:"type" ts:"WarningType"`
	Message string `json:"message"`
}

// MessageData is the data of compressing and compression_finished: what the agent says
// about compacting the conversation.
type MessageData struct {
	Message string `json:"message"`
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
	WarningFallback = "fallback"
	WarningRetry    = "retry" // a model call failed and is retried after a wait
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
