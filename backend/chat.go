package backend

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"talaria/backend/attachments"
	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// The chat a desktop user expects (issue 12): sending with files, retrying an answer
// (with the same or another model), editing a message and sending it again (the old
// branch kept as a fork), "Summarise and continue", a regenerated title, each turn's
// and the chat's figures (tokens, cost, context) and the chat's own settings.

// Send sends text with the files staged in the chat's composer whose ids are listed
// (in that order) as the next user message of session id. Errors: those of
// turn.Runner.Start; store.ErrInvalid when a listed file is not staged in this chat.
func (area *TurnsArea) Send(ctx context.Context, id, text string, attachmentIDs []string) (turn.Started, error) {
	s := area.s
	in := turn.Input{Text: text}
	if len(attachmentIDs) > 0 {
		staged, err := s.Store.StagedAttachments(ctx, id)
		if err != nil {
			return turn.Started{}, err
		}
		for _, aid := range attachmentIDs {
			i := slices.IndexFunc(staged, func(a store.Attachment) bool { return a.ID == aid })
			if i < 0 {
				return turn.Started{}, fmt.Errorf("a file of this message was removed or already sent: %w", store.ErrInvalid)
			}
			in.Attachments = append(in.Attachments, staged[i])
		}
		if len(in.Attachments) > attachments.MaxAttachmentsPerMessage {
			return turn.Started{}, &attachments.AttachmentError{Problem: fmt.Sprintf("a message takes at most %d files", attachments.MaxAttachmentsPerMessage)}
		}
	}
	return s.Runner.Start(ctx, id, in)
}

// Branched is the answer of Retry and EditAndResend: the new turn, and the fork that
// keeps the replaced branch ("" when nothing worth keeping was replaced).
type Branched struct {
	turn.Started
	ForkID string `json:"fork_id"`
}

// keepBranch copies the whole session into a fork titled "<title> (suffix)" before a
// retry or an edit replaces the rows from position from; no fork when those rows hold
// nothing but failure markers.
func (s *Service) keepBranch(ctx context.Context, sess store.Session, rows []store.Message, from int, suffix string) (string, error) {
	worth := false
	for _, m := range rows[from:] {
		if m.Kind == "" && (m.Content != "" || len(m.ToolCalls) > 0 || len(m.Attachments) > 0) {
			worth = true
			break
		}
	}
	if !worth {
		return "", nil
	}
	title := ""
	if sess.Title != "" {
		title = sess.Title + " (" + suffix + ")"
	}
	fork, err := s.Store.ForkSession(ctx, store.ForkRequest{SessionID: sess.ID, Through: -1, Title: title})
	if err != nil {
		return "", err
	}
	return fork.ID, nil
}

// dropFork deletes a fork made for a retry or an edit that then failed to start.
func (s *Service) dropFork(ctx context.Context, id string) {
	if id == "" {
		return
	}
	if err := s.Store.DeleteSession(ctx, id); err != nil {
		s.Log.Warn("removing the fork of a failed retry", "fork", id, "err", err)
	}
}

// Retry answers the chat's last user message again: the rows after it are replaced by
// a new turn, answered by model ("" the chat's model; another model answers this turn
// only). The replaced answer is kept in a fork titled "<title> (earlier answer)".
// Errors: store.ErrInvalid when the chat has no user message; those of Start.
func (area *TurnsArea) Retry(ctx context.Context, id, model string) (Branched, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return Branched{}, err
	}
	rows, err := s.Store.Messages(ctx, id)
	if err != nil {
		return Branched{}, err
	}
	u := -1
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Role == "user" && rows[i].Kind == "" {
			u = i
			break
		}
	}
	if u < 0 {
		return Branched{}, fmt.Errorf("there is no message to answer again: %w", store.ErrInvalid)
	}
	return s.resend(ctx, sess, rows, u, rows[u].Content, strings.TrimSpace(model), "earlier answer")
}

