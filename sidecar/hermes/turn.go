package hermes

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

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

// handle translates one gateway message (docs/hermes.md, "Mapping") from its decoded
// body (events.go).
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
	if ev.Err != nil {
		if t.r != nil {
			t.r.log.Warn("dropped a Hermes event whose payload is not an object", "type", ev.Type)
		}
		return
	}
	if t.awaitFollowup && ev.Type != evKindMessageStart {
		// Between a message.complete and the follow-up turn Hermes starts for the
		// leftover steers, only the follow-up's start matters.
		t.other(ev)
		return
	}
	switch b := ev.Body.(type) {
	case *evMessageStart:
		t.awaitFollowup = false
		t.modelCall()
	case *evMessageDelta:
		t.textDelta(b.Text)
	case *evReasoningDelta:
		t.reasoningDelta(b.Text)
	case *evMessageInterim:
		t.interim(b)
	case *evToolGenerating:
		t.modelCall()
	case *evToolStart:
		t.toolStart(b)
	case *evToolComplete:
		t.toolComplete(b)
	case *evApproval:
		t.approval(b, nil)
	case *evClarify, *evSecret, *evSudo:
		t.prompt(b, nil)
	case *evPromptExpired:
		t.resolveClarifyByRequestID(b.RequestID, protocol.ResolvedTimeout)
	case *evRequestCancel:
		t.requestCancel(b)
	case *evStatusUpdate:
		t.statusUpdate(b)
	case *evNotificationShow:
		t.notice(b)
	case *evNotificationClear:
		if b.Key != "" {
			t.send(protocol.EvNoticeClear, protocol.NoticeClearData{Key: b.Key})
		}
	case *evSessionUsage:
		t.noteUsage(b.Usage)
	case *evMessageComplete:
		t.complete(b)
	case *evError:
		t.errorText = b.Message
	default:
		t.other(ev)
	}
}

// textDelta streams visible text (message.delta).
func (t *turn) textDelta(text string) {
	if text == "" {
		return
	}
	t.modelCall()
	t.endCompression()
	t.visible.WriteString(text)
	t.segText.WriteString(text)
	t.send(protocol.EvToken, protocol.TextData{Text: text})
}

// reasoningDelta streams reasoning (reasoning.delta).
func (t *turn) reasoningDelta(text string) {
	if text == "" {
		return
	}
	t.modelCall()
	t.endCompression()
	t.segReasoning.WriteString(text)
	t.send(protocol.EvReasoning, protocol.TextData{Text: text})
}

// interim takes message.interim: assistant prose before a tool batch. Streamed
// already (already_streamed) it was sent as tokens; otherwise it is sent now so the
// window shows it.
func (t *turn) interim(b *evMessageInterim) {
	if b.Text == "" {
		return
	}
	if !b.AlreadyStreamed {
		t.visible.WriteString(b.Text)
		t.send(protocol.EvToken, protocol.TextData{Text: b.Text})
	}
	t.segText.Reset()
	t.segText.WriteString(b.Text)
}

// statusUpdate maps status.update: Hermes compressing its context, or a status line.
func (t *turn) statusUpdate(b *evStatusUpdate) {
	if b.Kind == "compacting" || b.Kind == "compressing" {
		t.compressing = true
		t.send(protocol.EvCompressing, map[string]any{"message": b.Text})
		return
	}
	if b.Text != "" {
		t.send(protocol.EvAgentStatus, protocol.AgentStatusData{Kind: b.Kind, Text: b.Text})
	}
}

// notice maps notification.show; ttl_ms becomes an expiry in epoch milliseconds.
func (t *turn) notice(b *evNotificationShow) {
	n := protocol.NoticeData{Key: firstNonEmpty(b.Key, b.ID), Text: b.Text, Level: b.Level}
	if n.Key == "" {
		n.Key = "hermes"
	}
	if b.TTLMillis > 0 {
		n.ExpiresAt = t.now().UnixMilli() + b.TTLMillis // epoch ms, as every time on the wire
	}
	if n.Text != "" {
		t.send(protocol.EvNotice, n)
	}
}

// other handles events that never end or shape the turn.
func (t *turn) other(ev *gwEvent) {
	switch b := ev.Body.(type) {
	case *evSessionInfo:
		t.s.noteInfo(b.Info, t.send)
		if b.Usage != nil {
			if !t.output {
				// The session's totals before this turn (a resumed Hermes session
				// brings its own).
				t.base, t.lastCum = b.Usage.counters(), b.Usage.counters()
				return
			}
			t.noteUsage(b.Usage)
		}
	case *evSessionTitle:
		t.s.noteTitle(b.Title, t.send)
	case *evMessageStart:
		t.awaitFollowup = false
		t.modelCall()
	case evDecoration:
		// Spinner text, a summary of text already streamed, UI decoration.
	default:
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

// noteUsage reads Hermes's cumulative session usage into the turn's counters.
func (t *turn) noteUsage(u *gwUsage) {
	if u == nil {
		return
	}
	cum := u.counters()
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
func (t *turn) complete(b *evMessageComplete) {
	t.noteUsage(b.Usage)
	f := &finalState{text: b.Text, status: b.Status, reasoning: b.Reasoning, warning: b.Warning}
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

func isGatewayExit(err error) bool { return errors.Is(err, errGatewayExited) }
