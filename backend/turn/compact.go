package turn

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// Compaction: when a turn would fill more of the model's context than Config.CompactAt
// (a setting, 80 % by default), the older turns are summarised through aux.complete
// before chat.start, and the summary replaces them in what is sent (inside the system
// prompt; strict chat templates refuse a system message in mid-conversation). The
// transcript keeps every row: the summary is one more row (kind summary) that says how
// many rows from the start it stands for. "Summarise and continue" (Compact) does the
// same on demand. Runtimes with their own model and memory (Hermes, ACP agents) compact
// themselves; the host does not for them.

// CompactTimeout bounds one summarising model call: local models can be slow on a long
// conversation.
var CompactTimeout = 3 * time.Minute

// compactKeep is the share of the context window the rows kept verbatim may fill, so a
// turn after compaction starts well under the threshold.
const compactKeep = 0.3

// summaryMaxTokens bounds the summary's length (tokens).
const summaryMaxTokens = 2048

// compactSystemPrompt asks for a summary that can stand in for the turns it covers.
const compactSystemPrompt = `You summarise conversations between a user and an AI agent so the conversation can continue in a smaller context window.
Write a concise summary of the conversation you are given: the user's goals and preferences, what was decided and done, facts established, files, commands and their outcomes, and open questions or next steps.
Keep names, paths, numbers, code identifiers and error messages exact. Write in the language of the conversation. Answer with the summary only, without a preamble.`

// compaction is a plan to summarise rows[:keepFrom] (with the earlier summary, which
// covers rows[:prevCovers]) and send rows[keepFrom:] as they are. rows[i] is at
// position base+i of the transcript (store.MessagesForTurn), so the summary row stands
// for the rows before position base+keepFrom.
type compaction struct {
	rows       []store.Message
	base       int
	keepFrom   int
	prev       string
	prevCovers int
	estimate   int64 // tokens the turn was estimated at
	summary    *store.Message
}

// NothingToCompactError is returned by Compact when there are no older turns to
// summarise.
type NothingToCompactError struct{}

func (*NothingToCompactError) Error() string {
	return "there is nothing to summarise yet: the conversation is only its latest exchange"
}

// CompactUnsupportedError is returned by Compact for a chat whose runtime brings its
// own model (the host has none to summarise with).
type CompactUnsupportedError struct{}

func (*CompactUnsupportedError) Error() string {
	return "this chat's agent keeps its own context: Talaria cannot summarise it"
}

// estimateText is a rough token count of text: a token per 4 bytes (English prose
// averages about 4 characters a token; code and other scripts run denser, so the
// estimate leans high through the per-message overhead).
func estimateText(s string) int64 { return int64(len(s)+3) / 4 }

// imageTokens is what an attached image is counted at (a 1024x1024 image is about 765
// tokens at OpenAI's high detail).
const imageTokens = 800

// estimateRow is a rough token count of one saved row as sent.
func estimateRow(m store.Message) int64 {
	n := estimateText(m.Content) + 4
	for _, c := range m.ToolCalls {
		n += estimateText(c.Function.Name) + estimateText(c.Function.Arguments) + 4
	}
	for _, a := range m.Attachments {
		if a.Kind == store.AttachmentImage {
			n += imageTokens
		} else {
			n += (a.SentBytes+3)/4 + 20
		}
	}
	return n
}

// summaryStart returns where the rows sent as they are begin (after the last summary),
// as an index of rows, whose first row is at position base, and that summary's text.
func summaryStart(rows []store.Message, base int) (int, string) {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Kind == store.KindSummary {
			return min(max(rows[i].SummaryCovers-base, 0), i), rows[i].Content
		}
	}
	return 0, ""
}

// contextUsed estimates the tokens the next request starts with, before its new
// message: the provider's own count after the last turn when that turn is the latest
// thing in the transcript (its context_tokens), else an estimate of what would be sent.
// rows are the transcript from position base on (store.MessagesForTurn); only the turn
// that wrote the last row is read besides them.
func (r *Runner) contextUsed(ctx context.Context, rows []store.Message, base int, cfg Config) (int64, bool) {
	from, summary := summaryStart(rows, base)
	if n := len(rows); n > 0 && rows[n-1].StreamID != "" {
		if last, ok, err := r.store.TurnFiguresOf(ctx, rows[n-1].StreamID); err == nil && ok &&
			last.ContextTokens > 0 && !summaryIn(rows, last.StreamID) {
			return last.ContextTokens, true
		}
	}
	n := estimateText(cfg.SystemMessage) + estimateText(summary) + 20
	if len(cfg.EnabledToolsets) == 0 || cfg.EnabledToolsets[0] != "none" {
		n += 1500 // the tools' schemas
	}
	for _, m := range rows[from:] {
		if m.Kind == "" {
			n += estimateRow(m)
		}
	}
	return n, false
}

