package hermes

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"talaria/sidecar/protocol"
)

// turn translates one prompt's gateway traffic into chat.start frames and its result.
// handle runs on the session's pump goroutine only; the chat.start goroutine reads the
// outcome after done is closed, and answers (approval, clarify, steer) take mu.
type turn struct {
	r        *Runtime
	s        *hsession
	dialect  string
	streamID string
	emit     func(event string, data any)
	now      func() time.Time
	// approvalTimeout is Hermes's approvals.timeout (frames' timeout_s).
	approvalTimeout time.Duration

	mu sync.Mutex
	// visible is every visible text delta of the turn; seg the current assistant
	// segment's text and reasoning (since the last tool batch).
	visible, segText, segReasoning strings.Builder
	rows                           []protocol.ChatMessage
	callRow                        int // index in rows of the open assistant tool-call row, -1 when none
	tools                          map[string]*toolState
	approvals                      []*approvalState // in arrival order
	clarifies                      map[string]*clarifyState
	steers                         []*steerState
	usage                          protocol.Usage
	// base is Hermes's cumulative session usage when the turn began, lastCum the
	// latest cumulative figure: Hermes reports session totals, frames the turn's.
	base, lastCum protocol.Usage
	// output: the model has produced something this turn (usage before it is the base).
	output       bool
	ctxInfo      protocol.ContextInfo
	model        string
	final        *finalState
	errorText    string // the last `error` event's message
	interrupting bool
	compressing  bool
	seq          int
	ended        bool
	// armed: the turn's prompt is being sent; before that, the session's messages
	// (the end of an earlier run of Hermes's) are not the turn's.
	armed         bool
	done          chan struct{}
	awaitFollowup bool // B requeued leftover steers as a new prompt
}

type toolState struct {
	name    string
	args    map[string]any
	started time.Time
	row     int // index of its assistant call row
	done    bool
}

type approvalState struct {
	id       string
	reqID    json.RawMessage // dialect B server request id
	tid      string          // the tool call it holds
	choices  []string
	answered bool
	resolved bool
}

type clarifyState struct {
	id        string
	kind      string // clarify, secret, sudo
	requestID string // dialect A request_id
	reqID     json.RawMessage
	qids      []string
	multi     []bool
	tid       string
	resolved  bool
	answering bool // an answer is on its way to Hermes: a second one is refused (ok false)
}

type steerState struct {
	protocol.SteerItem
	afterTool bool // a tool finished since it was queued: Hermes reads it at its next model call
	taken     bool
}

type finalState struct {
	text, status, reasoning, warning string
}

func newTurn(r *Runtime, s *hsession, dialect, streamID string, approvalTimeout time.Duration, emit func(string, any)) *turn {
	t := &turn{r: r, s: s, dialect: dialect, streamID: streamID, emit: emit, now: time.Now,
		approvalTimeout: approvalTimeout, callRow: -1, tools: map[string]*toolState{},
		clarifies: map[string]*clarifyState{}, done: make(chan struct{})}
	if s != nil {
		s.mu.Lock()
		t.base, t.lastCum = s.cum, s.cum
		s.mu.Unlock()
	}
	return t
}

// accepts reports whether the turn takes this message: from its prompt on, until its
// end.
func (t *turn) accepts(in inbound) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.armed && !t.ended
}

// arm makes the turn take its session's messages (called just before prompt.submit).
func (t *turn) arm() {
	t.mu.Lock()
	t.armed = true
	t.mu.Unlock()
}

// send emits one frame with every string redacted of the secrets given to Hermes.
func (t *turn) send(event string, data any) {
	if t.r != nil {
		b, err := json.Marshal(data)
		if err == nil {
			t.emit(event, t.r.redactJSON(b))
			return
		}
	}
	t.emit(event, data)
}

// finish ends the turn (once).
func (t *turn) finishLocked() {
	if t.ended {
		return
	}
	t.ended = true
	close(t.done)
}