// EditAndResend replaces the user message messageID of session id with text and sends
// it again: the rows from that message on are replaced by the new turn (its files are
// sent again), if the chat is still at revision (the window's view). The replaced
// branch is kept in a fork titled "<title> (before edit)". Errors: store.ErrNotFound
// when the message is not a user message of the chat; *store.ConflictError when the
// chat moved on; those of Start.
func (area *TurnsArea) EditAndResend(ctx context.Context, id string, messageID int64, text string, revision int64) (Branched, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return Branched{}, err
	}
	if revision != 0 && sess.Revision != revision {
		return Branched{}, &store.ConflictError{SessionID: id, Have: sess.Revision, Want: revision}
	}
	rows, err := s.Store.Messages(ctx, id)
	if err != nil {
		return Branched{}, err
	}
	i := slices.IndexFunc(rows, func(m store.Message) bool { return m.ID == messageID })
	if i < 0 || rows[i].Role != "user" || rows[i].Kind != "" {
		return Branched{}, fmt.Errorf("message %d is not a message of yours in this chat: %w", messageID, store.ErrNotFound)
	}
	return s.resend(ctx, sess, rows, i, text, "", "before edit")
}

// resend starts a turn that replaces rows[from:] with a user message of text (and the
// files of rows[from] when it is a user row), keeping the old branch in a fork.
func (s *Service) resend(ctx context.Context, sess store.Session, rows []store.Message, from int, text, model, suffix string) (Branched, error) {
	if sess.ActiveStreamID != "" {
		return Branched{}, &store.BusyError{SessionID: sess.ID, StreamID: sess.ActiveStreamID}
	}
	var files []store.Attachment
	for _, a := range rows[from].Attachments {
		a.ID, a.SessionID, a.MessageID = "", "", 0 // sent again: new rows, same bytes
		files = append(files, a)
	}
	forkID, err := s.keepBranch(ctx, sess, rows, from, suffix)
	if err != nil {
		return Branched{}, err
	}
	st, err := s.Runner.Start(ctx, sess.ID, turn.Input{Text: text, Attachments: files, Model: model,
		Replace: &turn.Replace{From: from, BaseRevision: sess.Revision}})
	// The chat's revision also moves when only its name, pin or model changed (the first
	// turn's title lands after its stream ended, while the user may already be retrying
	// or editing): that is no conflict with replacing its rows. Admit the turn on the new
	// revision when the rows are still those read, a few times.
	for attempt := 0; errors.Is(err, store.ErrConflict) && attempt < 3; attempt++ {
		now, same := s.sameRows(ctx, sess.ID, rows)
		if !same {
			break
		}
		st, err = s.Runner.Start(ctx, sess.ID, turn.Input{Text: text, Attachments: files, Model: model,
			Replace: &turn.Replace{From: from, BaseRevision: now}})
	}
	if err != nil {
		s.dropFork(ctx, forkID)
		return Branched{}, err
	}
	if forkID != "" {
		s.core.SessionsChanged()
	}
	s.Attachments.Sweep(ctx)
	return Branched{Started: st, ForkID: forkID}, nil
}

// sameRows reports whether session id still has exactly rows (same ids and contents),
// with its current revision.
func (s *Service) sameRows(ctx context.Context, id string, rows []store.Message) (int64, bool) {
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil || sess.ActiveStreamID != "" {
		return 0, false
	}
	now, err := s.Store.Messages(ctx, id)
	if err != nil || len(now) != len(rows) {
		return 0, false
	}
	for i := range now {
		if now[i].ID != rows[i].ID || now[i].Content != rows[i].Content || now[i].Kind != rows[i].Kind {
			return 0, false
		}
	}
	return sess.Revision, true
}

// CompactResult is the answer of Compact.
type CompactResult struct {
	// Summary is the summary row the built-in runtime's chat got (nil for a runtime
	// that compacts itself).
	Summary *store.Message `json:"summary"`
	// Message is what a runtime that compacts itself said.
	Message string `json:"message"`
	// Retried is the turn that answered the last message again (Compact with retry,
	// after a turn that failed), nil when none was started.
	Retried *turn.Started `json:"retried"`
}

// ErrCompactUnsupported is returned by Compact for a runtime that neither lets
// Talaria summarise (it brings its own model) nor compacts on request.
var ErrCompactUnsupported = errors.New("this chat's agent cannot be asked to summarise its context")

