package hermes

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"talaria/sidecar/protocol"
)

// The decoding layer of the gateway's events and server requests (issue 25, item 5):
// the gateway's reader (handleLine) decodes every event notification and server
// request here, once, into the typed structs below; the turn and the session use only
// these. Names and shapes are Hermes's own (docs/hermes.md, "Mapping"; checked against
// 0.19.0's tui_gateway/server.py, dialect A, and the 0.22 line's
// tui_gateway/agent_callbacks.py and contracts/, dialect B).
//
// Decoding is as lenient as the translator always was: a member of the wrong type reads
// as its zero value (a text that is not a string is ""; a usage count that is not a
// number is 0), except session.info's ids, read as a whole, which are nil when any of
// them is of the wrong type; a usage that is not an object is nil. An event whose payload is not an object keeps its kind and
// carries Err (a turn logs it and drops it) and a body of zero members; an event kind
// the runtime does not map has a nil Body (logged at debug level and dropped); nothing
// here panics.

// Event kinds (gwEvent.Type) the runtime maps.
const (
	evKindGatewayReady     = "gateway.ready"
	evKindMessageStart     = "message.start"
	evKindMessageDelta     = "message.delta"
	evKindReasoningDelta   = "reasoning.delta"
	evKindMessageInterim   = "message.interim"
	evKindMessageComplete  = "message.complete"
	evKindToolGenerating   = "tool.generating"
	evKindToolStart        = "tool.start"
	evKindToolComplete     = "tool.complete"
	evKindApprovalRequest  = "approval.request"
	evKindClarifyRequest   = "clarify.request"
	evKindSecretRequest    = "secret.request"
	evKindSudoRequest      = "sudo.request"
	evKindSecretExpire     = "secret.expire"
	evKindSudoExpire       = "sudo.expire"
	evKindRequestCancel    = "request.cancel"
	evKindStatusUpdate     = "status.update"
	evKindNotificationShow = "notification.show"
	evKindNotificationClr  = "notification.clear"
	evKindSessionUsage     = "session.usage"
	evKindSessionInfo      = "session.info"
	evKindSessionTitle     = "session.title"
	evKindError            = "error"
)

// decorationKinds are event kinds that never shape a turn: spinner text, a summary of
// text already streamed, UI decoration. They decode to evDecoration and are dropped
// without a log line (unknown kinds are logged at debug level).
var decorationKinds = map[string]bool{
	"thinking.delta": true, "reasoning.available": true, "sessions.changed": true, "skin.changed": true,
	"reaction": true, "tool.output_risk": true, "tool.progress": true, "background.complete": true,
	"terminal.close": true, "voice.status": true,
}

// gwEvent is the params of an "event" notification,
// {"type": NAME, "session_id": SID, "payload": {...}} (tui_gateway/server.py `_emit`;
// dialect B adds "seq"), with its payload decoded (decodeEvent).
type gwEvent struct {
	Type      string          `json:"type"`
	SessionID string          `json:"session_id"`
	Payload   json.RawMessage `json:"payload,omitempty"`
	// Body is the decoded payload: a pointer to one of the ev* types below for a kind
	// the runtime maps (every member zero when Err is set), evDecoration for a kind it
	// drops quietly, nil for an unknown kind.
	Body any `json:"-"`
	// Err is an *eventPayloadError when the payload is present and not a JSON object.
	Err error `json:"-"`
}

// errEventWithoutType is decodeEvent's error for an event notification whose params
// are not an object with a "type" string: nothing can route it.
var errEventWithoutType = errors.New("an event without a type")

// eventPayloadError says an event's payload is not a JSON object (the event is dropped).
type eventPayloadError struct {
	Type string // the event's kind
}

func (e *eventPayloadError) Error() string {
	return fmt.Sprintf("the payload of the Hermes event %q is not a JSON object", e.Type)
}

// decodeEvent decodes an event notification's params. Errors: errEventWithoutType
// (params not an object, or no type); a payload that is not an object is not an
// error here but the event's Err.
func decodeEvent(params json.RawMessage) (*gwEvent, error) {
	var ev gwEvent
	if err := json.Unmarshal(params, &ev); err != nil || ev.Type == "" {
		return nil, errEventWithoutType
	}
	return newEvent(ev.Type, ev.SessionID, ev.Payload), nil
}

// newEvent decodes the payload of one event of kind typ for Hermes session sid.
func newEvent(typ, sid string, payload json.RawMessage) *gwEvent {
	ev := &gwEvent{Type: typ, SessionID: sid, Payload: payload}
	var p fields
	if len(payload) > 0 {
		if json.Unmarshal(payload, &p) != nil {
			ev.Err = &eventPayloadError{Type: typ}
			p = nil
		}
	}
	ev.Body = decodeBody(typ, p)
	return ev
}