// handle translates one gateway message (docs/hermes.md, "Mapping").
func (t *turn) handle(in inbound) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ended {
		return
	}
	if in.Request != nil {
		t.serverRequest(in.Request)
		return
	}
	ev := in.Event
	var p map[string]json.RawMessage
	if len(ev.Payload) > 0 {
		if err := json.Unmarshal(ev.Payload, &p); err != nil {
			if t.r != nil {
				t.r.log.Warn("dropped a Hermes event whose payload is not an object", "type", ev.Type)
			}
			return
		}
	}
	if t.awaitFollowup && ev.Type != "message.start" {
		// Between a message.complete and the follow-up turn Hermes starts for the
		// leftover steers, only the follow-up's start matters.
		t.other(ev, p)
		return
	}
	switch ev.Type {
	case "message.start":
		t.awaitFollowup = false
		t.modelCall()
	case "message.delta":
		text := str(p["text"])
		if text == "" {
			return
		}
		t.modelCall()
		t.endCompression()
		t.visible.WriteString(text)
		t.segText.WriteString(text)
		t.send(protocol.EvToken, protocol.TextData{Text: text})
	case "reasoning.delta":
		text := str(p["text"])
		if text == "" {
			return
		}
		t.modelCall()
		t.endCompression()
		t.segReasoning.WriteString(text)
		t.send(protocol.EvReasoning, protocol.TextData{Text: text})
	case "message.interim":
		// Assistant prose before a tool batch. Streamed already (already_streamed) it
		// was sent as tokens; otherwise it is sent now so the window shows it.
		text := str(p["text"])
		if text != "" && !boolOf(p["already_streamed"]) {
			t.visible.WriteString(text)
			t.send(protocol.EvToken, protocol.TextData{Text: text})
		}
		if text != "" {
			t.segText.Reset()
			t.segText.WriteString(text)
		}
	case "tool.generating":
		t.modelCall()
	case "tool.start":
		t.toolStart(p)
	case "tool.complete":
		t.toolComplete(p)
	case "approval.request":
		t.approvalRequestA(p)
	case "clarify.request":
		t.clarifyRequestA(p, "clarify")
	case "secret.request":
		t.clarifyRequestA(p, "secret")
	case "sudo.request":
		t.clarifyRequestA(p, "sudo")
	case "secret.expire", "sudo.expire":
		t.resolveClarifyByRequestID(str(p["request_id"]), protocol.ResolvedTimeout)
	case "request.cancel":
		t.requestCancel(p)
	case "status.update":
		kind, text := str(p["kind"]), str(p["text"])
		if kind == "compacting" || kind == "compressing" {
			t.compressing = true
			t.send(protocol.EvCompressing, map[string]any{"message": text})
			return
		}
		if text != "" {
			t.send(protocol.EvAgentStatus, protocol.AgentStatusData{Kind: kind, Text: text})
		}
	case "notification.show":
		n := protocol.NoticeData{Key: firstNonEmpty(str(p["key"]), str(p["id"])), Text: str(p["text"]), Level: str(p["level"])}
		if n.Key == "" {
			n.Key = "hermes"
		}
		if ttl := num(p["ttl_ms"]); ttl > 0 {
			n.ExpiresAt = t.now().UnixMilli() + int64(ttl) // epoch ms, as every time on the wire
		}
		if n.Text != "" {
			t.send(protocol.EvNotice, n)
		}
	case "notification.clear":
		if key := str(p["key"]); key != "" {
			t.send(protocol.EvNoticeClear, protocol.NoticeClearData{Key: key})
		}
	case "session.usage":
		t.noteUsage(p["usage"])
	case "message.complete":
		t.complete(p)
	case "error":
		t.errorText = str(p["message"])
	default:
		t.other(ev, p)
	}
}

// other handles events that never end or shape the turn.
func (t *turn) other(ev *gwEvent, p map[string]json.RawMessage) {
	switch ev.Type {
	case "session.info":
		t.s.noteInfo(ev.Payload, t.send)
		if u, ok := p["usage"]; ok {
			if !t.output {
				// The session's totals before this turn (a resumed Hermes session
				// brings its own).
				if cum, ok := cumulative(u); ok {
					t.base, t.lastCum = cum, cum
				}
				return
			}
			t.noteUsage(u)
		}
	case "session.title":
		t.s.noteTitle(str(p["title"]), t.send)
	case "message.start":
		t.awaitFollowup = false
		t.modelCall()
	case "thinking.delta", "reasoning.available", "sessions.changed", "skin.changed", "reaction",
		"tool.output_risk", "tool.progress", "background.complete", "terminal.close", "voice.status":
		// Spinner text, a summary of text already streamed, UI decoration.
	default:
		if strings.HasPrefix(ev.Type, "subagent.") || strings.HasPrefix(ev.Type, "moa.") {
			return
		}
		if t.r != nil {
			t.r.log.Debug("ignored a Hermes event this runtime does not map", "type", ev.Type)
		}
	}
}

