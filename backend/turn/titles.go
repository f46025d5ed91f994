package turn

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"talaria/backend/bus"
	"talaria/sidecar/protocol"
)

// TitleTimeout bounds the model call that names a session: 8 seconds.
const TitleTimeout = 8 * time.Second

// titlePrompt asks the model for a short session title.
const titlePrompt = "Write a title of at most six words for this conversation. Answer with the title only: no quotes, no final punctuation."

// maybeTitle names the session after its first exchange with aux.complete, unless the
// user renamed it. When the model call fails the title is made locally from the first
// exchange. It runs after the turn's stream_end (settle starts it), so a changed title
// is announced with sessions_changed.
func (r *Runner) maybeTitle(rn *run, cfg Config, userText, answer string) {
	ctx, cancel := context.WithTimeout(context.Background(), TitleTimeout)
	defer cancel()
	sess, err := r.store.GetSession(ctx, rn.sessionID)
	if err != nil || sess.TitleManual || rn.agentTitled {
		return
	}
	if cfg.OwnModel {
		// A runtime that brings its own model (Hermes, ACP agents) names sessions
		// itself, if at all: with no endpoint of ours the title is made locally.
		r.setAutoTitle(ctx, rn, sess.Title, FallbackTitle(userText, answer))
		return
	}
	var res protocol.AuxCompleteResult
	err = r.caller.Call(ctx, protocol.MethodAuxComplete, protocol.AuxCompleteParams{
		Task: "title_generation", MaxTokens: 24, Model: cfg.Model, Provider: cfg.Provider,
		Messages: []protocol.ChatMessage{
			{Role: "system", Content: titlePrompt},
			{Role: "user", Content: clip(userText, 2000)},
			{Role: "assistant", Content: clip(answer, 2000)},
			{Role: "user", Content: "Title for the conversation above:"},
		},
	}, nil, &res)
	title := CleanTitle(res.Text)
	if err != nil || title == "" {
		if err != nil {
			r.log.Info("title generation failed; using a local title", "session", rn.sessionID, "err", err)
		}
		title = FallbackTitle(userText, answer)
	}
	r.setAutoTitle(ctx, rn, sess.Title, title)
}

// setAutoTitle saves an automatic title (never over one the user set) and, when it
// changed, emits a title frame while the turn's stream is open, or publishes
// sessions_changed once it has ended (a title made after stream_end).
func (r *Runner) setAutoTitle(ctx context.Context, rn *run, current, title string) {
	if title == "" || title == current {
		return
	}
	if err := r.store.SetTitle(ctx, rn.sessionID, title, false); err != nil {
		return
	}
	if s2, err := r.store.GetSession(ctx, rn.sessionID); err == nil && s2.Title == title {
		rn.emitMu.Lock()
		ended := rn.ended
		rn.emitMu.Unlock()
		if ended {
			r.bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
			return
		}
		r.emit(rn, protocol.EvTitle, TitleData{Title: title})
	}
}

// CleanTitle trims a model's title: first line, no surrounding quotes, markdown or
// final punctuation, at most 60 characters.
func CleanTitle(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(strings.TrimPrefix(s, "Title:"))
	s = strings.Trim(s, "\"'`*#_ “”‘’")
	s = strings.TrimRight(s, ".!;:, ")
	if s == "" {
		return ""
	}
	return ProvisionalTitle(s)
}

