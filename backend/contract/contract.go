// Package contract is the one declaration of what crosses the window boundary: every
// frame the window receives (event name and the Go type of its data), every app event,
// every type a bound method takes or returns, the enums and the constants. The
// TypeScript of frontend/src/lib/protocol.gen.ts is generated from it (`make
// bindings`, or `go run ./backend/contract/tsgen`), and its tests fail when the two
// drift: the generated file is not current, a frame event has no type, a frame the
// host emits has a member its type does not declare, a bound method uses a type that
// is not generated.
//
// Adding a frame: declare its name in sidecar/protocol/frames.go (SidecarEvents or
// HostEvents), its data type beside the code that emits it (sidecar/protocol for a
// runtime's frame, backend/turn/frames.go for the host's), add a Frame entry below,
// run `make bindings` and handle it in frontend/src/lib/reducer.ts. docs/protocol.md
// ("The Go/TypeScript contract") says the same.
package contract

import (
	"reflect"
	"slices"

	"talaria/backend"
	"talaria/backend/attachments"
	"talaria/backend/bus"
	"talaria/backend/core"
	"talaria/backend/history"
	"talaria/backend/remote"
	"talaria/backend/store"
	"talaria/backend/supervisor"
	"talaria/backend/tasks"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// Frame registers the data type of one frame event. Name is its TypeScript name when
// it differs from the Go name. SidecarOnly frames are consumed by the host and never
// reach the window (their TypeScript is not generated).
type Frame struct {
	Event       string
	Data        any
	Name        string
	SidecarOnly bool
}

// Frames lists every event of protocol.SidecarEvents and protocol.HostEvents.
var Frames = []Frame{
	// Sent by a runtime (relayed unchanged unless the host adds members).
	{Event: protocol.EvToken, Data: protocol.TextData{}},
	{Event: protocol.EvReasoning, Data: protocol.TextData{}},
	{Event: protocol.EvInterimAssistant, Data: protocol.TextData{}},
	{Event: protocol.EvTool, Data: protocol.ToolData{}},
	{Event: protocol.EvToolComplete, Data: turn.ToolCompleteFrame{}, Name: "ToolCompleteData"},
	{Event: protocol.EvUsage, Data: protocol.Usage{}},
	{Event: protocol.EvSteerPending, Data: protocol.SteerPendingData{}, SidecarOnly: true},
	{Event: protocol.EvApproval, Data: turn.ApprovalFrame{}, Name: "ApprovalData"},
	{Event: protocol.EvApprovalResolved, Data: turn.ApprovalResolvedFrame{}, Name: "ApprovalResolvedData"},
	{Event: protocol.EvApprovalAuto, Data: protocol.ApprovalAutoData{}},
	{Event: protocol.EvClarify, Data: turn.ClarifyFrame{}, Name: "ClarifyData"},
	{Event: protocol.EvClarifyResolved, Data: turn.ClarifyResolvedFrame{}, Name: "ClarifyResolvedData"},
	{Event: protocol.EvStatus, Data: protocol.StatusData{}},
	{Event: protocol.EvWarning, Data: protocol.WarningData{}},
	{Event: protocol.EvCompressing, Data: protocol.MessageData{}},
	{Event: protocol.EvCompressionFinished, Data: protocol.CompressionFinishedData{}},
	{Event: protocol.EvRateLimitWait, Data: protocol.RateLimitWaitData{}},
	{Event: protocol.EvProviderPhase, Data: protocol.ProviderPhaseData{}},
	{Event: protocol.EvNotice, Data: protocol.NoticeData{}},
	{Event: protocol.EvNoticeClear, Data: protocol.NoticeClearData{}},
	{Event: protocol.EvAgentSession, Data: protocol.AgentSessionData{}, SidecarOnly: true},
	{Event: protocol.EvAgentTitle, Data: protocol.AgentTitleData{}, SidecarOnly: true},
	{Event: protocol.EvAgentStatus, Data: protocol.AgentStatusData{}, SidecarOnly: true},
	{Event: protocol.EvAgentState, Data: protocol.AgentState{}},
	{Event: protocol.EvPlan, Data: protocol.TodoList{}},
	{Event: protocol.EvTruncated, Data: protocol.TruncatedData{}},
	// Added by the host.
	{Event: protocol.EvUserMessage, Data: turn.UserMessageData{}},
	{Event: protocol.EvTodoState, Data: turn.TodoStateData{}},
	{Event: protocol.EvMetering, Data: turn.MeteringData{}},
	{Event: protocol.EvRunStatus, Data: turn.RunStatusData{}},
	{Event: protocol.EvSteerQueue, Data: turn.SteerQueueData{}},
	{Event: protocol.EvSteerConsumed, Data: turn.SteerConsumedData{}},
	{Event: protocol.EvSteerWithdrawn, Data: turn.SteerWithdrawnData{}},
	{Event: protocol.EvTitle, Data: turn.TitleData{}},
	{Event: protocol.EvDone, Data: turn.DoneData{}},
	{Event: protocol.EvAppError, Data: turn.AppError{}, Name: "AppErrorData"},
	{Event: protocol.EvCancel, Data: turn.CancelData{}},
	{Event: protocol.EvStreamEnd, Data: turn.StreamEndData{}},
}

// TerminalEvents are the frames that end a turn (each is followed by stream_end).
var TerminalEvents = []string{protocol.EvDone, protocol.EvAppError, protocol.EvCancel}

// AppEvent registers a runtime event the app emits besides frames: Key is its member
// in the generated APP_EVENTS object, Payload the Go type it carries (nil: none).
type AppEvent struct {
	Key     string
	Name    string
	Payload any
}

// AppEvents lists every event app/ emits (the names of backend/bus and backend).
var AppEvents = []AppEvent{
	{Key: "frames", Name: bus.EventFrames, Payload: []turn.Frame{}},
	{Key: "sessionsChanged", Name: bus.EventSessionsChanged},
	{Key: "sidecarStatus", Name: bus.EventSidecarStatus, Payload: supervisor.Status{}},
	{Key: "openSession", Name: bus.EventOpenSession, Payload: bus.OpenSessionData{}},
	{Key: "activity", Name: backend.EventActivity, Payload: backend.Activity{}},
	{Key: "backgroundTasks", Name: bus.EventBackgroundTasks, Payload: tasks.Update{}},
	{Key: "auditChanged", Name: backend.EventAuditChanged},
	{Key: "database", Name: backend.EventDatabase, Payload: backend.DatabaseEvent{}},
	{Key: "agentState", Name: bus.EventAgentState, Payload: bus.AgentStateData{}},
	{Key: "agentNotice", Name: backend.EventAgentNotice, Payload: backend.AgentNotice{}},
}

// TypeName gives a registered type its TypeScript name ("" keeps the Go name).
type TypeName struct {
	Value any
	Name  string
}

// Types are the other shapes the window sees: what bound methods take and return.
// TestBoundMethodTypesAreGenerated (app/) checks none is missing.
var Types = []TypeName{
	{backend.UserError{}, ""},
	{store.Session{}, "SessionInfo"},
	{store.Message{}, "MessageView"},
	{backend.SessionView{}, ""},
	{backend.TranscriptPage{}, ""},
	{backend.DatabaseEvent{}, ""},
	{turn.Started{}, "TurnStarted"},
	{backend.Settings{}, ""},
	{backend.SettingsInput{}, ""},
	{backend.ProviderCheck{}, ""},
	{backend.Status{}, ""},
	{core.Paths{}, "StatusPaths"},
	{backend.Diagnostics{}, ""},
	{backend.PendingView{}, ""},
	{backend.AllowRule{}, "AllowlistEntry"},
	{backend.VaultAnswer{}, ""},
	{backend.VaultResult{}, ""},
	{backend.ExportFile{}, ""},
	{store.SearchHit{}, ""},
	{store.Draft{}, ""},
	{store.RecoveryReport{}, ""},
	{tasks.Task{}, "BackgroundTask"},
	{tasks.Pending{}, "TaskPending"},
	{tasks.Result{}, "TaskResult"},
	{tasks.SideQuestion{}, ""},
	{tasks.Update{}, "BackgroundTasksUpdate"},
	{turn.SteerInfo{}, ""},
	{turn.SteerOutcome{}, ""},
	{protocol.SteerNowResult{}, ""},
	{core.RuntimeOption{}, ""},
	{backend.ChatOptions{}, ""},
	{backend.About{}, ""},
	{backend.Autostart{}, ""},
	{backend.MCPServerConfig{}, ""},
	{backend.ChatMCP{}, ""},
	{backend.MCPImportResult{}, ""},
	{backend.MCPAuthState{}, ""},
	{backend.MCPPromptText{}, ""},
	{protocol.MCPServerReport{}, ""},
	{protocol.MCPResourceReadResult{}, ""},
	{attachments.AttachmentContent{}, ""},
	{backend.Branched{}, ""},
	{backend.ChatFigures{}, ""},
	{backend.ChatPreferences{}, ""},
	{backend.ChatSettings{}, ""},
	{backend.CompactResult{}, ""},
	{backend.ModelInfo{}, ""},
	{backend.ModelSettings{}, ""},
	{backend.QuickAskStatus{}, ""},
	{backend.HermesSettings{}, ""},
	{backend.HermesSession{}, ""},
	{backend.ACPSession{}, ""},
	{protocol.AgentHistoryResult{}, "HermesHistory"},
	{protocol.AgentModelsResult{}, "HermesModels"},
	{history.Progress{}, ""},
	{history.HermesRequest{}, ""},
	{remote.Host{}, "RemoteHost"},
	{remote.HostRecord{}, "RemoteHostRecord"},
	{remote.Probe{}, "RemoteProbe"},
	{backend.ACPAgent{}, ""},
	{backend.ACPPreset{}, ""},
	{backend.ACPTestResult{}, ""},
	{backend.SessionSandbox{}, ""},
	{store.AuditEntry{}, ""},
	{store.AuditFilter{}, ""},
}

// Names are TypeScript names of types reached only through other types.
var Names = map[reflect.Type]string{
	reflect.TypeOf(supervisor.Status{}): "SidecarStatus",
}

// Enum is a set of string values generated as a TypeScript union (Name) and a const
// array of its values (ValuesName). The values are read from the Go source: the
// constants of the named string type Type, or (Type nil) the untyped string constants
// of Package whose names start with Prefix, in declaration order, less Except, plus
// Extra.
type Enum struct {
	Name    string
	Type    reflect.Type
	Package string
	Prefix  string
	Except  []string
	Extra   []string
	Doc     string
}

// ValuesName is the name of the generated array of values, e.g. SIDECAR_STATE_VALUES.
func (e Enum) ValuesName() string {
	var out []rune
	for i, r := range e.Name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			out = append(out, '_')
		}
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		out = append(out, r)
	}
	return string(out) + "_VALUES"
}

