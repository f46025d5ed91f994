// Package protocol holds the wire types and the NDJSON JSON-RPC 2.0 codec shared by
// the host (backend/supervisor) and every sidecar runtime. The authoritative text is
// docs/protocol.md; every name here appears there.
package protocol

import (
	"encoding/json"
	"fmt"
)

// Version is the protocol version exchanged in rpc.hello. A host refuses a sidecar that
// answers with another number (condition agent_incompatible).
const Version = 1

// MaxLineBytes is the longest NDJSON line either end accepts: 16 MiB, newline excluded.
const MaxLineBytes = 16 << 20

// Method names (docs/protocol.md, "Lifecycle methods" and "Chat methods").
const (
	MethodHello       = "rpc.hello"
	MethodPing        = "rpc.ping"
	MethodShutdown    = "rpc.shutdown"
	MethodChatStart   = "chat.start"
	MethodAuxComplete = "aux.complete"
	MethodChatEvict   = "chat.evict"
	// MethodChatCompact asks a runtime that keeps its own conversation (Hermes) to
	// compress it now: params {session_id, agent_session_id}, result {ok, message}.
	MethodChatCompact = "chat.compact"
	// Notifications.
	MethodFrame  = "$/frame"
	MethodCancel = "$/cancel"
)

// JSON-RPC 2.0 error codes (https://www.jsonrpc.org/specification#error_object) and
// the one application code this protocol uses.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	CodeApplication    = -32000
)

// Conditions carried in Error.Data.Condition (docs/protocol.md, "Transport").
const (
	CondInvalidParams           = "invalid_params"
	CondMethodNotFound          = "method_not_found"
	CondParseError              = "parse_error"
	CondLineTooLong             = "line_too_long"
	CondCredentialMissing       = "credential_missing"
	CondLocalRuntimeUnavailable = "local_runtime_unavailable"
	CondModelNotFound           = "model_not_found"
	CondRateLimited             = "rate_limited"
	CondProviderError           = "provider_error"
	CondAgentUnavailable        = "agent_unavailable"
	CondAgentIncompatible       = "agent_incompatible"
	// CondAgentError: an external agent (ACP) refused or failed a request; the message
	// carries its own words.
	CondAgentError         = "agent_error"
	CondNotRunning         = "not_running"
	CondCancelled          = "cancelled"
	CondSidecarUnavailable = "sidecar_unavailable"
	CondInternal           = "internal"
	// CondContextTooLong: the conversation does not fit the model's context window
	// (the provider said so); data.hint says to summarise or start a new chat.
	CondContextTooLong = "context_too_long"
	// CondNetworkError: the provider could not be reached at all (DNS, TLS, a
	// refused or cut connection before any answer).
	CondNetworkError = "network_error"
	// CondStreamInterrupted: the provider answered but its stream stopped before the
	// answer was finished: the connection dropped, it went silent (the idle timeout),
	// or it ended without a finish reason. Never with an http_status.
	CondStreamInterrupted = "stream_interrupted"
)

// DefaultStreamIdleTimeoutS is how long a model call's stream may send nothing before
// the built-in runtime gives up on it, in seconds.
const DefaultStreamIdleTimeoutS = 120

// Envelope is one NDJSON line: a request (ID and Method), a notification (Method, no
// ID), a result (ID and Result) or an error (ID, possibly null, and Error).
type Envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// IsRequest reports whether the envelope is a request (has a method and an id).
func (e *Envelope) IsRequest() bool { return e.Method != "" && len(e.ID) > 0 && string(e.ID) != "null" }

// IsNotification reports whether the envelope is a notification (method, no id).
func (e *Envelope) IsNotification() bool {
	return e.Method != "" && (len(e.ID) == 0 || string(e.ID) == "null")
}

// Error is a JSON-RPC error object. It implements error; Data.Condition is what callers
// decide on (errors.As, then switch on Condition).
type Error struct {
	Code    int        `json:"code"`
	Message string     `json:"message"`
	Data    *ErrorData `json:"data,omitempty"`
}