// modelCall marks that a model call is producing output: steers queued before the
// last tool batch were read by it (Hermes appends them to that batch's last result).
func (t *turn) modelCall() {
	t.output = true
	var taken []protocol.SteerItem
	for _, s := range t.steers {
		if s.afterTool && !s.taken {
			s.taken = true
			taken = append(taken, s.SteerItem)
			t.closeSegment()
			t.rows = append(t.rows, protocol.ChatMessage{Role: "user", Content: s.Text})
		}
	}
	if len(taken) > 0 {
		t.send(protocol.EvSteerPending, protocol.SteerPendingData{Pending: t.pendingSteers(), Taken: taken})
	}
}

func (t *turn) endCompression() {
	if t.compressing {
		t.compressing = false
		t.send(protocol.EvCompressionFinished, map[string]any{"message": ""})
	}
}

// closeSegment ends the open tool-call row; the next text starts a new segment.
func (t *turn) closeSegment() {
	t.callRow = -1
}

func (t *turn) toolStart(p map[string]json.RawMessage) {
	tid, name := str(p["tool_id"]), str(p["name"])
	if tid == "" {
		t.seq++
		tid = fmt.Sprintf("hermes_tool_%d", t.seq)
	}
	var args map[string]any
	json.Unmarshal(p["args"], &args) //nolint:errcheck // dialect A sends no args at start
	if t.callRow < 0 {
		// The segment's prose (message.interim, else what streamed) opens the row.
		t.rows = append(t.rows, protocol.ChatMessage{Role: "assistant", Content: strings.TrimSpace(t.segText.String()),
			Reasoning: t.segReasoning.String()})
		t.callRow = len(t.rows) - 1
		t.segText.Reset()
		t.segReasoning.Reset()
	}
	argsText := "{}"
	if args != nil {
		if b, err := json.Marshal(args); err == nil {
			argsText = string(b)
		}
	}
	row := &t.rows[t.callRow]
	row.ToolCalls = append(row.ToolCalls, protocol.ToolCall{ID: tid, Type: "function", Function: protocol.ToolFunction{Name: name, Arguments: argsText}})
	t.tools[tid] = &toolState{name: name, args: args, started: t.now(), row: t.callRow}
	keyArg := str(p["context"])
	if keyArg == "" || strings.HasPrefix(keyArg, "display.") {
		keyArg = primaryArg(name, args)
	}
	t.send(protocol.EvTool, protocol.ToolData{TID: tid, Name: name, Args: capArgs(args), KeyArg: capString(keyArg, 200)})
}

func (t *turn) toolComplete(p map[string]json.RawMessage) {
	tid, name := str(p["tool_id"]), str(p["name"])
	ts := t.tools[tid]
	if ts == nil {
		// A tool.complete without its start (the turn was resumed mid-tool, or
		// dialect A's subagent relay): give it a row of its own.
		t.toolStart(p)
		ts = t.tools[tid]
		if ts == nil {
			return
		}
	}
	if ts.done {
		return
	}
	ts.done = true
	if name == "" {
		name = ts.name
	}
	var args map[string]any
	if json.Unmarshal(p["args"], &args) == nil && args != nil && ts.args == nil {
		ts.args = args
		if b, err := json.Marshal(args); err == nil {
			row := &t.rows[ts.row]
			for i := range row.ToolCalls {
				if row.ToolCalls[i].ID == tid {
					row.ToolCalls[i].Function.Arguments = string(b)
				}
			}
		}
	}
	raw := p["result"]
	if len(raw) == 0 {
		raw = json.RawMessage("null")
	}
	content := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		content = s // a tool result given as a JSON text
	}
	dur := numF(p["duration_s"])
	if dur == 0 {
		dur = t.now().Sub(ts.started).Seconds()
	}
	data := protocol.ToolCompleteData{TID: tid, Name: name, Preview: capString(previewOf(raw, str(p["summary"])), 8<<10),
		RawResult: boundedRaw(raw), ResultDiff: str(p["inline_diff"]), DurationS: float64(int64(dur*1000)) / 1000}
	if todos, ok := p["todos"]; ok && len(todos) > 0 && string(todos) != "null" {
		var list []protocol.TodoItem
		if json.Unmarshal(todos, &list) == nil {
			for i := range list {
				if list[i].Status == "" {
					list[i].Status = "pending"
				}
			}
			data.TodoResult = &protocol.TodoList{Todos: list}
		}
	}
	t.rows = append(t.rows, protocol.ChatMessage{Role: "tool", ToolCallID: tid, Name: name, Content: content})
	// The wait of any prompt this tool held is over: unanswered ones ended by
	// Hermes's own timeout (dialect A has no event for it) or by the interrupt.
	reason := protocol.ResolvedTimeout
	if t.interrupting {
		reason = protocol.ResolvedInterrupted
	}
	for _, a := range t.approvals {
		if a.tid == tid && !a.resolved {
			t.resolveApproval(a, reason, "")
		}
	}
	for _, c := range t.clarifies {
		if c.tid == tid && !c.resolved {
			t.resolveClarify(c, reason)
		}
	}
	t.send(protocol.EvToolComplete, data)
	for _, s := range t.steers {
		if !s.taken {
			s.afterTool = true
		}
	}
	// A new segment starts after a batch: the next text is not this row's.
	if t.allToolsDone() {
		t.closeSegment()
	}
}

