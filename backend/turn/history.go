package turn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// The history a turn sends: the saved rows turned into chat.start's conversation (after
// the last summary, files as content parts, images staged where the runtime runs or
// left out when the model takes none) and cut to fit one protocol line.

// maxParamsBytes bounds chat.start's params: the protocol's line limit less room for
// the envelope.
const maxParamsBytes = protocol.MaxLineBytes - 64<<10

// maxHistoryContent caps one history row's content when the history must shrink.
const maxHistoryContent = 256 << 10

// fitLine makes chat.start's params fit one protocol line: history rows longer than
// maxHistoryContent are cut first (a note says how much), then the oldest rows go,
// keeping the history starting at a user row (no tool result without its call). It
// returns how many rows it dropped and how many it cut.
func fitLine(p *protocol.ChatStartParams, limit int) (dropped, capped int) {
	size := func() int {
		b, err := json.Marshal(p)
		if err != nil {
			return 0
		}
		return len(b)
	}
	if size() <= limit {
		return 0, 0
	}
	for i := range p.ConversationHistory {
		m := &p.ConversationHistory[i]
		if len(m.Content) > maxHistoryContent {
			cut := maxHistoryContent
			for cut > 0 && !utf8.RuneStart(m.Content[cut]) {
				cut--
			}
			m.Content = m.Content[:cut] + fmt.Sprintf("\n[... %d more bytes left out: the conversation was too large to send whole ...]", len(m.Content)-cut)
			capped++
		}
	}
	for size() > limit && len(p.ConversationHistory) > 0 {
		n := 1
		for n < len(p.ConversationHistory) && p.ConversationHistory[n].Role != "user" {
			n++
		}
		p.ConversationHistory = p.ConversationHistory[n:]
		dropped += n
	}
	return dropped, capped
}

func historyNote(dropped, capped int) string {
	var parts []string
	if dropped > 0 {
		parts = append(parts, fmt.Sprintf("the %d oldest messages were left out", dropped))
	}
	if capped > 0 {
		parts = append(parts, fmt.Sprintf("%d very long messages were cut", capped))
	}
	return "The conversation is too large to send whole: " + strings.Join(parts, " and ") + "."
}

// userParts are the content parts of the message being sent (nil without files).
// Images are refused when the runtime or the model takes none.
func (r *Runner) userParts(user store.Message, cfg Config) ([]protocol.ContentPart, error) {
	if len(user.Attachments) == 0 || r.Parts == nil {
		return nil, nil
	}
	for _, a := range user.Attachments {
		if a.Kind != store.AttachmentImage {
			continue
		}
		if !cfg.Images {
			return nil, &ImagesRefusedError{Model: cfg.Model, Runtime: true}
		}
		if cfg.Vision == VisionNo {
			return nil, &ImagesRefusedError{Model: cfg.Model}
		}
	}
	parts, err := r.Parts(user)
	if err != nil || cfg.StageFile == nil {
		return parts, err
	}
	return stageImages(parts, cfg.StageFile)
}

// toHistory turns saved rows into the OpenAI-style history sent to the sidecar; marker
// rows (cancelled, error, interrupted, summary) are not part of the conversation.
func toHistory(rows []store.Message) []protocol.ChatMessage {
	out := make([]protocol.ChatMessage, 0, len(rows))
	for _, m := range rows {
		if m.Kind != "" {
			continue
		}
		if m.Role == "assistant" && m.Content == "" && len(m.ToolCalls) == 0 {
			continue
		}
		out = append(out, protocol.ChatMessage{Role: m.Role, Content: m.Content, ToolCalls: m.ToolCalls,
			ToolCallID: m.ToolCallID, Name: m.Name})
	}
	return out
}

// history is what the turn sends of the saved rows: after the last summary row only
// the rows it does not cover (its text comes back as the summary), user rows with
// files as content parts (images left out, a note in their place, when the runtime or
// the model takes none). rows[0] is at position base of the transcript.
func (r *Runner) history(rows []store.Message, base int, cfg Config) ([]protocol.ChatMessage, string, error) {
	from, summary := summaryStart(rows, base)
	kept := rows[from:]
	out := toHistory(kept)
	if r.Parts == nil {
		return out, summary, nil
	}
	j := 0
	for _, m := range kept {
		if m.Kind != "" || (m.Role == "assistant" && m.Content == "" && len(m.ToolCalls) == 0) {
			continue
		}
		if len(m.Attachments) > 0 {
			parts, err := r.Parts(m)
			if err != nil {
				return nil, "", err
			}
			if !cfg.Images || cfg.Vision == VisionNo {
				parts = withoutImages(parts)
			} else if cfg.StageFile != nil {
				if parts, err = stageImages(parts, cfg.StageFile); err != nil {
					return nil, "", err
				}
			}
			out[j].Parts = parts
			out[j].Content = protocol.PartsText(parts)
		}
		j++
	}
	return out, summary, nil
}

// stageImages returns parts with each image file's path replaced by the path stage
// gave it where the runtime runs. Errors: stage's, naming the image.
func stageImages(parts []protocol.ContentPart, stage func(path, sha256 string) (string, error)) ([]protocol.ContentPart, error) {
	out := slices.Clone(parts)
	for i, p := range out {
		if p.Type != protocol.PartImageFile || p.ImageFile == nil {
			continue
		}
		f := *p.ImageFile
		path, err := stage(f.Path, f.SHA256)
		if err != nil {
			return nil, fmt.Errorf("could not copy the image %s to where the agent runs: %w", f.Name, err)
		}
		f.Path = path
		out[i].ImageFile = &f
	}
	return out, nil
}

// withoutImages replaces image parts with a text note naming the image.
func withoutImages(parts []protocol.ContentPart) []protocol.ContentPart {
	out := make([]protocol.ContentPart, 0, len(parts))
	for _, p := range parts {
		switch p.Type {
		case protocol.PartImageFile:
			out = append(out, protocol.TextPart("[image "+p.ImageFile.Name+" left out: the model takes no images]"))
		case protocol.PartImageURL:
			out = append(out, protocol.TextPart("[an image left out: the model takes no images]"))
		default:
			out = append(out, p)
		}
	}
	return out
}

// hasUserRow reports whether rows hold a user message.
func hasUserRow(rows []store.Message) bool {
	for _, m := range rows {
		if m.Role == "user" {
			return true
		}
	}
	return false
}