// decodeBody builds the typed body of one event kind from its payload's members.
func decodeBody(typ string, p fields) any {
	switch typ {
	case evKindGatewayReady:
		return &evGatewayReady{}
	case evKindMessageStart:
		return &evMessageStart{}
	case evKindMessageDelta:
		return &evMessageDelta{Text: p.str("text")}
	case evKindReasoningDelta:
		return &evReasoningDelta{Text: p.str("text")}
	case evKindMessageInterim:
		return &evMessageInterim{Text: p.str("text"), AlreadyStreamed: p.bool("already_streamed")}
	case evKindMessageComplete:
		return &evMessageComplete{Text: p.str("text"), Status: p.str("status"), Reasoning: p.str("reasoning"),
			Warning: p.str("warning"), Usage: decodeUsage(p["usage"])}
	case evKindToolGenerating:
		return &evToolGenerating{Name: p.str("name")}
	case evKindToolStart:
		start := decodeToolStart(p)
		return &start
	case evKindToolComplete:
		return decodeToolComplete(p)
	case evKindApprovalRequest:
		return decodeApproval(p)
	case evKindClarifyRequest:
		return decodeClarify(p)
	case evKindSecretRequest:
		return decodeSecret(p)
	case evKindSudoRequest:
		return decodeSudo(p)
	case evKindSecretExpire, evKindSudoExpire:
		return &evPromptExpired{RequestID: p.str("request_id")}
	case evKindRequestCancel:
		return &evRequestCancel{ID: p.str("id"), Method: p.str("method"), Reason: p.str("reason")}
	case evKindStatusUpdate:
		return &evStatusUpdate{Kind: p.str("kind"), Text: p.str("text")}
	case evKindNotificationShow:
		return &evNotificationShow{Key: p.str("key"), ID: p.str("id"), Text: p.str("text"), Level: p.str("level"), TTLMillis: p.int("ttl_ms")}
	case evKindNotificationClr:
		return &evNotificationClear{Key: p.str("key")}
	case evKindSessionUsage:
		return &evSessionUsage{Usage: decodeUsage(p["usage"])}
	case evKindSessionInfo:
		return &evSessionInfo{Info: decodeSessionInfo(p), Usage: decodeUsage(p["usage"])}
	case evKindSessionTitle:
		return &evSessionTitle{Title: p.str("title")}
	case evKindError:
		return &evError{Message: p.str("message")}
	}
	if decorationKinds[typ] || strings.HasPrefix(typ, "subagent.") || strings.HasPrefix(typ, "moa.") {
		return evDecoration{}
	}
	return nil
}

// evDecoration is the body of an event kind that never shapes a turn (decorationKinds,
// subagent.*, moa.*).
type evDecoration struct{}

// evGatewayReady is gateway.ready: the gateway's first line.
type evGatewayReady struct{}

// evMessageStart is message.start: a model call of the session's agent began (a turn
// of Hermes's own when no turn of ours runs).
type evMessageStart struct{}

// evMessageDelta is message.delta {text}: visible text streamed.
type evMessageDelta struct{ Text string }

// evReasoningDelta is reasoning.delta {text}: reasoning streamed.
type evReasoningDelta struct{ Text string }

// evMessageInterim is message.interim {text, already_streamed}: the assistant's prose
// before a tool batch; AlreadyStreamed: it came as message.delta already.
type evMessageInterim struct {
	Text            string
	AlreadyStreamed bool
}

// evMessageComplete is message.complete {text, status, reasoning?, warning?, usage}:
// the end of Hermes's turn. Status is complete, interrupted or error (Text is then
// the error message); Usage is nil when absent or malformed.
type evMessageComplete struct {
	Text, Status, Reasoning, Warning string
	Usage                            *gwUsage
}

// evToolGenerating is tool.generating {name}: the model is writing a tool call.
type evToolGenerating struct{ Name string }

// evToolStart is tool.start {tool_id, name, context, args}. Args is nil when absent
// or not an object (dialect A sends them only at completion); Context is Hermes's key
// argument or a display.* key.
type evToolStart struct {
	ToolID, Name, Context string
	Args                  map[string]any
}

// evToolComplete is tool.complete {tool_id, name, args, duration_s, result, summary,
// inline_diff, todos}. Result is the raw JSON result (null when absent); DurationS is
// seconds, 0 when absent; Todos is nil unless todos is a well-formed list (items
// without a status are pending).
type evToolComplete struct {
	evToolStart
	Result              json.RawMessage
	Summary, InlineDiff string
	DurationS           float64
	Todos               *protocol.TodoList
}