func (t *turn) allToolsDone() bool {
	for _, ts := range t.tools {
		if !ts.done {
			return false
		}
	}
	return true
}

// openTool is the tool whose prompt this is: the latest started and not finished.
func (t *turn) openTool() string {
	if t.callRow >= 0 {
		calls := t.rows[t.callRow].ToolCalls
		for i := len(calls) - 1; i >= 0; i-- {
			if ts := t.tools[calls[i].ID]; ts != nil && !ts.done {
				return calls[i].ID
			}
		}
	}
	return ""
}

func (t *turn) approvalRequestA(p map[string]json.RawMessage) {
	t.approval(p, nil)
}

// approval sends an approval frame with exactly the choices Hermes offers.
func (t *turn) approval(p map[string]json.RawMessage, reqID json.RawMessage) {
	t.seq++
	a := &approvalState{id: fmt.Sprintf("ap_%s_%d", shortID(t.streamID), t.seq), reqID: reqID, tid: t.openTool()}
	var choices []string
	json.Unmarshal(p["choices"], &choices) //nolint:errcheck // absent: derived below
	if len(choices) == 0 {
		// tui_gateway/server.py _emit_approval_request derives them the same way.
		switch {
		case boolOf(p["smart_denied"]):
			choices = []string{"once", "deny"}
		case p["allow_permanent"] != nil && !boolOf(p["allow_permanent"]):
			choices = []string{"once", "session", "deny"}
		default:
			choices = []string{"once", "session", "always", "deny"}
		}
	}
	a.choices = slices.DeleteFunc(choices, func(c string) bool {
		return c != protocol.ChoiceOnce && c != protocol.ChoiceSession && c != protocol.ChoiceAlways && c != protocol.ChoiceDeny
	})
	if !slices.Contains(a.choices, protocol.ChoiceDeny) {
		a.choices = append(a.choices, protocol.ChoiceDeny) // denying is always possible
	}
	t.approvals = append(t.approvals, a)
	pattern := str(p["pattern_key"])
	if pattern == "" {
		var keys []string
		json.Unmarshal(p["pattern_keys"], &keys) //nolint:errcheck
		if len(keys) > 0 {
			pattern = keys[0]
		}
	}
	t.send(protocol.EvApproval, protocol.ApprovalData{ApprovalID: a.id, Command: capString(str(p["command"]), 16<<10),
		Description: str(p["description"]), Pattern: pattern, TimeoutS: int(t.approvalTimeout / time.Second), Choices: a.choices})
}

func (t *turn) resolveApproval(a *approvalState, reason, choice string) {
	if a.resolved {
		return
	}
	a.resolved = true
	t.send(protocol.EvApprovalResolved, protocol.ResolvedData{ApprovalID: a.id, Reason: reason, Choice: choice})
}

func (t *turn) clarifyRequestA(p map[string]json.RawMessage, kind string) {
	c := &clarifyState{kind: kind, requestID: str(p["request_id"]), tid: t.openTool()}
	t.clarify(c, p)
}