const (
	pkgProtocol = "talaria/sidecar/protocol"
	pkgTurn     = "talaria/backend/turn"
	pkgStore    = "talaria/backend/store"
	pkgBackend  = "talaria/backend"
)

// Enums lists every enum the window decides on.
var Enums = []Enum{
	{Name: "SidecarState", Type: reflect.TypeOf(supervisor.State("")), Doc: "The agent process's state (supervisor.State)."},
	{Name: "ErrorCode", Type: reflect.TypeOf(backend.ErrorCode("")), Doc: "The stable code of a failed bound method (backend.ErrorCode); frontend/src/lib/errors.ts handles each."},
	{Name: "ActivityState", Type: reflect.TypeOf(backend.ActivityState("")), Doc: "What the tray shows (backend.ActivityState)."},
	{Name: "AppErrorType", Package: pkgTurn, Prefix: "ErrType", Doc: "What failed, in an apperror frame (turn.ErrType*)."},
	{Name: "ApprovalChoice", Package: pkgProtocol, Prefix: "Choice", Doc: "The answers to an approval."},
	{Name: "ResolvedReason", Package: pkgProtocol, Prefix: "Resolved", Doc: "Why an approval or clarify ended."},
	{Name: "ClarifyKind", Package: pkgProtocol, Prefix: "ClarifyKind"},
	{Name: "ElicitAction", Package: pkgProtocol, Prefix: "Elicit", Doc: "An elicitation's answers without content (Approvals.DismissElicitation)."},
	{Name: "TodoStatus", Package: pkgProtocol, Prefix: "Todo"},
	{Name: "WarningType", Package: pkgProtocol, Prefix: "Warning"},
	{Name: "TruncatedReason", Package: pkgProtocol, Prefix: "Truncated", Doc: "Why a model's answer was cut: its output limit, or the provider's content filter."},
	{Name: "UntilKind", Package: pkgProtocol, Prefix: "Until", Doc: "What a rate-limit wait ends with: the provider's window resets, or the retry."},
	{Name: "ResultStatus", Package: pkgProtocol, Prefix: "Status", Doc: "The status of a chat.start result (done's terminal_state)."},
	{Name: "Role", Package: pkgProtocol, Prefix: "Role"},
	{Name: "RunStatusKind", Package: pkgTurn, Prefix: "Run"},
	{Name: "SteerDelivery", Package: pkgTurn, Prefix: "Delivery"},
	{Name: "MessageKind", Package: pkgStore, Prefix: "Kind", Doc: "How a saved row ended: \"\" normal, or a marker of a turn that ended badly."},
	{Name: "TaskStatus", Package: pkgStore, Prefix: "Task"},
	{Name: "CostSource", Package: pkgStore, Prefix: "Cost", Doc: "Where a cost comes from: \"\" none is known, the provider reported it, or a price the user set."},
	{Name: "ExportFormat", Package: pkgBackend, Prefix: "Export"},
	{Name: "SandboxMode", Package: pkgProtocol, Prefix: "Sandbox", Doc: "A chat's sandbox policy (docs/sandbox.md)."},
	{Name: "McpTransport", Package: pkgProtocol, Prefix: "MCPTransport"},
	{Name: "McpSandbox", Package: pkgProtocol, Prefix: "MCPSandbox", Doc: "How a stdio MCP server is confined: \"\" the chat's policy, with the network, or not at all."},
	{Name: "VaultKept", Package: pkgBackend, Prefix: "Kept", Doc: "Where a vault answer went."},
}