// Compact summarises the chat's older turns now ("Summarise and continue"): on the
// built-in runtime through aux.complete (turn.Runner.Compact), on a runtime that
// serves chat.compact by asking it. With retry, a last turn that failed (for example
// with "context too long") is then answered again. Errors: ErrCompactUnsupported;
// those of turn.Runner.Compact and Retry.
func (area *TurnsArea) Compact(ctx context.Context, id string, retry bool) (CompactResult, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return CompactResult{}, err
	}
	rtID := core.CanonicalRuntime(sess.Runtime)
	sup, spec, err := s.core.SupervisorFor(ctx, rtID)
	if err != nil {
		return CompactResult{}, err
	}
	var out CompactResult
	if spec.Kind == protocol.RuntimeBuiltin {
		row, err := s.Runner.Compact(ctx, id)
		if err != nil {
			return CompactResult{}, err
		}
		out.Summary = &row
	} else {
		if !core.Features(spec.Kind, sup).Compaction {
			return CompactResult{}, ErrCompactUnsupported
		}
		if sess.AgentSessionID == "" {
			return CompactResult{}, &turn.NothingToCompactError{}
		}
		var res protocol.CompactResult
		if err := sup.Call(ctx, protocol.MethodChatCompact, protocol.CompactParams{SessionID: id, AgentSessionID: sess.AgentSessionID}, nil, &res); err != nil {
			return CompactResult{}, err
		}
		out.Message = res.Message
	}
	s.core.SessionsChanged()
	if retry && lastTurnFailed(ctx, s.Store, id) {
		b, err := s.retryInPlace(ctx, id)
		if err != nil {
			return out, err
		}
		out.Retried = &b
	}
	return out, nil
}

// lastTurnFailed reports whether the chat's rows end with a failure marker after its
// last user message (a summary row between them does not count).
func lastTurnFailed(ctx context.Context, st *store.Store, id string) bool {
	rows, err := st.Messages(ctx, id)
	if err != nil {
		return false
	}
	for i := len(rows) - 1; i >= 0; i-- {
		switch {
		case rows[i].Kind == store.KindError || rows[i].Kind == store.KindInterrupted:
			return true
		case rows[i].Kind == store.KindSummary:
			continue
		default:
			return false
		}
	}
	return false
}

// retryInPlace answers the last user message again after a failure: the failed turn's
// rows after the message are replaced, with no fork (they hold only the failure), and
// the summary made just before is kept: it is moved in front of the message.
func (s *Service) retryInPlace(ctx context.Context, id string) (turn.Started, error) {
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return turn.Started{}, err
	}
	rows, err := s.Store.Messages(ctx, id)
	if err != nil {
		return turn.Started{}, err
	}
	u := -1
	for i := len(rows) - 1; i >= 0; i-- {
		if rows[i].Role == "user" && rows[i].Kind == "" {
			u = i
			break
		}
	}
	if u < 0 {
		return turn.Started{}, fmt.Errorf("there is no message to answer again: %w", store.ErrInvalid)
	}
	// A summary after the message (made by Compact) is moved before it: the retried
	// turn is sent with it.
	user := rows[u]
	var summary *store.Message
	for i := len(rows) - 1; i > u; i-- {
		if rows[i].Kind == store.KindSummary {
			m := rows[i]
			summary = &m
			break
		}
	}
	from, rev := u, sess.Revision
	if summary != nil {
		saved, err := s.Store.SpliceMessages(ctx, id, sess.Revision, u, []store.Message{{Role: summary.Role, Kind: store.KindSummary,
			Content: summary.Content, SummaryCovers: min(summary.SummaryCovers, u)}})
		if err != nil {
			return turn.Started{}, err
		}
		from, rev = u+1, saved.Session.Revision
	}
	var files []store.Attachment
	for _, a := range user.Attachments {
		a.ID, a.SessionID, a.MessageID = "", "", 0
		files = append(files, a)
	}
	st, err := s.Runner.Start(ctx, id, turn.Input{Text: user.Content, Attachments: files, Replace: &turn.Replace{From: from, BaseRevision: rev}})
	if err == nil {
		s.Attachments.Sweep(ctx)
	}
	return st, err
}