// clarify sends a clarify frame for a Hermes prompt: questions, or a vault card for a
// secret (env var) or the sudo password.
func (t *turn) clarify(c *clarifyState, p map[string]json.RawMessage) {
	t.seq++
	c.id = fmt.Sprintf("cl_%s_%d", shortID(t.streamID), t.seq)
	t.clarifies[c.id] = c
	data := protocol.ClarifyData{ClarifyID: c.id, Kind: protocol.ClarifyKindClarify, Choices: []string{}, Questions: []protocol.ClarifyQuestion{}}
	switch c.kind {
	case "clarify":
		data.TimeoutS = 300
		var qs []struct {
			QID         string   `json:"qid"`
			Question    string   `json:"question"`
			Choices     []string `json:"choices"`
			MultiSelect bool     `json:"multi_select"`
		}
		if raw, ok := p["questions"]; ok {
			json.Unmarshal(raw, &qs) //nolint:errcheck // checked below
		} else {
			var choices []string
			json.Unmarshal(p["choices"], &choices) //nolint:errcheck
			qs = append(qs, struct {
				QID         string   `json:"qid"`
				Question    string   `json:"question"`
				Choices     []string `json:"choices"`
				MultiSelect bool     `json:"multi_select"`
			}{Question: str(p["question"]), Choices: choices})
		}
		for i, q := range qs {
			if i == 5 {
				break
			}
			if q.Choices == nil {
				q.Choices = []string{}
			}
			data.Questions = append(data.Questions, protocol.ClarifyQuestion{Question: q.Question, Choices: q.Choices, MultiSelect: q.MultiSelect})
			c.qids = append(c.qids, firstNonEmpty(q.QID, fmt.Sprintf("q%d", i)))
			c.multi = append(c.multi, q.MultiSelect)
		}
		if len(data.Questions) == 0 {
			data.Questions = []protocol.ClarifyQuestion{{Question: "Hermes asks for your input.", Choices: []string{}}}
			c.qids, c.multi = []string{"q0"}, []bool{false}
		}
		data.Question, data.Choices, data.MultiSelect = data.Questions[0].Question, data.Questions[0].Choices, data.Questions[0].MultiSelect
	case "secret":
		name := str(p["env_var"])
		data.Kind, data.Name, data.TimeoutS = protocol.ClarifyKindVault, name, 300
		data.Reason = str(p["prompt"])
		data.Question = fmt.Sprintf("Hermes needs %s.", firstNonEmpty(name, "a secret"))
		if name != "" && validVaultName.MatchString(name) {
			data.SavedHint = "vault:" + name
		}
		data.AgentNotice = "Hermes keeps this value itself, in its own .env file in its home folder; Talaria does not store it."
	case "sudo":
		data.Kind, data.Name, data.TimeoutS = protocol.ClarifyKindVault, "SUDO_PASSWORD", 120
		data.Question = "Hermes needs your sudo password."
		if cmd := str(p["command"]); cmd != "" {
			data.Reason = "To run: " + capString(cmd, 2048)
		} else {
			data.Reason = "A command it runs asks for administrator rights."
		}
		data.SavedHint = "vault:SUDO_PASSWORD"
		data.AgentNotice = "The password goes to Hermes for this command; Talaria does not store it unless you ask it to keep it in the system keychain."
	}
	t.send(protocol.EvClarify, data)
}

var validVaultName = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)

func (t *turn) resolveClarify(c *clarifyState, reason string) {
	if c.resolved {
		return
	}
	c.resolved = true
	t.send(protocol.EvClarifyResolved, protocol.ResolvedData{ClarifyID: c.id, Reason: reason})
}

func (t *turn) resolveClarifyByRequestID(rid, reason string) {
	for _, c := range t.clarifies {
		if c.requestID == rid && rid != "" {
			t.resolveClarify(c, reason)
		}
	}
}

// serverRequest handles a dialect-B request from the server.
func (t *turn) serverRequest(req *gwRequest) {
	var p map[string]json.RawMessage
	json.Unmarshal(req.Params, &p) //nolint:errcheck // empty: the defaults below
	switch req.Method {
	case "approval":
		t.approval(p, req.ID)
	case "clarify":
		t.clarify(&clarifyState{kind: "clarify", reqID: req.ID, tid: t.openTool()}, p)
	case "secret":
		t.clarify(&clarifyState{kind: "secret", reqID: req.ID, tid: t.openTool()}, p)
	case "sudo":
		t.clarify(&clarifyState{kind: "sudo", reqID: req.ID, tid: t.openTool()}, p)
	default:
		// A prompt for a desktop GUI Talaria does not have (preview.read, theme.pick,
		// vault.unlock_prompt, ...): JSON-RPC's answer for an unknown method, so
		// Hermes goes on at once instead of waiting out its deadline.
		if t.r != nil {
			t.r.log.Info("declined a Hermes request Talaria has no card for", "method", req.Method)
		}
		if gw := t.s.gateway(); gw != nil {
			gw.respondError(req.ID, codeMethodNotFound, "Talaria has no "+req.Method+" card") //nolint:errcheck
		}
	}
}

// requestCancel maps request.cancel (dialect B) to the resolved frame of its card.
func (t *turn) requestCancel(p map[string]json.RawMessage) {
	id := str(p["id"])
	reason := protocol.ResolvedInterrupted
	switch str(p["reason"]) {
	case "timeout":
		reason = protocol.ResolvedTimeout
	case "resolved":
		reason = protocol.ResolvedAnswered
	}
	for _, a := range t.approvals {
		if reqIDString(a.reqID) == id {
			t.resolveApproval(a, reason, "")
		}
	}
	for _, c := range t.clarifies {
		if reqIDString(c.reqID) == id {
			t.resolveClarify(c, reason)
		}
	}
}