// FallbackTitle makes a title from the first exchange without a model: the first line
// of the user's message, or of the answer when the message has no words.
func FallbackTitle(userText, answer string) string {
	if t := ProvisionalTitle(userText); t != "" {
		return t
	}
	return ProvisionalTitle(answer)
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// TitlesUnsupportedError is returned by RegenerateTitle for a chat whose runtime
// brings its own model: Talaria has no model of its own to ask.
type TitlesUnsupportedError struct{}

func (*TitlesUnsupportedError) Error() string {
	return "this chat's agent names chats itself: Talaria cannot make a title for it"
}

// RegenerateTitle asks the chat's model for a new title now (the session menu's
// "Regenerate title"), from the first message and the latest exchange, saves it as an
// automatic title (a title the user set is replaced: they asked) and returns it.
// Errors: *TitlesUnsupportedError; store.ErrNotFound; ErrEmptyMessage when the chat has no message yet; the ConfigFunc's and aux.complete's
// errors, or an error when the model's answer holds no title.
func (r *Runner) RegenerateTitle(ctx context.Context, sessionID string) (string, error) {
	sess, err := r.store.GetSession(ctx, sessionID)
	if err != nil {
		return "", err
	}
	cfg, err := r.config(ctx, sess)
	if err != nil {
		return "", err
	}
	if cfg.OwnModel {
		return "", &TitlesUnsupportedError{}
	}
	rows, err := r.store.Messages(ctx, sessionID)
	if err != nil {
		return "", err
	}
	var texts []protocol.ChatMessage
	firstUser, lastUser, lastAnswer := -1, -1, -1
	for i, m := range rows {
		if m.Kind != "" || m.Content == "" {
			continue
		}
		switch m.Role {
		case "user":
			if firstUser < 0 {
				firstUser = i
			}
			lastUser = i
		case "assistant":
			lastAnswer = i
		}
	}
	if firstUser < 0 {
		return "", ErrEmptyMessage
	}
	seen := map[int]bool{}
	for _, i := range []int{firstUser, lastUser, lastAnswer} {
		if i >= 0 && !seen[i] {
			seen[i] = true
			texts = append(texts, protocol.ChatMessage{Role: rows[i].Role, Content: clip(rows[i].Content, 2000)})
		}
	}
	msgs := append([]protocol.ChatMessage{{Role: "system", Content: titlePrompt}}, texts...)
	msgs = append(msgs, protocol.ChatMessage{Role: "user", Content: "Title for the conversation above:"})
	cctx, cancel := context.WithTimeout(ctx, 4*TitleTimeout)
	defer cancel()
	var res protocol.AuxCompleteResult
	if err := r.caller.Call(cctx, protocol.MethodAuxComplete, protocol.AuxCompleteParams{
		Task: protocol.AuxTitle, MaxTokens: 24, Model: cfg.Model, Provider: cfg.Provider, Messages: msgs}, nil, &res); err != nil {
		return "", err
	}
	title := CleanTitle(res.Text)
	if title == "" {
		return "", errors.New("the model answered without a title: try again")
	}
	if err := r.store.ResetTitle(ctx, sessionID, title); err != nil {
		return "", err
	}
	r.bus.Publish(bus.Event{Name: bus.EventSessionsChanged})
	return title, nil
}

// applyAgentTitle saves a title the agent gave the session (agent_title frame), never
// over one the user set, and emits a title frame when it changed.
func (r *Runner) applyAgentTitle(rn *run, title string) {
	title = CleanTitle(title)
	if title == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), TitleTimeout)
	defer cancel()
	rn.agentTitled = true
	sess, err := r.store.GetSession(ctx, rn.sessionID)
	if err != nil || sess.TitleManual {
		return
	}
	r.setAutoTitle(ctx, rn, sess.Title, title)
}

// ProvisionalTitle makes a session title from a first message: its first line, cut at
// a word boundary to at most 60 characters.
func ProvisionalTitle(text string) string {
	t := strings.TrimSpace(text)
	if i := strings.IndexByte(t, '\n'); i >= 0 {
		t = strings.TrimSpace(t[:i])
	}
	t = strings.Join(strings.Fields(t), " ")
	const max = 60
	if utf8.RuneCountInString(t) <= max {
		return t
	}
	r := []rune(t)[:max]
	s := string(r)
	if i := strings.LastIndexByte(s, ' '); i > max/2 {
		s = s[:i]
	}
	return strings.TrimRight(s, " .,;:") + "…"
}