// RegenerateTitle asks the chat's model for a new title (see
// turn.Runner.RegenerateTitle).
func (area *TurnsArea) RegenerateTitle(ctx context.Context, id string) (string, error) {
	s := area.s
	return s.Runner.RegenerateTitle(ctx, id)
}

// ChatFigures are a chat's figures for the window: settled turns' (tokens, cost,
// model, context fill), the chat's cost, and its context meter.
type ChatFigures struct {
	// Turns are the figures of the turns asked for (ChatFigures' streams), oldest first.
	Turns []store.TurnFigures `json:"turns"`
	// Cost is the sum of the known turn costs (US dollars); CostKnown the number of
	// turns with a cost (from the provider or a price the user set), CostUnknown the
	// number without one (the cost shown is then a lower bound, and says so).
	Cost        float64      `json:"cost"`
	CostKnown   int          `json:"cost_known"`
	CostUnknown int          `json:"cost_unknown"`
	Context     ContextMeter `json:"context"`
}

// ContextMeter is how full the chat's model context is.
type ContextMeter struct {
	// UsedTokens is what the next request starts with (tokens): the provider's count
	// after the last turn (Estimated false) or Talaria's estimate of what would be sent.
	UsedTokens int64 `json:"used_tokens"`
	Estimated  bool  `json:"estimated"`
	// ContextLength is the model's context window (0: unknown), Source where it came
	// from ("provider", "setting" or ""), Note more about it.
	ContextLength int64  `json:"context_length"`
	Source        string `json:"source"`
	Note          string `json:"note"`
	// CompactAt is the fraction past which older turns are summarised (0: off, or the
	// runtime compacts itself).
	CompactAt float64 `json:"compact_at" ts:"number"` // a fraction, not a time (the ts tag says so to the contract)
	Model     string  `json:"model"`
	// Available is false for a runtime that keeps its own context (the meter is hidden).
	Available bool `json:"available"`
}

// ChatFigures returns session id's cost and context meter (over all its turns) and the
// figures of the turns of streams (nil: every turn). The window asks only for the turns
// of rows it shows that it has no figures for, so what it is sent does not grow with the
// chat (issue 16: a result a chat's length long, sent after every turn, was kept by the
// webview's script cache). Errors: store.ErrNotFound.
func (area *TurnsArea) ChatFigures(ctx context.Context, id string, streams []string) (ChatFigures, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return ChatFigures{}, err
	}
	turns, err := s.Store.SessionTurns(ctx, id)
	if err != nil {
		return ChatFigures{}, err
	}
	out := ChatFigures{Turns: turns}
	if streams != nil {
		want := make(map[string]bool, len(streams))
		for _, id := range streams {
			want[id] = true
		}
		out.Turns = make([]store.TurnFigures, 0, min(len(streams), len(turns)))
		for _, t := range turns {
			if want[t.StreamID] {
				out.Turns = append(out.Turns, t)
			}
		}
	}
	for _, t := range turns {
		if t.CostSource != store.CostUnknown {
			out.Cost += t.Usage.EstimatedCost
			out.CostKnown++
		} else if t.Usage.InputTokens+t.Usage.OutputTokens > 0 {
			out.CostUnknown++
		}
	}
	cfg, err := s.configFor(ctx, sess)
	if err != nil {
		return out, nil // no model configured: no meter
	}
	if cfg.OwnModel {
		return out, nil
	}
	// The provider's own count after the last turn needs only the last rows; an estimate
	// (no count, or a summary since) reads the rows from the latest summary on.
	var used int64
	measured := false
	if len(turns) > 0 {
		if page, err := s.Store.MessagesBefore(ctx, id, -1, 64); err == nil {
			used, measured = turn.MeasuredContext(page.Messages, page.Before, turns[len(turns)-1])
		}
	}
	if !measured {
		rows, base, err := s.Store.MessagesForTurn(ctx, id)
		if err != nil {
			return out, err
		}
		used, measured = s.Runner.ContextUsed(ctx, rows, base, cfg)
	}
	out.Context = ContextMeter{UsedTokens: used, Estimated: !measured, ContextLength: cfg.ContextLength,
		CompactAt: cfg.CompactAt, Model: cfg.Model, Available: true}
	if info, err := s.Settings().ModelInfo(ctx, cfg.Model); err == nil {
		out.Context.Source, out.Context.Note = info.ContextSource, info.ContextNote
	}
	return out, nil
}