// summaryIn reports whether the rows of stream streamID include a summary row (the
// turn's own count was made before its compaction took effect for the next one).
func summaryIn(rows []store.Message, streamID string) bool {
	for i := len(rows) - 1; i >= 0 && rows[i].StreamID == streamID; i-- {
		if rows[i].Kind == store.KindSummary {
			return true
		}
	}
	return false
}

// planCompaction decides whether the turn about to send user after rows must
// summarise older turns first, and which: nil when the context window is unknown,
// compaction is off, the runtime brings its own model, or the turn fits.
func (r *Runner) planCompaction(ctx context.Context, sessionID string, rows []store.Message, base int, cfg Config, user store.Message) *compaction {
	if cfg.OwnModel || cfg.ContextLength <= 0 || cfg.CompactAt <= 0 || cfg.CompactAt >= 1 || len(rows) == 0 {
		return nil
	}
	used, _ := r.contextUsed(ctx, rows, base, cfg)
	need := used + estimateRow(user)
	if float64(need) <= cfg.CompactAt*float64(cfg.ContextLength) {
		return nil
	}
	plan := keepPlan(rows, base, int64(compactKeep*float64(cfg.ContextLength))-estimateRow(user))
	if plan == nil {
		return nil
	}
	plan.estimate = need
	r.log.Info("compacting before the turn", "session", sessionID, "estimated_tokens", need,
		"context_length", cfg.ContextLength, "summarised_rows", base+plan.keepFrom, "kept_rows", len(rows)-plan.keepFrom)
	return plan
}

// keepPlan keeps the latest rows that fit budget tokens, starting at a user row (so a
// tool call and its result are never split), and summarises the rest; nil when nothing
// new would be summarised. rows[0] is at position base.
func keepPlan(rows []store.Message, base int, budget int64) *compaction {
	prevCovers, prev := summaryStart(rows, base)
	keepFrom := len(rows)
	var kept int64
	for i := len(rows) - 1; i > prevCovers; i-- {
		if rows[i].Kind == "" {
			kept += estimateRow(rows[i])
		}
		if kept > budget {
			break
		}
		if rows[i].Role == "user" && rows[i].Kind == "" {
			keepFrom = i
		}
	}
	if keepFrom <= prevCovers || !hasConversation(rows[prevCovers:keepFrom]) {
		return nil
	}
	return &compaction{rows: rows, base: base, keepFrom: keepFrom, prev: prev, prevCovers: prevCovers}
}

func hasConversation(rows []store.Message) bool {
	for _, m := range rows {
		if m.Kind == "" && (m.Role == "user" || m.Role == "assistant") {
			return true
		}
	}
	return false
}

// transcriptText renders rows for the summariser: one block per row, tool results and
// long texts clipped.
func transcriptText(rows []store.Message) []string {
	var out []string
	for _, m := range rows {
		if m.Kind != "" {
			continue
		}
		var b strings.Builder
		switch m.Role {
		case "user":
			b.WriteString("User: ")
		case "assistant":
			b.WriteString("Assistant: ")
		case "tool":
			fmt.Fprintf(&b, "Tool result (%s): ", m.Name)
		default:
			b.WriteString("System: ")
		}
		limit := 6000
		if m.Role == "tool" {
			limit = 2000
		}
		b.WriteString(clipRunes(m.Content, limit))
		for _, a := range m.Attachments {
			fmt.Fprintf(&b, "\n[attached %s: %s, %d bytes]", a.Kind, a.Name, a.Size)
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "\n[called %s with %s]", c.Function.Name, clipRunes(c.Function.Arguments, 1000))
		}
		out = append(out, b.String())
	}
	return out
}

func clipRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + " […]"
}

