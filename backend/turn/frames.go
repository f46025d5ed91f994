package turn

import (
	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// StreamingFrame reports whether ev is a frame that only grows a live answer: a text
// or reasoning delta, or the running figures (usage, metering). The window's batcher
// (bus.Batcher) lets these wait up to bus.FrameBatchInterval to travel together; any
// other frame (a tool call, an approval, the agent's state, the stream's end) goes at
// once.
func StreamingFrame(ev bus.Event) bool {
	f, ok := ev.Payload.(Frame)
	if !ok {
		return false
	}
	switch f.Event {
	case protocol.EvToken, protocol.EvReasoning, protocol.EvUsage, protocol.EvMetering:
		return true
	}
	return false
}

// The data of every frame the window sees that the host writes or rewrites. Each is
// registered with its event in backend/contract, which generates the TypeScript types
// of frontend/src/lib/protocol.gen.ts from them: emit these types, never a map.
// Times are epoch milliseconds (int64), durations carry their unit in their name.

// UserMessageData is the data of user_message: the turn's saved user row.
type UserMessageData struct {
	Message store.Message `json:"message"`
}

// TodoStateData is the data of todo_state: the agent's whole todo list.
type TodoStateData struct {
	Todos []protocol.TodoItem `json:"todos"`
}

// MeteringData is the data of metering (at most once a second): the usage so far and
// the output rate in tokens per second. Estimated: the output count is guessed from
// the token deltas (the provider has not reported usage yet).
type MeteringData struct {
	Usage     protocol.Usage `json:"usage"`
	TPS       float64        `json:"tps"`
	Estimated bool           `json:"estimated"`
}

// Run statuses of run_status.
const (
	RunWorking       = "working"
	RunCompressing   = "compressing"
	RunRateLimitWait = "rate_limit_wait"
	RunPromptReading = "prompt_reading"
)

// RunStatusData is the data of run_status. Status is null when the turn is over (or
// between phases). Until (rate_limit_wait) is when the wait ends, in epoch
// milliseconds; Provider is who asked to wait; ProgressPercent (prompt_reading) is 0 to
// 100; Detail (working) is the agent's own status line (agent_status), at most 300
// bytes.
type RunStatusData struct {
	Status          *string `json:"status" ts:"RunStatusKind | null"`
	Until           int64   `json:"until,omitempty"`
	Provider        string  `json:"provider,omitempty"`
	ProgressPercent float64 `json:"progress_percent,omitempty"`
	Detail          string  `json:"detail,omitempty"`
}

// SteerQueueData is the data of steer_queue: the host's whole queue of steers not yet
// read by the agent, oldest first (the latest frame wins).
type SteerQueueData struct {
	Steers []SteerInfo `json:"steers"`
}

// SteerConsumedData is the data of steer_consumed: the agent read this steer here.
type SteerConsumedData struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// SteerWithdrawnData is the data of steer_withdrawn: the user took this steer back.
type SteerWithdrawnData struct {
	ID string `json:"id"`
}

// TitleData is the data of title: the session's (new) title.
type TitleData struct {
	Title string `json:"title"`
}

// DoneData is the data of done. DurationSeconds is the turn's wall time; TPS the
// output rate; TerminalState the sidecar's result status; ToolLimitReached says the
// agent stopped at its tool-call limit for the turn; Truncated that the answer was cut; CostSource says where
// usage.estimated_cost comes from ("" none, "provider", "price"); Model is the model
// that answered; Context how full its context window is after the turn.
type DoneData struct {
	Usage            protocol.Usage `json:"usage"`
	DurationSeconds  float64        `json:"duration_seconds"`
	TPS              float64        `json:"tps"`
	TerminalState    string         `json:"terminal_state" ts:"ResultStatus"`
	ToolLimitReached bool           `json:"tool_limit_reached"`
	// Truncated is set when the answer was cut (protocol.TruncatedLength or
	// TruncatedContentFilter); a truncated marker row follows it in the transcript.
	Truncated  string      `json:"truncated,omitempty" ts:"TruncatedReason"`
	CostSource string      `json:"cost_source" ts:"CostSource"`
	Model      string      `json:"model"`
	Context    DoneContext `json:"context"`
}

// DoneContext is done's context: UsedTokens of ContextLength (tokens; 0 when unknown).
type DoneContext struct {
	UsedTokens    int64 `json:"used_tokens"`
	ContextLength int64 `json:"context_length"`
}

// CancelData is the data of cancel: Partial says some answer was streamed; the steers
// the agent never read go back to the composer (UnsentSteers).
type CancelData struct {
	Partial         bool     `json:"partial"`
	DurationSeconds float64  `json:"duration_seconds"`
	UnsentSteers    []string `json:"unsent_steers"`
}

// StreamEndData is the (empty) data of stream_end, the last frame of every stream.
type StreamEndData struct{}

// ToolCompleteFrame is tool_complete as the window sees it: the sidecar's data plus the
// host's decision whether the tool failed (IsError), its run time in seconds (Duration)
// and a summary of the files it edited (EditDiff, null when none).
type ToolCompleteFrame struct {
	protocol.ToolCompleteData
	IsError  bool      `json:"is_error"`
	Duration float64   `json:"duration"`
	EditDiff *EditDiff `json:"edit_diff"`
}

// ApprovalFrame is approval as the window sees it: the sidecar's data, when the
// sidecar denies it (ExpiresAt, epoch milliseconds; 0 when it never does) and how many
// approvals wait in the session, this one included.
type ApprovalFrame struct {
	protocol.ApprovalData
	ExpiresAt    int64 `json:"expires_at"`
	PendingCount int   `json:"pending_count"`
}

// ClarifyFrame is clarify as the window sees it: the sidecar's data, when the sidecar
// gives up (ExpiresAt, epoch milliseconds; 0 when never), the session's count of
// waiting clarifies, and for a vault prompt what the host knows of the secret.
type ClarifyFrame struct {
	protocol.ClarifyData
	VaultStatus
	ExpiresAt    int64 `json:"expires_at"`
	PendingCount int   `json:"pending_count"`
}

// ApprovalResolvedFrame is approval_resolved as the window sees it: PendingCount
// approvals still wait in the session.
type ApprovalResolvedFrame struct {
	ApprovalID   string `json:"approval_id"`
	Reason       string `json:"reason" ts:"ResolvedReason"`
	Choice       string `json:"choice,omitempty" ts:"ApprovalChoice"`
	PendingCount int    `json:"pending_count"`
}

// ClarifyResolvedFrame is clarify_resolved as the window sees it: PendingCount
// clarifies still wait in the session.
type ClarifyResolvedFrame struct {
	ClarifyID    string `json:"clarify_id"`
	Reason       string `json:"reason" ts:"ResolvedReason"`
	PendingCount int    `json:"pending_count"`
}
