package turn

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"talaria/backend/bus"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// Terminal states recorded on a settled stream.
const (
	TerminalDone        = "done"
	TerminalAppError    = "apperror"
	TerminalCancel      = "cancel"
	TerminalInterrupted = "interrupted"
)

// settle writes the turn's rows in one transaction, then emits the terminal frame and
// stream_end. err is chat.start's error (nil when a result arrived).
func (r *Runner) settle(rn *run, res protocol.ChatResult, err error) {
	r.mu.Lock()
	userCancelled := rn.userCancelled
	r.mu.Unlock()

	var resp *protocol.ChatResult
	if err == nil {
		resp = &res
	}
	left := r.leftoverSteers(rn, resp)

	var (
		rows     []store.Message
		terminal string
		appErr   *AppError
		usage    = res.Usage
	)
	if usage == (protocol.Usage{}) {
		usage = rn.usage
	}
	switch {
	case err == nil && res.Status == protocol.StatusCompleted:
		terminal = TerminalDone
		rows = rowsOf(res.Messages, rn.streamID)
		if len(rows) == 0 && rn.text.Len() > 0 {
			rows = []store.Message{{Role: "assistant", Content: rn.text.String(), Reasoning: rn.reasoning.String(), StreamID: rn.streamID}}
		}
		if res.Truncated != "" {
			// The answer was cut (its output limit, a content filter): a marker the
			// window shows with Continue, never sent to the model.
			rows = append(rows, store.Message{Role: "assistant", Kind: store.KindTruncated, Content: res.Truncated, StreamID: rn.streamID})
		}
	case err == nil && res.Status == protocol.StatusCancelled,
		err != nil && userCancelled && errors.Is(err, context.Canceled):
		// The sidecar's own cancelled result, or no result within the grace period.
		terminal = TerminalCancel
		rows = rowsOf(res.Messages, rn.streamID)
		if len(rows) == 0 {
			rows = r.partialRows(rn)
		}
		rows = append(rows, store.Message{Role: "assistant", Kind: store.KindCancelled, StreamID: rn.streamID})
	default:
		terminal = TerminalAppError
		if err == nil {
			err = protocol.NewError(0, protocol.CondProviderError, res.Error)
		}
		ae := Classify(err)
		appErr = &ae
		var pe *protocol.Error
		if errors.As(err, &pe) && pe.Data != nil && len(pe.Data.Messages) > 0 {
			rows = rowsOf(pe.Data.Messages, rn.streamID)
		} else {
			rows = r.partialRows(rn)
		}
		rows = append(rows, store.Message{Role: "assistant", Kind: store.KindError, Content: ae.Label + ": " + ae.Message, StreamID: rn.streamID,
			Error: &store.RowError{Type: ae.Type, Label: ae.Label, Message: ae.Message, Hint: ae.Hint}})
	}

	if rn.compact != nil && rn.compact.summary != nil {
		// The summary the turn was sent with: kept whatever became of the turn.
		rows = append([]store.Message{*rn.compact.summary}, rows...)
	}
	stats := store.TurnStats{Model: res.Model}
	if stats.Model == "" {
		stats.Model = rn.cfg.Model
	}
	if res.Context.LastPromptTokens > 0 {
		stats.ContextTokens = res.Context.LastPromptTokens + res.Context.LastOutputTokens
	}
	switch {
	case usage.CostReported:
		stats.CostSource = store.CostProvider
	case rn.cfg.Price != nil && usage.InputTokens+usage.OutputTokens > 0:
		usage.EstimatedCost = rn.cfg.Price.Cost(usage)
		stats.CostSource = store.CostPrice
	}

	r.withdrawPending(rn)
	if r.Redact != nil {
		for i := range rows {
			rows[i] = r.redactRow(rows[i])
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if serr := r.store.SettleTurnWith(ctx, rn.sessionID, rn.streamID, rows, usage, terminal, stats); serr != nil {
		if errors.Is(serr, store.ErrNotFound) {
			r.log.Info("session deleted while its turn ran; turn dropped", "stream", rn.streamID)
		} else {
			r.log.Error("settling turn failed; retrying in the background", "stream", rn.streamID, "err", serr)
			r.retrySettle(rn, rows, usage, terminal, stats)
			terminal = TerminalAppError
			appErr = &AppError{Type: ErrTypeSaveFailed, Label: "Could not save the answer", Message: serr.Error(),
				Hint: "The answer is still on screen; copy what you need. Free disk space or check that the data folder is writable: Talaria keeps trying to save it for 10 minutes, and the session takes new messages once it is saved."}
		}
	}

	dur := time.Since(rn.started).Seconds()
	switch terminal {
	case TerminalDone:
		r.emit(rn, protocol.EvDone, DoneData{Usage: usage, DurationSeconds: dur, TPS: rn.tps(),
			TerminalState: res.Status, ToolLimitReached: res.ToolLimitReached, Truncated: res.Truncated,
			CostSource: stats.CostSource, Model: stats.Model,
			Context: DoneContext{UsedTokens: stats.ContextTokens, ContextLength: rn.cfg.ContextLength}})
	case TerminalCancel:
		unsent := make([]string, len(left))
		for i, s := range left {
			unsent[i] = s.Text
		}
		r.keepUnsent(rn.sessionID, unsent)
		r.emit(rn, protocol.EvCancel, CancelData{Partial: rn.text.Len() > 0, DurationSeconds: dur, UnsentSteers: unsent})
	default:
		r.emit(rn, protocol.EvAppError, appErr)
	}
	r.setStatus(rn, "", nil)
	// The run leaves live before stream_end, so whoever sees stream_end sees it gone.
	r.mu.Lock()
	delete(r.live, rn.streamID)
	follow := len(left) > 0 && !userCancelled && !r.closing
	if follow {
		r.followUps[rn.sessionID]++ // in the same step, so Busy never sees a gap
		r.wg.Add(1)
	}
	// The title of a first exchange is made after stream_end, off the turn's path:
	// neither stream_end nor the tray's "working" waits for the model's title call.
	title := terminal == TerminalDone && r.titles && !rn.cfg.NoTitle && rn.firstExchange && !r.closing
	if title {
		r.wg.Add(1)
	}
	r.mu.Unlock()
	r.emit(rn, protocol.EvStreamEnd, StreamEndData{})
	r.bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	if title {
		go func() {
			defer r.wg.Done()
			r.maybeTitle(rn, rn.cfg, rn.userText, res.FinalResponse)
		}()
	}
	if follow {
		// Sent once: the run is gone from live, so these steers exist nowhere else now.
		go func() {
			defer r.wg.Done()
			r.followUp(rn.sessionID, left)
			r.mu.Lock()
			if r.followUps[rn.sessionID]--; r.followUps[rn.sessionID] <= 0 {
				delete(r.followUps, rn.sessionID)
			}
			r.mu.Unlock()
		}()
	}
}

// interruptedToolResult is the saved result of a tool call the turn showed but that
// never finished: the agent process (or the app) stopped during it. An error result:
// the card shows the call as failed, and a later turn's model reads why.
const interruptedToolResult = `{"error":"interrupted: the turn ended before this tool call finished (the agent process stopped)"}`

// partialRows is what the host itself saw of a turn that returned no rows: the
// streamed text and the tool calls shown as an assistant row (none when nothing
// streamed), each tool call's result as a tool row (interruptedToolResult for one
// that never finished), then the steers the agent took, as user rows. Without the
// tool rows, a command the agent process died running vanished from the transcript.
func (r *Runner) partialRows(rn *run) []store.Message {
	var out []store.Message
	if rn.text.Len() > 0 || rn.reasoning.Len() > 0 || len(rn.tools) > 0 {
		a := store.Message{Role: "assistant", Content: rn.text.String(), Reasoning: rn.reasoning.String(), StreamID: rn.streamID}
		for _, t := range rn.tools {
			a.ToolCalls = append(a.ToolCalls, t.call)
		}
		out = append(out, a)
		for _, t := range rn.tools {
			res := t.result
			if !t.done {
				res = interruptedToolResult
			}
			out = append(out, store.Message{Role: "tool", Content: res, ToolCallID: t.call.ID, Name: t.call.Function.Name, StreamID: rn.streamID})
		}
	}
	r.mu.Lock()
	for _, s := range rn.steer.consumed {
		out = append(out, store.Message{Role: "user", Content: s.Text, StreamID: rn.streamID})
	}
	r.mu.Unlock()
	return out
}

func rowsOf(msgs []protocol.ChatMessage, streamID string) []store.Message {
	out := make([]store.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Role == "system" {
			continue
		}
		// A user row in a result is a steer the agent read there (the turn's own user
		// message is never in it: the host saved that at admission).
		if m.Role == "assistant" && m.Content == "" && m.Reasoning == "" && len(m.ToolCalls) == 0 {
			continue
		}
		out = append(out, store.Message{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning,
			ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID, Name: m.Name, StreamID: streamID})
	}
	return out
}

// SettleInterrupted settles the streams that were live when a previous app process
// died: the journaled partial answer (its text and tool calls) and an interrupted
// marker are appended, the
// session is freed, and the journal gets a closing apperror and stream_end so a
// replaying window sees the end. It returns how many streams it settled.
func (r *Runner) SettleInterrupted(ctx context.Context) (int, error) {
	streams, err := r.store.LiveStreams(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, ls := range streams {
		if r.Live(ls.StreamID) {
			continue
		}
		frames, err := r.store.JournalSince(ctx, ls.StreamID, 0)
		if err != nil {
			return n, err
		}
		rn := &run{sessionID: ls.SessionID, streamID: ls.StreamID}
		for _, f := range frames {
			rn.seq = f.Seq
			switch f.Event {
			case protocol.EvToken, protocol.EvReasoning:
				var td protocol.TextData
				if json.Unmarshal(f.Data, &td) == nil {
					r.noteText(rn, f.Event, td.Text)
				}
			case protocol.EvTool:
				var td protocol.ToolData
				if json.Unmarshal(f.Data, &td) == nil && td.TID != "" {
					rn.seeTool(td)
				}
			case protocol.EvToolComplete:
				var tc protocol.ToolCompleteData
				if json.Unmarshal(f.Data, &tc) == nil {
					rn.toolDone(tc)
				}
			case protocol.EvApproval:
				var ad protocol.ApprovalData
				if json.Unmarshal(f.Data, &ad) == nil && ad.ApprovalID != "" {
					if rn.approvals == nil {
						rn.approvals = map[string]protocol.ApprovalData{}
					}
					rn.approvals[ad.ApprovalID] = ad
				}
			case protocol.EvApprovalResolved:
				var d ApprovalResolvedFrame
				if json.Unmarshal(f.Data, &d) == nil {
					delete(rn.approvals, d.ApprovalID)
				}
			}
		}
		// An approval still waiting when the app died is in the audit log as
		// interrupted, as one cut short by the agent's death is (withdrawPending).
		for id := range rn.approvals {
			r.auditResolved(rn, id, protocol.ResolvedInterrupted, "")
		}
		rows := append(r.partialRows(rn), store.Message{Role: "assistant", Kind: store.KindInterrupted, StreamID: ls.StreamID})
		if err := r.store.SettleTurn(ctx, ls.SessionID, ls.StreamID, rows, protocol.Usage{}, TerminalInterrupted); err != nil && !errors.Is(err, store.ErrNotFound) {
			return n, err
		}
		r.emit(rn, protocol.EvAppError, AppError{Type: ErrTypeError, Label: "Interrupted",
			Message: "Talaria stopped while this turn was running.",
			Hint:    "The partial answer was kept. Send your message again to continue."})
		r.emit(rn, protocol.EvStreamEnd, StreamEndData{})
		n++
	}
	if n > 0 {
		r.bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	}
	return n, nil
}

// redactRow removes known secrets from a row about to be saved.
func (r *Runner) redactRow(m store.Message) store.Message {
	red := func(s string) string { return string(r.Redact([]byte(s))) }
	m.Content, m.Reasoning = red(m.Content), red(m.Reasoning)
	if len(m.ToolCalls) > 0 {
		calls := make([]protocol.ToolCall, len(m.ToolCalls))
		for i, c := range m.ToolCalls {
			c.Function.Arguments = red(c.Function.Arguments)
			calls[i] = c
		}
		m.ToolCalls = calls
	}
	return m
}

// SettleRetryEvery and SettleRetryFor pace the background retries of a settlement that
// failed (a full disk, a read-only folder): every 5 s for at most 10 minutes.
var (
	SettleRetryEvery = 5 * time.Second
	SettleRetryFor   = 10 * time.Minute
)

// retrySettle keeps trying to save a turn whose settlement failed, so that freeing
// disk space saves the answer and frees the session without a restart. A later start
// settles the stream as interrupted if every try fails.
func (r *Runner) retrySettle(rn *run, rows []store.Message, usage protocol.Usage, terminal string, stats store.TurnStats) {
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		deadline := time.Now().Add(SettleRetryFor)
		t := time.NewTicker(SettleRetryEvery)
		defer t.Stop()
		for time.Now().Before(deadline) {
			<-t.C
			r.mu.Lock()
			closing := r.closing
			r.mu.Unlock()
			if closing {
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err := r.store.SettleTurnWith(ctx, rn.sessionID, rn.streamID, rows, usage, terminal, stats)
			cancel()
			if err == nil || errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrStreamEnded) {
				r.log.Info("turn saved after a failed settlement", "stream", rn.streamID, "err", err)
				r.bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
				return
			}
		}
		r.log.Error("giving up saving the turn; it will be settled as interrupted at the next start", "stream", rn.streamID)
	}()
}

// keepUnsent appends the steers a stopped turn never took to the session's composer
// draft, so no text is lost even with no window open; the cancel frame also lists them.
func (r *Runner) keepUnsent(sessionID string, texts []string) {
	if len(texts) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d, err := r.store.Draft(ctx, sessionID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		r.log.Warn("reading the draft to keep unsent messages", "err", err)
	}
	parts := append([]string{}, texts...)
	if strings.TrimSpace(d.Text) != "" {
		parts = append([]string{d.Text}, parts...)
	}
	if err := r.store.SaveDraft(ctx, sessionID, strings.Join(parts, "\n\n")); err != nil {
		r.log.Warn("keeping unsent messages in the draft", "err", err)
	}
}
