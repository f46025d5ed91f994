package hermes

import (
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"talaria/sidecar/protocol"
	"talaria/sidecar/server"
)

// The chat features of issue 12 that Hermes's gateway has a counterpart for (both
// dialects; checked against 0.19.0's tui_gateway/server.py and the 0.22 line's
// contracts/prompt_voice.py, sessions.py, config_free_tier_control.py):
//
//   - images: image.attach_bytes {session_id, content_base64, filename} queues an image
//     for the next prompt.submit (Hermes keeps a copy under HERMES_HOME/images); the
//     bytes are sent rather than the path, so a gateway in another file system (a
//     chroot) gets them too. Text attachments need nothing: they are in the prompt's
//     text.
//   - reasoning effort: config.set {key: "reasoning", value, session_id} (session scope).
//   - "Summarise and continue": session.compress {session_id} on the idle session.

// attachImages queues the image parts of the message for the prompt. Errors: the
// file cannot be read (invalid_params naming it), or Hermes refused it.
func (r *Runtime) attachImages(ctx context.Context, gw *gateway, sid string, parts []protocol.ContentPart) error {
	for _, p := range parts {
		if p.Type != protocol.PartImageFile || p.ImageFile == nil {
			continue
		}
		name := p.ImageFile.Name
		if name == "" {
			name = filepath.Base(p.ImageFile.Path)
		}
		data, err := protocol.ReadImageFile(p.ImageFile)
		if err != nil {
			return invalid(fmt.Sprintf("The attached image %q could not be sent: %v. Remove it and attach it again.", name, err))
		}
		if err := gw.call(ctx, "image.attach_bytes", map[string]any{"session_id": sid,
			"content_base64": base64.StdEncoding.EncodeToString(data), "filename": name}, nil); err != nil {
			return gatewayError("the image "+name, err)
		}
	}
	return nil
}

// setReasoning applies the chat's reasoning effort to its Hermes session when it
// changed ("" keeps Hermes's own setting); atCreate: session.create just took it.
func (r *Runtime) setReasoning(ctx context.Context, gw *gateway, s *hsession, sid, effort string, atCreate bool, log interface {
	Warn(msg string, args ...any)
}) {
	s.mu.Lock()
	same := s.reasoning == effort
	s.reasoning = effort
	s.mu.Unlock()
	if same || effort == "" || atCreate {
		return
	}
	if err := gw.call(ctx, "config.set", map[string]any{"key": "reasoning", "value": effort, "session_id": sid}, nil); err != nil {
		log.Warn("setting Hermes's reasoning effort failed", "err", err)
	}
}

// compactBusyWait is how long chat.compact waits for a Hermes session busy with a
// turn's after-work.
const compactBusyWait = 15 * time.Second

// chatCompact runs chat.compact: session.compress on the chat's idle Hermes session.
func (r *Runtime) chatCompact(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.CompactParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	if p.SessionID == "" {
		return nil, invalid("chat.compact needs session_id")
	}
	gw, d, gen, err := r.current(ctx)
	if err != nil {
		return nil, err
	}
	s := r.session(p.SessionID)
	sid, _, err := s.live(ctx, gw, d, gen, p.AgentSessionID, "", "", "", nil)
	if err != nil {
		return nil, err
	}
	var res compressReply
	// Right after a reply Hermes may still be busy with the turn's after-work (its
	// title, memory): session.compress is refused as busy (4009) for a moment.
	deadline := time.Now().Add(compactBusyWait)
	for {
		err := gw.call(ctx, "session.compress", map[string]any{"session_id": sid}, &res)
		if err == nil {
			break
		}
		var re *RPCError
		if !asRPC(err, &re) || re.Code != 4009 || time.Now().After(deadline) {
			return nil, gatewayError("compressing the conversation", err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	out := protocol.CompactResult{OK: res.Status == "compressed", Message: res.Message}
	if out.Message == "" {
		switch res.Status {
		case "compressed":
			out.Message = fmt.Sprintf("Hermes compressed %d messages into %d (about %d tokens, from %d).",
				res.BeforeMessages, res.AfterMessages, res.AfterTokens, res.BeforeTokens)
		default:
			out.Message = "Hermes did not compress the conversation (" + res.Status + ")."
		}
	}
	return out, nil
}

// imageOnlyText is the prompt of a message with images and no text, in the words
// Hermes's own image.attach suggests.
func imageOnlyText(parts []protocol.ContentPart) string {
	var out []string
	for _, p := range parts {
		if p.Type == protocol.PartImageFile && p.ImageFile != nil {
			name := p.ImageFile.Name
			if name == "" {
				name = filepath.Base(p.ImageFile.Path)
			}
			out = append(out, "[User attached image: "+name+"]")
		}
	}
	return strings.Join(out, "\n")
}