func reqIDString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// cumulative reads a Hermes usage object (tui_gateway/server.py _get_usage: session
// totals) as our counters.
func cumulative(raw json.RawMessage) (protocol.Usage, bool) {
	var u struct {
		Input      int64    `json:"input"`
		Output     int64    `json:"output"`
		CacheRead  int64    `json:"cache_read"`
		CacheWrite int64    `json:"cache_write"`
		CostUSD    *float64 `json:"cost_usd"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
		return protocol.Usage{}, false
	}
	out := protocol.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}
	if u.CostUSD != nil {
		out.EstimatedCost = *u.CostUSD
	}
	return out, true
}

// noteUsage reads Hermes's cumulative session usage into the turn's counters.
func (t *turn) noteUsage(raw json.RawMessage) {
	var u struct {
		Model      string   `json:"model"`
		Input      int64    `json:"input"`
		Output     int64    `json:"output"`
		CacheRead  int64    `json:"cache_read"`
		CacheWrite int64    `json:"cache_write"`
		CostUSD    *float64 `json:"cost_usd"`
		CtxUsed    int64    `json:"context_used"`
		CtxMax     int64    `json:"context_max"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
		return
	}
	cum := protocol.Usage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite}
	if u.CostUSD != nil {
		cum.EstimatedCost = *u.CostUSD
	}
	if u.Model != "" {
		t.model = u.Model
	}
	if u.CtxMax > 0 {
		t.ctxInfo.ContextLength = u.CtxMax
	}
	if u.CtxUsed > 0 {
		t.ctxInfo.LastPromptTokens = u.CtxUsed
	}
	base := t.base
	t.lastCum = cum
	turnUsage := protocol.Usage{InputTokens: cum.InputTokens - base.InputTokens, OutputTokens: cum.OutputTokens - base.OutputTokens,
		CacheReadTokens: cum.CacheReadTokens - base.CacheReadTokens, CacheWriteTokens: cum.CacheWriteTokens - base.CacheWriteTokens,
		EstimatedCost: cum.EstimatedCost - base.EstimatedCost}
	if turnUsage.InputTokens < 0 || turnUsage.OutputTokens < 0 {
		turnUsage = cum // a new agent counts from 0 again
	}
	if turnUsage == t.usage || (turnUsage == protocol.Usage{}) {
		return
	}
	t.usage = turnUsage
	t.send(protocol.EvUsage, t.usage)
}

// complete handles message.complete: the turn's end, unless Hermes requeues leftover
// steers as a new prompt (dialect B), which this turn then follows.
func (t *turn) complete(p map[string]json.RawMessage) {
	t.noteUsage(p["usage"])
	f := &finalState{text: str(p["text"]), status: str(p["status"]), reasoning: str(p["reasoning"]), warning: str(p["warning"])}
	if f.reasoning == "" {
		f.reasoning = t.segReasoning.String()
	}
	// The final answer row (the last segment's text; Hermes's own text is the clean one).
	text := f.text
	seg := strings.TrimSpace(t.segText.String())
	if f.status != "complete" && (seg != "" || f.status == "error") {
		// Interrupted or failed: what streamed is the row (Hermes's text is then empty
		// or its error message).
		text = seg
	}
	if text != "" || f.reasoning != "" {
		t.rows = append(t.rows, protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: f.reasoning,
			Partial: f.status == "interrupted"})
	}
	t.segText.Reset()
	t.segReasoning.Reset()
	t.closeSegment()
	t.final = f
	reason := protocol.ResolvedTimeout
	if t.interrupting || f.status == "interrupted" {
		reason = protocol.ResolvedInterrupted
	}
	for _, a := range t.approvals {
		t.resolveApproval(a, reason, "")
	}
	for _, c := range t.clarifies {
		t.resolveClarify(c, reason)
	}
	if t.dialect == "B" && f.status == "complete" && len(t.pendingSteers()) > 0 && !t.interrupting {
		// tui_gateway/prompt_turn.py _run_post_turn_followups requeues a leftover
		// steer as the next prompt: it is read now, as a user row.
		var taken []protocol.SteerItem
		for _, s := range t.steers {
			if !s.taken {
				s.taken = true
				taken = append(taken, s.SteerItem)
				t.rows = append(t.rows, protocol.ChatMessage{Role: "user", Content: s.Text})
			}
		}
		t.send(protocol.EvSteerPending, protocol.SteerPendingData{Pending: []protocol.SteerItem{}, Taken: taken})
		t.awaitFollowup = true
		t.final = nil
		return
	}
	t.finishLocked()
}