// ErrorData is the data member of every error this protocol sends.
type ErrorData struct {
	// Condition is one of the Cond* constants.
	Condition string `json:"condition"`
	// HTTPStatus is the provider's HTTP status code when the error came from one, else 0.
	HTTPStatus int `json:"http_status,omitempty"`
	// RetryAfterSeconds is the provider's Retry-After in seconds (rate_limited), else 0.
	RetryAfterSeconds float64 `json:"retry_after_s,omitempty"`
	// ProviderCode is the provider's own error code (or type when it gave no code), e.g.
	// "insufficient_quota" or "context_length_exceeded", so the host can refine its
	// classification; "" when the provider gave none.
	ProviderCode string `json:"provider_code,omitempty"`
	// Partial is the visible text streamed before a chat.start failed, if any.
	Partial string `json:"partial,omitempty"`
	// Messages are the rows the turn completed before it failed (OpenAI-style).
	Messages []ChatMessage `json:"messages,omitempty"`
	// PendingSteer are the steers a failed chat.start never took, oldest first (like
	// the result's pending_steer).
	PendingSteer []SteerItem `json:"pending_steer,omitempty"`
	// Hint says what the user can do about it (e.g. how to install Hermes Agent), when
	// the sidecar knows better than the host's generic advice.
	Hint string `json:"hint,omitempty"`
}

func (e *Error) Error() string {
	if e.Data != nil && e.Data.Condition != "" {
		return fmt.Sprintf("%s: %s", e.Data.Condition, e.Message)
	}
	return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message)
}

// Condition returns e.Data.Condition, or "" when there is no data.
func (e *Error) Condition() string {
	if e == nil || e.Data == nil {
		return ""
	}
	return e.Data.Condition
}

// NewError builds an application error (code -32000 unless code is non-zero) with a
// condition.
func NewError(code int, condition, message string) *Error {
	if code == 0 {
		code = CodeApplication
	}
	return &Error{Code: code, Message: message, Data: &ErrorData{Condition: condition}}
}

// CancelParams are the params of the $/cancel notification: the id of the request to
// cancel.
type CancelParams struct {
	ID json.RawMessage `json:"id"`
}

// FrameParams are the params of a $/frame notification. ID is the request the frame
// belongs to; Seq starts at 1 and increases by 1 per request.
type FrameParams struct {
	ID    json.RawMessage `json:"id"`
	Seq   int64           `json:"seq"`
	Event string          `json:"event"`
	Data  json.RawMessage `json:"data"`
}

// HelloParams are the params of rpc.hello.
type HelloParams struct {
	Protocol    int    `json:"protocol"`
	HostVersion string `json:"host_version"`
}

// Runtime kinds: rpc.hello's runtime, and the kind part of a host runtime id.
const (
	RuntimeBuiltin = "builtin" // our own agent loop for OpenAI-compatible endpoints
	RuntimeHermes  = "hermes"  // the user's Hermes Agent through its gateway
	RuntimeACP     = "acp"     // any agent speaking the Agent Client Protocol
)

// HelloResult is the result of rpc.hello.
type HelloResult struct {
	Protocol       int      `json:"protocol"`
	SidecarVersion string   `json:"sidecar_version"`
	Runtime        string   `json:"runtime"` // RuntimeBuiltin, RuntimeHermes or RuntimeACP
	AgentVersion   string   `json:"agent_version"`
	Python         string   `json:"python,omitempty"`
	Capabilities   []string `json:"capabilities"`
	// Features are what the runtime's agent offers beyond methods (Feature*); omitted
	// when none.
	Features []string `json:"features,omitempty"`
	// Dialect is the agent interface's dialect when it has several (Hermes's gateway:
	// "A" up to 0.19, "B" after), else omitted.
	Dialect string `json:"dialect,omitempty"`
	// Sandbox says whether the runtime confines commands here (omitted by a runtime
	// that does not say).
	Sandbox *SandboxStatus `json:"sandbox,omitempty"`
}