// evApproval is approval.request (A) or the server request approval (B): command,
// description, pattern_key(s), allow_permanent, smart_denied and choices.
// AllowPermanent is nil when absent; Choices nil when Hermes gave none (they are then
// derived from the flags, as tui_gateway/server.py _emit_approval_request does).
type evApproval struct {
	Command, Description string
	PatternKey           string
	PatternKeys          []string
	Choices              []string
	SmartDenied          bool
	AllowPermanent       *bool
}

// gwQuestion is one clarify question: dialect B's {qid, question, choices,
// multi_select}; dialect A's single question has no qid.
type gwQuestion struct {
	QID         string   `json:"qid"`
	Question    string   `json:"question"`
	Choices     []string `json:"choices"`
	MultiSelect bool     `json:"multi_select"`
}

// evClarify is clarify.request {question, choices, request_id} (A) or the server
// request clarify {questions: [...]} (B), both as Questions (A's as one question).
type evClarify struct {
	RequestID string
	Questions []gwQuestion
}

// evSecret is secret.request {prompt, env_var, request_id} (A) or the server request
// secret {env_var, prompt, metadata} (B).
type evSecret struct {
	RequestID, EnvVar, Prompt string
}

// evSudo is sudo.request {request_id} (A) or the server request sudo {command} (B).
type evSudo struct {
	RequestID, Command string
}

// evPromptExpired is secret.expire or sudo.expire {request_id} (A): the prompt timed out.
type evPromptExpired struct{ RequestID string }

// evRequestCancel is request.cancel {id, method, reason} (B): a server request
// withdrawn; Reason is timeout, interrupted, shutdown, resolved or session_closed.
type evRequestCancel struct {
	ID, Method, Reason string
}

// evStatusUpdate is status.update {kind, text}; kind compacting or compressing is
// Hermes compressing the context.
type evStatusUpdate struct {
	Kind, Text string
}

// evNotificationShow is notification.show {text, level, kind, ttl_ms, key, id};
// TTLMillis is milliseconds, 0 for none.
type evNotificationShow struct {
	Key, ID, Text, Level string
	TTLMillis            int64
}

// evNotificationClear is notification.clear {key}.
type evNotificationClear struct{ Key string }

// evSessionUsage is session.usage {usage} (B): the session's totals.
type evSessionUsage struct{ Usage *gwUsage }

// evSessionInfo is session.info {stored_session_id, title, running, usage, ...}. Info
// is nil when one of its members is of the wrong type; Usage nil when absent or
// malformed.
type evSessionInfo struct {
	Info  *gwSessionInfo
	Usage *gwUsage
}

// gwSessionInfo is what the runtime reads of session.info: the stored session id (it
// moves when Hermes compresses a session into a continuation), the title, and whether
// the session runs a turn (nil when it does not say).
type gwSessionInfo struct {
	Stored  string `json:"stored_session_id"`
	Title   string `json:"title"`
	Running *bool  `json:"running"`
}

// evSessionTitle is session.title {title}.
type evSessionTitle struct{ Title string }

// evError is error {message}: kept as the turn's error when no message.complete follows.
type evError struct{ Message string }

// gwUsage is a Hermes usage object (tui_gateway/server.py _get_usage): the session's
// cumulative token counts, the model, the context window (tokens) and, in dialect B,
// cost_usd (US dollars, nil when absent).
type gwUsage struct {
	Model      string   `json:"model"`
	Input      int64    `json:"input"`
	Output     int64    `json:"output"`
	CacheRead  int64    `json:"cache_read"`
	CacheWrite int64    `json:"cache_write"`
	CostUSD    *float64 `json:"cost_usd"`
	CtxUsed    int64    `json:"context_used"`
	CtxMax     int64    `json:"context_max"`
}

// counters is the usage as our counters.
func (u *gwUsage) counters() protocol.Usage {
	out := protocol.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}
	if u.CostUSD != nil {
		out.EstimatedCost = *u.CostUSD
	}
	return out
}

// decodeUsage reads a usage object; nil when absent or when a member is of the wrong
// type (JSON null is all zeros).
func decodeUsage(raw json.RawMessage) *gwUsage {
	var p fields
	if len(raw) == 0 || json.Unmarshal(raw, &p) != nil || p == nil {
		return nil
	}
	// Member by member, like every other payload: one member of another type (a newer
	// Hermes's model object, a count sent as a string) reads as zero and keeps the rest.
	u := &gwUsage{Model: p.str("model"), Input: p.int("input"), Output: p.int("output"),
		CacheRead: p.int("cache_read"), CacheWrite: p.int("cache_write"),
		CtxUsed: p.int("context_used"), CtxMax: p.int("context_max")}
	var cost float64
	if json.Unmarshal(p["cost_usd"], &cost) == nil {
		u.CostUSD = &cost
	}
	return u
}