// Alias is a TypeScript type the Go side carries as `any`: generated as `export type
// Name = TS`.
type Alias struct {
	Name string
	TS   string
	Doc  string
}

// Aliases lists them.
var Aliases = []Alias{
	{"ClarifyAnswer", "string | string[]", "One answer of RespondClarify (Go []any): a string, or a list for a multi-select question."},
}

// Const is a constant generated as `export const Name = value`.
type Const struct {
	Name  string
	Value any
	Doc   string
}

// Consts lists the constants the window needs.
var Consts = []Const{
	{"MARK_START", store.MarkStart, "Matched terms in SearchHit.snippet and title_highlight start with this character."},
	{"MARK_END", store.MarkEnd, "... and end with this one."},
	{"PROTOCOL_VERSION", protocol.Version, "The sidecar protocol version this app speaks."},
}

// windowSidecarEvents are the runtime frames the window receives, in declaration order.
func windowSidecarEvents() []string {
	var out []string
	for _, e := range protocol.SidecarEvents {
		if f, ok := frameOf(e); !ok || !f.SidecarOnly {
			out = append(out, e)
		}
	}
	return out
}

func hostEvents() []string { return slices.Clone(protocol.HostEvents) }

func frameOf(event string) (Frame, bool) {
	i := slices.IndexFunc(Frames, func(f Frame) bool { return f.Event == event })
	if i < 0 {
		return Frame{}, false
	}
	return Frames[i], true
}

// DataType returns the registered Go type of a frame event's data.
func DataType(event string) (reflect.Type, bool) {
	f, ok := frameOf(event)
	if !ok {
		return nil, false
	}
	return reflect.TypeOf(f.Data), true
}