// summarise runs the plan's summary through aux.complete on the built-in runtime, in
// pieces that fit the model's context (each piece extends the summary so far).
func (r *Runner) summarise(ctx context.Context, cfg Config, plan *compaction) (string, error) {
	blocks := transcriptText(plan.rows[plan.prevCovers:plan.keepFrom])
	if len(blocks) == 0 {
		return "", &NothingToCompactError{}
	}
	window := cfg.ContextLength
	if window <= 0 {
		window = 8192
	}
	chunkBytes := int(float64(window)*0.55) * 3 // leave room for the prompt and the answer; 3 bytes a token errs short
	chunkBytes = max(chunkBytes, 4000)
	summary := plan.prev
	for start := 0; start < len(blocks); {
		var piece strings.Builder
		end := start
		for end < len(blocks) && (piece.Len() == 0 || piece.Len()+len(blocks[end]) < chunkBytes) {
			piece.WriteString(clipRunes(blocks[end], chunkBytes))
			piece.WriteString("\n\n")
			end++
		}
		start = end
		var user string
		if summary == "" {
			user = "Summarise this conversation:\n\n<conversation>\n" + piece.String() + "</conversation>"
		} else {
			user = "Here is the summary of the conversation so far:\n\n<summary>\n" + summary +
				"\n</summary>\n\nWrite one summary of the whole conversation: the summary above and what follows.\n\n<conversation>\n" +
				piece.String() + "</conversation>"
		}
		cctx, cancel := context.WithTimeout(ctx, CompactTimeout)
		var res protocol.AuxCompleteResult
		err := r.caller.Call(cctx, protocol.MethodAuxComplete, protocol.AuxCompleteParams{
			Task: protocol.AuxCompaction, MaxTokens: int(min(int64(summaryMaxTokens), max(window/8, 256))), Model: cfg.Model, Provider: cfg.Provider,
			Messages: []protocol.ChatMessage{{Role: "system", Content: compactSystemPrompt}, {Role: "user", Content: user}},
		}, nil, &res)
		cancel()
		if err != nil {
			return "", err
		}
		if strings.TrimSpace(res.Text) == "" {
			return "", errors.New("the model answered with an empty summary")
		}
		summary = strings.TrimSpace(res.Text)
	}
	return summary, nil
}

// summaryPrompt is the ephemeral system prompt that carries a summary.
func summaryPrompt(summary string) string {
	if strings.TrimSpace(summary) == "" {
		return ""
	}
	return "The earlier part of this conversation was summarised to fit your context window; the messages that follow come after it. Summary:\n\n" + summary
}

// compactBeforeTurn runs the run's compaction plan, if any, before chat.start: frames
// compressing and compression_finished around it, and params re-built to send the
// summary and the rows it keeps. When summarising fails the turn goes on with the
// whole history and a warning frame.
func (r *Runner) compactBeforeTurn(ctx context.Context, rn *run, params *protocol.ChatStartParams) {
	plan := rn.compact
	if plan == nil {
		return
	}
	r.emit(rn, protocol.EvCompressing, protocol.MessageData{Message: "Summarising earlier messages to fit the model's context"})
	r.setStatus(rn, RunCompressing, nil)
	summary, err := r.summarise(ctx, rn.cfg, plan)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("compaction failed; sending the whole conversation", "session", rn.sessionID, "err", err)
			r.emit(rn, protocol.EvWarning, protocol.WarningData{Type: protocol.WarningCompaction,
				Message: "Could not summarise the earlier messages (" + err.Error() + "); the whole conversation is sent."})
		}
		r.emit(rn, protocol.EvCompressionFinished, protocol.CompressionFinishedData{})
		r.setStatus(rn, RunWorking, nil)
		return
	}
	row := store.Message{Role: "system", Kind: store.KindSummary, Content: summary, SummaryCovers: plan.base + plan.keepFrom, StreamID: rn.streamID}
	plan.summary = &row
	rows := append(append([]store.Message(nil), plan.rows...), row)
	if hist, s, herr := r.history(rows, plan.base, rn.cfg); herr == nil {
		params.ConversationHistory, params.EphemeralSystemPrompt = hist, summaryPrompt(s)
	}
	r.emit(rn, protocol.EvCompressionFinished, protocol.CompressionFinishedData{Message: "Earlier messages were summarised",
		SummaryCovers: plan.base + plan.keepFrom, Summary: summary})
	r.setStatus(rn, RunWorking, nil)
}