// pendingSteers are the steers not taken yet, oldest first.
func (t *turn) pendingSteers() []protocol.SteerItem {
	out := []protocol.SteerItem{}
	for _, s := range t.steers {
		if !s.taken {
			out = append(out, s.SteerItem)
		}
	}
	return out
}

// result builds chat.start's result (or error) from what the turn saw. cancelled: the
// host stopped it; gone: the gateway died.
func (t *turn) result(cancelled bool, gone error) (*protocol.ChatResult, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finishLocked()
	// A segment still streaming when the turn ended (stop, crash) is kept as a
	// partial row.
	partialText := strings.TrimSpace(t.segText.String())
	rows := slices.Clone(t.rows)
	if t.final == nil && (partialText != "" || t.segReasoning.Len() > 0) {
		rows = append(rows, protocol.ChatMessage{Role: "assistant", Content: partialText, Reasoning: t.segReasoning.String(), Partial: true})
	}
	// Tool calls whose results never came would leave the history malformed.
	for id, ts := range t.tools {
		if !ts.done {
			rows = append(rows, protocol.ChatMessage{Role: "tool", ToolCallID: id, Name: ts.name, Content: `{"error":"not finished: the turn was stopped"}`})
		}
	}
	t.redactRows(rows)
	res := &protocol.ChatResult{Status: protocol.StatusCompleted, Messages: rows, Usage: t.usage, Context: t.ctxInfo,
		Model: t.model, Provider: "hermes", PendingSteer: t.pendingSteersOrNil()}
	if res.Messages == nil {
		res.Messages = []protocol.ChatMessage{}
	}
	res.AgentSessionID = t.s.storedID()
	t.s.mu.Lock()
	t.s.cum = t.lastCum
	t.s.mu.Unlock()
	res.FinalResponse = lastAssistantText(rows)
	switch {
	case gone != nil:
		e := protocol.NewError(0, protocol.CondSidecarUnavailable, gone.Error())
		e.Data.Partial = t.r.redact(t.visible.String())
		e.Data.Messages = rows
		e.Data.PendingSteer = t.pendingSteersOrNil()
		return nil, e
	case cancelled || (t.final != nil && t.final.status == "interrupted"):
		res.Status, res.Partial = protocol.StatusCancelled, true
		if res.FinalResponse == "" {
			res.FinalResponse = t.r.redact(t.visible.String())
		}
		for i := range res.Messages {
			if res.Messages[i].Role == "assistant" && i == len(res.Messages)-1 {
				res.Messages[i].Partial = true
			}
		}
		return res, nil
	case t.final != nil && t.final.status == "error":
		msg := strings.TrimSpace(strings.TrimPrefix(t.final.text, "Error:"))
		if msg == "" {
			msg = t.errorText
		}
		e := classify(msg)
		e.Data.Partial = t.r.redact(t.visible.String())
		e.Data.Messages = rows
		e.Data.PendingSteer = t.pendingSteersOrNil()
		return nil, e
	case t.final == nil:
		msg := t.errorText
		if msg == "" {
			msg = "Hermes ended the turn without an answer"
		}
		e := classify(msg)
		e.Data.Partial = t.r.redact(t.visible.String())
		e.Data.Messages = rows
		return nil, e
	}
	return res, nil
}

func (t *turn) pendingSteersOrNil() []protocol.SteerItem {
	p := t.pendingSteers()
	if len(p) == 0 {
		return nil
	}
	return p
}

func (t *turn) redactRows(rows []protocol.ChatMessage) {
	if t.r == nil {
		return
	}
	for i := range rows {
		rows[i].Content = t.r.redact(rows[i].Content)
		rows[i].Reasoning = t.r.redact(rows[i].Reasoning)
		for j := range rows[i].ToolCalls {
			rows[i].ToolCalls[j].Function.Arguments = t.r.redact(rows[i].ToolCalls[j].Function.Arguments)
		}
	}
}

func lastAssistantText(rows []protocol.ChatMessage) string {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Role == "assistant" && strings.TrimSpace(rows[i].Content) != "" {
			return rows[i].Content
		}
	}
	return ""
}