// Feature flags of rpc.hello (docs/protocol.md, "Lifecycle methods").
const (
	// FeatureAgentSession: chat.start binds the session to an agent-side session, sent
	// in agent_session frames and resumed from chat.start's agent_session_id.
	FeatureAgentSession = "agent_session"
	// FeatureAgentTitle: the agent names sessions itself (agent_title frames and
	// $/session_event); the host then asks no model for a title.
	FeatureAgentTitle = "agent_title"
	// FeatureApprovalChoices: approval frames carry the choices the agent allows.
	FeatureApprovalChoices = "approval_choices"
	// FeatureClarifyMulti: a clarify may carry up to 5 questions with multi_select.
	FeatureClarifyMulti = "clarify_multi"
	// FeatureAgentSecretStore: the agent keeps the secrets it is given itself (Hermes
	// writes them to its own .env); vault clarifies carry agent_notice saying so.
	FeatureAgentSecretStore = "agent_secret_store"
	// FeatureImages: the runtime takes image parts (image_file, image_url) in
	// user_message and conversation_history (see "Content parts"); without it the host
	// sends no images to the runtime.
	FeatureImages = "images"
	// FeatureReasoningEffort and FeatureMaxOutputTokens: chat.start's
	// reasoning_effort and max_output_tokens are honoured.
	FeatureReasoningEffort = "reasoning_effort"
	FeatureMaxOutputTokens = "max_output_tokens"
)

// PingResult is the result of rpc.ping. Runs is the number of live chat.start calls.
type PingResult struct {
	OK   bool `json:"ok"`
	Runs int  `json:"runs"`
}

// OKResult is the result of rpc.shutdown and other acknowledgements.
type OKResult struct {
	OK bool `json:"ok"`
}

// Provider names an OpenAI-compatible endpoint for the built-in runtime. BaseURL ends
// before "/chat/completions" (e.g. "http://127.0.0.1:11434/v1"). APIKey is optional
// and is never logged.
type Provider struct {
	Name    string `json:"name"`
	BaseURL string `json:"base_url"`
	APIKey  string `json:"api_key,omitempty"`
}

// ToolCall is one tool call of an assistant message (OpenAI chat-completions shape).
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"` // "function"
	Function ToolFunction `json:"function"`
}