// ChatSettings is what the chat settings popover shows and edits.
type ChatSettings struct {
	Options ChatOptions `json:"options"`
	// Model is the chat's own model ("" follows Settings' model); DefaultModel is
	// Settings' model.
	Model        string `json:"model"`
	DefaultModel string `json:"default_model"`
	// ModelInfo is what is known of the model the chat uses (built-in runtime only).
	ModelInfo *ModelInfo `json:"model_info"`
	// Features are what the chat's runtime does: the popover shows only those.
	Features core.RuntimeFeatures `json:"features"`
	Runtime  string               `json:"runtime"`
	// DefaultSystemPrompt is the custom instructions new chats start with (Settings).
	DefaultSystemPrompt string `json:"default_system_prompt"`
}

// GetChatSettings returns session id's settings for the popover. Errors:
// store.ErrNotFound.
func (area *SettingsArea) GetChatSettings(ctx context.Context, id string) (ChatSettings, error) {
	s := area.s
	sess, err := s.Store.GetSession(ctx, id)
	if err != nil {
		return ChatSettings{}, err
	}
	st, err := s.Settings().GetSettings(ctx)
	if err != nil {
		return ChatSettings{}, err
	}
	rtID := core.CanonicalRuntime(sess.Runtime)
	out := ChatSettings{Options: chatOptions(sess), Model: sess.Model, DefaultModel: st.Model, Runtime: rtID}
	out.DefaultSystemPrompt, _ = s.core.Setting(ctx, keyDefaultPrompt, "")
	kind := core.AgentKind(rtID)
	sup := s.core.StartedSupervisor(rtID)
	if sup != nil {
		out.Features = core.Features(kind, sup)
	} else {
		out.Features = core.Features(kind, nil)
	}
	if kind == protocol.RuntimeBuiltin {
		model := sess.Model
		if model == "" {
			model = st.Model
		}
		if info, err := s.Settings().ModelInfo(ctx, model); err == nil && model != "" {
			out.ModelInfo = &info
		}
	}
	return out, nil
}

// SetChatModel sets the model session id's later turns use ("" follows Settings'
// model). Errors: store.ErrNotFound; store.ErrInvalid for a name over 256 bytes.
func (area *SettingsArea) SetChatModel(ctx context.Context, id, model string) (store.Session, error) {
	s := area.s
	if err := s.Store.SetSessionModel(ctx, id, strings.TrimSpace(model)); err != nil {
		return store.Session{}, err
	}
	s.core.SessionsChanged()
	return s.Store.GetSession(ctx, id)
}

// SetDefaultSystemPrompt sets the custom instructions new chats start with ("" none).
// Errors: *ChatOptionsError over 64 KiB.
func (area *SettingsArea) SetDefaultSystemPrompt(ctx context.Context, prompt string) error {
	s := area.s
	if len(prompt) > maxSystemPrompt {
		return &ChatOptionsError{Field: "system_prompt", Message: fmt.Sprintf("the custom instructions are %d KiB; shorten them to at most %d KiB", len(prompt)>>10, maxSystemPrompt>>10)}
	}
	return s.Store.SetSetting(ctx, keyDefaultPrompt, prompt)
}

// ChatPreferences are the Settings of issue 12's chat features.
type ChatPreferences struct {
	// DefaultSystemPrompt is the custom instructions a new chat starts with ("" none).
	DefaultSystemPrompt string `json:"default_system_prompt"`
	// CompactAt is the percent of the context window past which older turns are
	// summarised (50 to 95), 0 for never.
	CompactAt int `json:"compact_at" ts:"number"` // a percent, not a time
	// TextLimitKB is how much of a text attachment the model gets, in KiB (1 to 1024).
	TextLimitKB int `json:"text_limit_kb"`
	// StreamIdleTimeoutS is how long the built-in runtime waits for a silent provider
	// before it gives the answer up, in seconds (5 to 3600; default 120).
	StreamIdleTimeoutS int `json:"stream_idle_timeout_s"`
}