// Error classification of Hermes's own messages (its provider errors are words, not
// codes): the condition decides the window's error card, the message stays Hermes's.
var (
	reAuth     = regexp.MustCompile(`(?i)\b(401|403)\b|unauthori[sz]ed|invalid api key|incorrect api key|authentication|no api key|api key (is )?(missing|required)|no inference provider configured`)
	reRate     = regexp.MustCompile(`(?i)\b429\b|rate.?limit|too many requests`)
	reModel    = regexp.MustCompile(`(?i)model.{0,40}(not found|does not exist|unknown|not a valid)|unknown model|no such model`)
	reConnect  = regexp.MustCompile(`(?i)connection (refused|error)|could not connect|failed to connect|connecterror|name or service not known|timed out|unreachable`)
	reLoopback = regexp.MustCompile(`(?i)localhost|127\.0\.0\.1|\[::1\]|0\.0\.0\.0`)
	reQuota    = regexp.MustCompile(`(?i)insufficient.?quota|quota exceeded|billing`)
	reContext  = regexp.MustCompile(`(?i)context.{0,20}(length|window).{0,40}(exceed|too long|too large)|maximum context length|context_length_exceeded`)
)

// classify maps a Hermes error message to our condition, keeping the message.
func classify(msg string) *protocol.Error {
	cond, code := protocol.CondProviderError, ""
	switch {
	case reQuota.MatchString(msg):
		cond, code = protocol.CondRateLimited, "insufficient_quota"
	case reContext.MatchString(msg):
		code = "context_length_exceeded"
	case reAuth.MatchString(msg):
		cond = protocol.CondCredentialMissing
	case reRate.MatchString(msg):
		cond = protocol.CondRateLimited
	case reModel.MatchString(msg):
		cond = protocol.CondModelNotFound
	case reConnect.MatchString(msg) && reLoopback.MatchString(msg):
		cond = protocol.CondLocalRuntimeUnavailable
	}
	e := protocol.NewError(0, cond, "Hermes: "+msg)
	e.Data.ProviderCode = code
	return e
}

// Helpers for loosely typed payloads.

func str(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

func boolOf(raw json.RawMessage) bool {
	var b bool
	return json.Unmarshal(raw, &b) == nil && b
}

func num(raw json.RawMessage) int64 {
	var f float64
	if json.Unmarshal(raw, &f) == nil {
		return int64(f)
	}
	return 0
}

func numF(raw json.RawMessage) float64 {
	var f float64
	json.Unmarshal(raw, &f) //nolint:errcheck // 0 when absent
	return f
}

func shortID(s string) string {
	s = strings.TrimPrefix(s, "st_")
	if len(s) > 8 {
		s = s[len(s)-8:]
	}
	return s
}

// capString cuts s to at most n bytes on a rune boundary.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// capArgs caps every string of a tool call's arguments at 2 KiB (docs/protocol.md).
func capArgs(args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = capValue(v, 2<<10)
	}
	return out
}

func capValue(v any, n int) any {
	switch x := v.(type) {
	case string:
		return capString(x, n)
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = capValue(e, n)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = capValue(e, n)
		}
		return l
	}
	return v
}

// boundedRaw caps every string in a result at 8 KiB.
func boundedRaw(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		b, _ := json.Marshal(capString(string(raw), 8<<10))
		return b
	}
	b, err := json.Marshal(capValue(v, 8<<10))
	if err != nil {
		return nil
	}
	return b
}

// previewOf is a tool result as text: a command's output, Hermes's summary, or the
// JSON itself.
func previewOf(raw json.RawMessage, summary string) string {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		if out, ok := obj["output"].(string); ok {
			if e, ok := obj["error"].(string); ok && e != "" {
				return strings.TrimSpace(out + "\n" + e)
			}
			return out
		}
		if c, ok := obj["content"].(string); ok {
			return c
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if summary != "" {
		return summary
	}
	return string(raw)
}

// primaryArg is the argument a card shows in its title.
func primaryArg(name string, args map[string]any) string {
	for _, k := range []string{"command", "path", "file_path", "pattern", "query", "url", "name"} {
		if v, ok := args[k].(string); ok && v != "" {
			return v
		}
	}
	if name == "clarify" {
		if qs, ok := args["questions"].([]any); ok && len(qs) > 0 {
			if q, ok := qs[0].(map[string]any); ok {
				if s, ok := q["question"].(string); ok {
					return s
				}
			}
		}
		if s, ok := args["question"].(string); ok {
			return s
		}
	}
	if name == "todo" {
		if todos, ok := args["todos"].([]any); ok {
			return fmt.Sprintf("%d items", len(todos))
		}
	}
	return ""
}

func isGatewayExit(err error) bool { return errors.Is(err, errGatewayExited) }
