package turn

import (
	"context"
	"strings"
	"time"

	"talaria/sidecar/protocol"
)

// TitleTimeout bounds the model call that names a session: 8 seconds.
const TitleTimeout = 8 * time.Second

// titlePrompt asks the model for a short session title.
const titlePrompt = "Write a title of at most six words for this conversation. Answer with the title only: no quotes, no final punctuation."

// maybeTitle names the session after its first exchange with aux.complete, unless the
// user renamed it. When the model call fails the title is made locally from the first
// exchange. It emits a title frame when the title changed.
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

// setAutoTitle saves an automatic title (never over one the user set) and emits a
// title frame when it changed.
func (r *Runner) setAutoTitle(ctx context.Context, rn *run, current, title string) {
	if title == "" || title == current {
		return
	}
	if err := r.store.SetTitle(ctx, rn.sessionID, title, false); err != nil {
		return
	}
	if s2, err := r.store.GetSession(ctx, rn.sessionID); err == nil && s2.Title == title {
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