// GetChatPreferences returns the chat preferences of Settings.
func (area *SettingsArea) GetChatPreferences(ctx context.Context) (ChatPreferences, error) {
	s := area.s
	prompt, err := s.core.Setting(ctx, keyDefaultPrompt, "")
	if err != nil {
		return ChatPreferences{}, err
	}
	return ChatPreferences{DefaultSystemPrompt: prompt, CompactAt: int(s.compactAt(ctx)*100 + 0.5),
		TextLimitKB: int(s.Attachments.TextLimit(ctx) >> 10), StreamIdleTimeoutS: s.streamIdleTimeout(ctx)}, nil
}

// SaveChatPreferences stores p. Errors: *SaveSettingsError naming the bad field.
func (area *SettingsArea) SaveChatPreferences(ctx context.Context, p ChatPreferences) (ChatPreferences, error) {
	s := area.s
	if p.CompactAt != 0 && (p.CompactAt < 50 || p.CompactAt > 95) {
		return ChatPreferences{}, &SaveSettingsError{Field: "compact_at", Message: "summarise older messages at 50 to 95 % of the context window, or never"}
	}
	if p.TextLimitKB < attachments.MinTextLimit>>10 || p.TextLimitKB > attachments.MaxTextLimit>>10 {
		return ChatPreferences{}, &SaveSettingsError{Field: "text_limit_kb", Message: "send 1 to 1024 KB of a text file"}
	}
	if p.StreamIdleTimeoutS == 0 {
		p.StreamIdleTimeoutS = protocol.DefaultStreamIdleTimeoutS // a window that does not know the field
	}
	if p.StreamIdleTimeoutS < minStreamIdle || p.StreamIdleTimeoutS > maxStreamIdle {
		return ChatPreferences{}, &SaveSettingsError{Field: "stream_idle_timeout_s", Message: fmt.Sprintf("wait %d to %d seconds for a silent provider", minStreamIdle, maxStreamIdle)}
	}
	if err := s.Settings().SetDefaultSystemPrompt(ctx, p.DefaultSystemPrompt); err != nil {
		return ChatPreferences{}, &SaveSettingsError{Field: "default_system_prompt", Message: err.Error()}
	}
	compact := "off"
	if p.CompactAt != 0 {
		compact = strconv.Itoa(p.CompactAt)
	}
	for k, v := range map[string]string{keyCompactAt: compact, attachments.KeyTextLimit: strconv.Itoa(p.TextLimitKB << 10),
		keyStreamIdle: strconv.Itoa(p.StreamIdleTimeoutS)} {
		if err := s.Store.SetSetting(ctx, k, v); err != nil {
			return ChatPreferences{}, err
		}
	}
	return s.Settings().GetChatPreferences(ctx)
}

// The stream idle timeout setting (seconds): how long a model call's stream may send
// nothing before the built-in runtime gives the answer up.
const (
	keyStreamIdle = "provider.stream_idle_timeout_s"
	minStreamIdle = 5
	maxStreamIdle = 3600
)

// streamIdleTimeout is the stream idle timeout setting in seconds (default
// protocol.DefaultStreamIdleTimeoutS, 120).
func (s *Service) streamIdleTimeout(ctx context.Context) int {
	v, _ := s.core.Setting(ctx, keyStreamIdle, "")
	n, err := strconv.Atoi(v)
	if err != nil || n < minStreamIdle || n > maxStreamIdle {
		return protocol.DefaultStreamIdleTimeoutS
	}
	return n
}

// QuickAskStatus is quick ask's state for Settings and the quick-ask view (app/quickask.go
// fills it): whether the window is in quick-ask mode, and its global shortcut.
type QuickAskStatus struct {
	Active bool `json:"active"`
	// Shortcut is the global shortcut set ("" when off); ShortcutActive whether it is
	// taken here; ShortcutError why not (Wayland, taken by another program ...).
	Shortcut       string `json:"shortcut"`
	ShortcutActive bool   `json:"shortcut_active"`
	ShortcutError  string `json:"shortcut_error"`
	// Command is what to bind in the desktop's own keyboard settings instead.
	Command string `json:"command"`
}