// ToolFunction is the function member of a ToolCall; Arguments is a JSON text.
type ToolFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Message roles (ChatMessage.Role).
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ChatMessage is one OpenAI-style message of a conversation. Reasoning and Partial are
// this protocol's extensions, never sent to a provider: Reasoning is the model's
// reasoning text, kept for display; Partial marks an assistant row whose model call was
// cut before it finished (the turn was stopped, or chat.steer_now restarted the call).
//
// Content is the message's text. Parts, when not empty, are its content parts (text and
// images, see content.go): the wire's "content" is then the list of parts, and Content
// the text of its text parts.
type ChatMessage struct {
	Role       string        `json:"role"` // system, user, assistant, tool
	Content    string        `json:"content"`
	Parts      []ContentPart `json:"-"`
	Reasoning  string        `json:"reasoning,omitempty"`
	ToolCalls  []ToolCall    `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
	Name       string        `json:"name,omitempty"`
	Partial    bool          `json:"partial,omitempty"`
}

// Usage are token counters; EstimatedCost is in US dollars (0 when unknown).
// CostReported is set when EstimatedCost is the provider's own figure (OpenRouter's
// usage.cost), which may be 0 for a free model; without it a cost is the host's, from
// a price the user set, or unknown.
type Usage struct {
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	CacheReadTokens  int64   `json:"cache_read_tokens"`
	CacheWriteTokens int64   `json:"cache_write_tokens"`
	EstimatedCost    float64 `json:"estimated_cost"`
	CostReported     bool    `json:"cost_reported,omitempty"`
}

// Add returns u plus o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      u.InputTokens + o.InputTokens,
		OutputTokens:     u.OutputTokens + o.OutputTokens,
		CacheReadTokens:  u.CacheReadTokens + o.CacheReadTokens,
		CacheWriteTokens: u.CacheWriteTokens + o.CacheWriteTokens,
		EstimatedCost:    u.EstimatedCost + o.EstimatedCost,
		CostReported:     u.CostReported || o.CostReported,
	}
}

// ContextInfo describes the model's context window, in tokens.
type ContextInfo struct {
	ContextLength    int64 `json:"context_length"`
	ThresholdTokens  int64 `json:"threshold_tokens"`
	LastPromptTokens int64 `json:"last_prompt_tokens"`
	// LastOutputTokens is the answer of the last model call (with LastPromptTokens, how
	// full the context is after the turn); 0 when unknown.
	LastOutputTokens int64 `json:"last_output_tokens,omitempty"`
}

// ChatStartParams are the params of chat.start. UserMessage is the user's text;
// UserParts, when not empty, its content parts (text and images): the wire's
// "user_message" is then the list of parts (see content.go).
type ChatStartParams struct {
	SessionID             string        `json:"session_id"`
	StreamID              string        `json:"stream_id"`
	Workspace             string        `json:"workspace"`
	Model                 string        `json:"model"`
	Provider              Provider      `json:"provider"`
	UserMessage           string        `json:"user_message"`
	UserParts             []ContentPart `json:"-"`
	ConversationHistory   []ChatMessage `json:"conversation_history"`
	SystemMessage         string        `json:"system_message,omitempty"`
	EphemeralSystemPrompt string        `json:"ephemeral_system_prompt,omitempty"`
	EnabledToolsets       []string      `json:"enabled_toolsets,omitempty"`
	MaxIterations         int           `json:"max_iterations,omitempty"`
	ApprovalTimeoutS      int           `json:"approval_timeout_s,omitempty"` // seconds; 300 when 0
	ClarifyTimeoutS       int           `json:"clarify_timeout_s,omitempty"`  // seconds; 3600 when 0
	// ApprovalAllowlist are dangerous-pattern keys the user allowed for this session or
	// always; commands matching only these run without an approval (hardline ones never).
	ApprovalAllowlist []string `json:"approval_allowlist,omitempty"`
	Yolo              bool     `json:"yolo,omitempty"`
	Ephemeral         bool     `json:"ephemeral,omitempty"`
	// AgentSessionID names the agent's own session to continue (a Hermes or ACP
	// session id the runtime reported earlier in an agent_session frame or the result);
	// "" starts a new one, seeded with ConversationHistory. The built-in runtime keeps
	// no sessions of its own and ignores it.
	AgentSessionID string `json:"agent_session_id,omitempty"`
	// ReasoningEffort asks the model to think less or more: ReasoningNone, ReasoningLow,
	// ReasoningMedium, ReasoningHigh; "" leaves it to the provider. A runtime whose
	// provider has no such setting ignores it.
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// MaxOutputTokens bounds each model call's answer (tokens); 0 leaves it to the
	// provider.
	MaxOutputTokens int `json:"max_output_tokens,omitempty"`
	// StreamIdleTimeoutS ends a model call whose stream sent no byte for this long
	// (seconds; 0: DefaultStreamIdleTimeoutS, 120). The built-in runtime's only.
	StreamIdleTimeoutS int `json:"stream_idle_timeout_s,omitempty"`
	// Title is the session's current title, for an agent that keeps titles itself
	// (Hermes gets it when it creates the session).
	Title string `json:"title,omitempty"`
	// Sandbox confines the session's commands and file tools (nil: workspace-write, no
	// network, nothing hidden beyond the runtime's own list).
	Sandbox *SandboxPolicy `json:"sandbox,omitempty"`
	// AgentMode and AgentModel are the mode and model the user chose for this chat
	// in an ACP agent's pickers ("" keeps the agent's own).
	AgentMode  string `json:"agent_mode,omitempty"`
	AgentModel string `json:"agent_model,omitempty"`
	// MCPServers are the MCP servers this chat enables (docs/protocol.md, "MCP
	// servers"); the built-in runtime offers their tools, another runtime hands them to
	// its agent.
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	// Redaction carries the fingerprints of the secrets the host knows (nil: none).
	Redaction *Redaction `json:"redaction,omitempty"`
}

// Reasoning efforts of chat.start's reasoning_effort (OpenAI's values, which Ollama,
// LM Studio and OpenRouter accept too).
const (
	ReasoningNone   = "none"
	ReasoningLow    = "low"
	ReasoningMedium = "medium"
	ReasoningHigh   = "high"
)

// ReasoningEfforts lists the valid non-empty reasoning_effort values, least first.
var ReasoningEfforts = []string{ReasoningNone, ReasoningLow, ReasoningMedium, ReasoningHigh}

// Result statuses of chat.start.
const (
	StatusCompleted = "completed"
	StatusError     = "error"
	StatusCancelled = "cancelled"
)

// ChatResult is the result of chat.start. Messages are the turn's new rows (assistant
// and tool messages; never the user message, which the host already saved).
type ChatResult struct {
	Status           string        `json:"status"`
	Messages         []ChatMessage `json:"messages"`
	FinalResponse    string        `json:"final_response"`
	Error            string        `json:"error,omitempty"`
	Failed           bool          `json:"failed,omitempty"`
	Partial          bool          `json:"partial,omitempty"`
	Usage            Usage         `json:"usage"`
	Context          ContextInfo   `json:"context"`
	Model            string        `json:"model"`
	Provider         string        `json:"provider"`
	PendingSteer     []SteerItem   `json:"pending_steer,omitempty"`
	ToolLimitReached bool          `json:"tool_limit_reached,omitempty"`
	// Truncated is set when the last answer was cut before it was whole:
	// TruncatedLength or TruncatedContentFilter ("" when it finished).
	Truncated string `json:"truncated,omitempty" ts:"TruncatedReason"`
	// AgentSessionID is the agent's own session the turn ran in ("" for the built-in
	// runtime); the host stores it on the session for the next chat.start.
	AgentSessionID string `json:"agent_session_id,omitempty"`
}

// AuxCompleteParams are the params of aux.complete (one-shot completion, no frames).
// MaxTokens bounds the answer, in tokens.
type AuxCompleteParams struct {
	Task      string        `json:"task"` // AuxTitle or AuxCompaction
	Messages  []ChatMessage `json:"messages"`
	MaxTokens int           `json:"max_tokens,omitempty"`
	Model     string        `json:"model"`
	Provider  Provider      `json:"provider"`
}

// aux.complete tasks.
const (
	// AuxTitle names a session from its first exchange.
	AuxTitle = "title_generation"
	// AuxCompaction summarises the older turns of a conversation so that the summary
	// can replace them in what is sent to the model.
	AuxCompaction = "compaction"
)

// AuxCompleteResult is the result of aux.complete.
type AuxCompleteResult struct {
	Text string `json:"text"`
}

// CompactParams are the params of chat.compact: the session and the agent's own
// session to compress.
type CompactParams struct {
	SessionID      string `json:"session_id"`
	AgentSessionID string `json:"agent_session_id"`
}

// CompactResult is the result of chat.compact: OK when the agent compressed its
// context, Message what it said.
type CompactResult struct {
	OK      bool   `json:"ok"`
	Message string `json:"message"`
}

// EvictParams / EvictResult: chat.evict drops a session's cached agent state.
//
// Delete says the chat itself was deleted (not only moved to another runtime) and its
// agent session is Talaria's own (the host leaves it false for a session continued from
// the agent's own sessions, whose history lives there): an ACP agent that advertises
// sessionCapabilities.delete is then asked to delete its session too (session/delete),
// best effort. AgentSessionID is the agent session the chat was
// bound to (the store's), used when this sidecar has not opened the chat itself.
type EvictParams struct {
	SessionID      string `json:"session_id"`
	Delete         bool   `json:"delete,omitempty"`
	AgentSessionID string `json:"agent_session_id,omitempty"`
}

// EvictResult is the result of chat.evict. AgentError, when set, is why the agent
// refused or failed to delete its session (its own words); the chat is deleted anyway.
type EvictResult struct {
	Evicted    bool   `json:"evicted"`
	AgentError string `json:"agent_error,omitempty"`
}