// Compact summarises the older turns of the idle session sessionID now ("Summarise
// and continue"): everything but the latest exchange (or, when the context window is
// known, the latest rows that fit 30 % of it), saved as a summary row at the end. It
// returns the row. Errors: *store.BusyError while a turn runs; *NothingToCompactError;
// *CompactUnsupportedError for a runtime with its own model; *store.ConflictError when
// the chat changed meanwhile; the ConfigFunc's and aux.complete's errors.
func (r *Runner) Compact(ctx context.Context, sessionID string) (store.Message, error) {
	sess, err := r.store.GetSession(ctx, sessionID)
	if err != nil {
		return store.Message{}, err
	}
	if sess.ActiveStreamID != "" || r.Busy(sessionID) {
		return store.Message{}, &store.BusyError{SessionID: sessionID, StreamID: sess.ActiveStreamID}
	}
	cfg, err := r.config(ctx, sess)
	if err != nil {
		return store.Message{}, err
	}
	if cfg.OwnModel {
		return store.Message{}, &CompactUnsupportedError{}
	}
	rows, base, err := r.store.MessagesForTurn(ctx, sessionID)
	if err != nil {
		return store.Message{}, err
	}
	// Keep at least the latest exchange: the last user row and what followed it (a
	// failed turn's message among them, so it can be sent again); with a known context
	// window, the latest rows that fit 30 % of it.
	last := lastUser(rows)
	prevCovers, prev := summaryStart(rows, base)
	var plan *compaction
	if cfg.ContextLength > 0 {
		plan = keepPlan(rows, base, int64(compactKeep*float64(cfg.ContextLength)))
	}
	if plan == nil || (last >= 0 && plan.keepFrom > last) {
		if last <= prevCovers || !hasConversation(rows[prevCovers:last]) {
			return store.Message{}, &NothingToCompactError{}
		}
		plan = &compaction{rows: rows, base: base, keepFrom: last, prev: prev, prevCovers: prevCovers}
	}
	summary, err := r.summarise(ctx, cfg, plan)
	if err != nil {
		return store.Message{}, err
	}
	saved, err := r.store.AppendMessages(ctx, sessionID, sess.Revision, []store.Message{
		{Role: "system", Kind: store.KindSummary, Content: summary, SummaryCovers: plan.base + plan.keepFrom}})
	if err != nil {
		return store.Message{}, err
	}
	return saved.Messages[0], nil
}

// lastUser is the index of the last ordinary user row, -1 when none.
func lastUser(rows []store.Message) int {
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Role == "user" && rows[i].Kind == "" {
			return i
		}
	}
	return -1
}

// MeasuredContext returns the provider's own count of the tokens the next request of a
// session starts with (the last settled turn's context_tokens, as ContextUsed gives it)
// when tail, the session's last rows with more set when rows come before them
// (store.MessagesBefore with before < 0), shows that count still holds: that turn's
// rows end the transcript and hold no summary. ok is false when it does not hold or
// tail does not reach back past that turn's rows: ContextUsed over every row decides
// then. It reads nothing, so a chat's meter costs a page of rows, not the transcript.
func MeasuredContext(tail []store.Message, more bool, last store.TurnFigures) (tokens int64, ok bool) {
	if len(tail) == 0 || last.ContextTokens <= 0 || tail[len(tail)-1].StreamID != last.StreamID {
		return 0, false
	}
	i := len(tail) - 1
	for ; i >= 0 && tail[i].StreamID == last.StreamID; i-- {
		if tail[i].Kind == store.KindSummary {
			return 0, false
		}
	}
	if i < 0 && more {
		return 0, false // the turn's rows may go on before the tail
	}
	return last.ContextTokens, true
}

// ContextUsed returns how many tokens the next request of a session starts with, given
// its rows from position base on (store.MessagesForTurn; base 0 with every row): the
// provider's count after the last turn when it is the latest thing in the transcript
// (measured true), else an estimate.
func (r *Runner) ContextUsed(ctx context.Context, rows []store.Message, base int, cfg Config) (int64, bool) {
	return r.contextUsed(ctx, rows, base, cfg)
}