func decodeSessionInfo(p fields) *gwSessionInfo {
	var info gwSessionInfo
	for key, dst := range map[string]*string{"stored_session_id": &info.Stored, "title": &info.Title} {
		if v, ok := p[key]; ok && json.Unmarshal(v, dst) != nil {
			return nil
		}
	}
	if v, ok := p["running"]; ok && json.Unmarshal(v, &info.Running) != nil {
		return nil
	}
	return &info
}

func decodeToolStart(p fields) evToolStart {
	var args map[string]any
	json.Unmarshal(p["args"], &args) //nolint:errcheck // absent or not an object: nil
	return evToolStart{ToolID: p.str("tool_id"), Name: p.str("name"), Context: p.str("context"), Args: args}
}

func decodeToolComplete(p fields) *evToolComplete {
	c := &evToolComplete{evToolStart: decodeToolStart(p), Result: p["result"], Summary: p.str("summary"),
		InlineDiff: p.str("inline_diff"), DurationS: p.float("duration_s")}
	if len(c.Result) == 0 {
		c.Result = json.RawMessage("null")
	}
	if todos, ok := p["todos"]; ok && len(todos) > 0 && !isNull(todos) {
		var list []protocol.TodoItem
		if json.Unmarshal(todos, &list) == nil {
			for i := range list {
				if list[i].Status == "" {
					list[i].Status = "pending"
				}
			}
			c.Todos = &protocol.TodoList{Todos: list}
		}
	}
	return c
}

func decodeApproval(p fields) *evApproval {
	a := &evApproval{Command: p.str("command"), Description: p.str("description"), PatternKey: p.str("pattern_key"),
		SmartDenied: p.bool("smart_denied")}
	json.Unmarshal(p["choices"], &a.Choices)          //nolint:errcheck // absent: derived by the turn
	json.Unmarshal(p["pattern_keys"], &a.PatternKeys) //nolint:errcheck // absent: none
	if _, ok := p["allow_permanent"]; ok {
		allow := p.bool("allow_permanent")
		a.AllowPermanent = &allow
	}
	return a
}

func decodeClarify(p fields) *evClarify {
	c := &evClarify{RequestID: p.str("request_id")}
	if raw, ok := p["questions"]; ok {
		json.Unmarshal(raw, &c.Questions) //nolint:errcheck // malformed: the turn's default question
		return c
	}
	var choices []string
	json.Unmarshal(p["choices"], &choices) //nolint:errcheck // absent: none
	c.Questions = []gwQuestion{{Question: p.str("question"), Choices: choices}}
	return c
}

func decodeSecret(p fields) *evSecret {
	return &evSecret{RequestID: p.str("request_id"), EnvVar: p.str("env_var"), Prompt: p.str("prompt")}
}

func decodeSudo(p fields) *evSudo {
	return &evSudo{RequestID: p.str("request_id"), Command: p.str("command")}
}

// gwRequest is a request from the server to the client (dialect B,
// tui_gateway/server_requests.py): ID like "srq-<hex>", Method "approval", "clarify",
// "secret", "sudo", ..., Params carrying session_id; Body is the decoded params
// (*evApproval, *evClarify, *evSecret or *evSudo; nil for a method Talaria has no card
// for, which is declined).
type gwRequest struct {
	ID        json.RawMessage
	Method    string
	SessionID string
	Params    json.RawMessage
	Body      any
}

// newRequest decodes a server request. Params that are not an object read as {} (the
// card then shows Hermes's defaults), as a request must always be answered.
func newRequest(id json.RawMessage, method string, params json.RawMessage) *gwRequest {
	var p fields
	json.Unmarshal(params, &p) //nolint:errcheck // not an object: no members
	req := &gwRequest{ID: id, Method: method, SessionID: p.str("session_id"), Params: params}
	switch method {
	case "approval":
		req.Body = decodeApproval(p)
	case "clarify":
		req.Body = decodeClarify(p)
	case "secret":
		req.Body = decodeSecret(p)
	case "sudo":
		req.Body = decodeSudo(p)
	}
	return req
}

// fields are a payload's members, read leniently: a member absent or of another type
// is the zero value.
type fields map[string]json.RawMessage

func (p fields) str(key string) string {
	var s string
	if json.Unmarshal(p[key], &s) == nil {
		return s
	}
	return ""
}

func (p fields) bool(key string) bool {
	var b bool
	return json.Unmarshal(p[key], &b) == nil && b
}

// int reads a number, cut to an integer.
func (p fields) int(key string) int64 {
	var f float64
	if json.Unmarshal(p[key], &f) == nil {
		return int64(f)
	}
	return 0
}

func (p fields) float(key string) float64 {
	var f float64
	json.Unmarshal(p[key], &f) //nolint:errcheck // 0 when absent
	return f
}
