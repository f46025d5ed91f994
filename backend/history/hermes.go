package history

import (
	"context"
	"fmt"
	"strings"

	"talaria/backend"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// HermesListLimit is how many sessions HermesSessions lists (the gateway's most recent
// first); "all of a profile" beyond it is reported, not silently cut.
const HermesListLimit = backend.HermesSessionsLimit

// canonicalHermes is the runtime id a Hermes chat stores ("" is the default profile).
func canonicalHermes(id string) string {
	if id == "" {
		return protocol.RuntimeHermes
	}
	return id
}

// HermesSource key of a Hermes session: runtime and profile are part of it, as the same
// id in two profiles is two sessions.
func hermesKey(runtimeID, agentSessionID string) string {
	return "hermes:" + runtimeID + ":" + agentSessionID
}

func (im *Importer) runHermes(ctx context.Context, r *run, req HermesRequest) {
	rt := canonicalHermes(req.RuntimeID)
	if im.hermes == nil {
		r.fail(fmt.Errorf("Hermes Agent is not set up in this Talaria: %w", store.ErrInvalid))
		return
	}
	if !strings.HasPrefix(rt, protocol.RuntimeHermes) {
		r.fail(fmt.Errorf("runtime %q is not a Hermes runtime: %w", rt, store.ErrInvalid))
		return
	}
	// What Hermes lists: titles and start times, and the ids of "all".
	list, err := im.hermes.HermesSessions(ctx, rt)
	if err != nil {
		r.fail(err)
		return
	}
	info := map[string]protocol.AgentSessionInfo{}
	for _, s := range list {
		info[s.AgentSessionID] = s.AgentSessionInfo
	}
	ids := req.SessionIDs
	if req.All {
		ids = ids[:0:0]
		for _, s := range list {
			ids = append(ids, s.AgentSessionID)
		}
	}
	ids = dedupe(ids)
	r.total(len(ids))
	if req.All && len(list) >= HermesListLimit {
		r.update(func(p *Progress) {
			addProblem(p, Problem{Item: rt, Outcome: "skipped", Message: fmt.Sprintf(
				"Hermes lists its %d most recent sessions only; older ones were not imported", HermesListLimit),
				Hint: "Import again after deleting or importing some of them in Hermes, or choose older ones by id."})
		})
	}
	for _, id := range ids {
		if ctx.Err() != nil {
			return
		}
		item := id
		if t := info[id].Title; t != "" {
			item = id + " (" + t + ")"
		}
		r.current(item)
		if err := im.importHermes(ctx, r, rt, id, info[id], item); err != nil {
			if cancelled(ctx, err) {
				return
			}
			r.failed(item, err)
		}
	}
}

// importHermes imports one Hermes session; a nil error means it was imported or
// skipped (and counted).
func (im *Importer) importHermes(ctx context.Context, r *run, rt, id string, info protocol.AgentSessionInfo, item string) error {
	key := hermesKey(rt, id)
	// Cheap checks first: nothing to ask Hermes for a session already here.
	done, err := im.store.ImportedSources(ctx, key)
	if err != nil {
		return err
	}
	if done[key] != "" {
		r.skipped(item, "already imported")
		return nil
	}
	bound, err := im.store.SessionsByAgentSession(ctx, rt)
	if err != nil {
		return err
	}
	if bound[id] != "" {
		r.skipped(item, "already a Talaria chat (continued or imported before)")
		return nil
	}
	hist, err := im.hermes.HermesHistory(ctx, rt, id)
	if err != nil {
		return err
	}
	chat, err := hermesChat(rt, id, info, hist)
	if err != nil {
		return err
	}
	chat.Source = key
	sess, fresh, err := im.store.ImportChat(ctx, chat)
	if err != nil {
		return err
	}
	if !fresh {
		r.skipped(item, "already a Talaria chat (continued or imported before)")
		return nil
	}
	r.imported(sess.ID)
	return nil
}

// hermesChat turns one Hermes transcript (agent.history) into a chat bound to the
// Hermes session (hist.AgentSessionID: the live tip when Hermes moved the session on
// after a compression), so its next turn resumes that session.
//
// Hermes's display transcript leaves out the assistant rows that held only tool calls,
// so each run of tool rows becomes one tool-call batch: on the assistant row just
// before it when there is one, else on an empty assistant row made for it. A call's id
// and arguments are Hermes's own when it gives them (dialect B), else the id is
// "hermes-<row>" and the arguments {} (dialect A keeps only a one-line context). The
// result row holds the tool's output when Hermes gives it, else that context. Rows
// without a time take the session's start. Errors: *store.ImportError for a row of an
// unknown role.
func hermesChat(rt, id string, info protocol.AgentSessionInfo, hist protocol.AgentHistoryResult) (store.ImportedChat, error) {
	title := firstNonEmpty(hist.Title, info.Title, "Hermes session "+id)
	chat := store.ImportedChat{Title: turn.ProvisionalTitle(title), CreatedAt: info.StartedAt, Runtime: rt,
		AgentSessionID: firstNonEmpty(hist.AgentSessionID, id)}
	var rows []store.Message
	batch := -1 // index in rows of the assistant row holding the current tool batch
	last := info.StartedAt
	for i, m := range hist.Messages {
		at := m.CreatedAt
		if at <= 0 {
			at = last
		}
		last = max(last, at)
		switch m.Role {
		case "user", "assistant", "system":
			batch = -1
			rows = append(rows, store.Message{Role: m.Role, Content: m.Content, Reasoning: m.Reasoning, CreatedAt: at})
		case "tool":
			if batch < 0 {
				if n := len(rows); n > 0 && rows[n-1].Role == "assistant" && len(rows[n-1].ToolCalls) == 0 {
					batch = n - 1
				} else {
					rows = append(rows, store.Message{Role: "assistant", CreatedAt: at})
					batch = len(rows) - 1
				}
			}
			callID := m.ToolCallID
			if callID == "" {
				callID = fmt.Sprintf("hermes-%d", i)
			}
			args := "{}"
			if len(m.Args) > 0 {
				args = string(m.Args)
			}
			rows[batch].ToolCalls = append(rows[batch].ToolCalls, protocol.ToolCall{ID: callID, Type: "function",
				Function: protocol.ToolFunction{Name: m.Name, Arguments: args}})
			result := m.Result
			if result == "" {
				result = m.Content
			}
			rows = append(rows, store.Message{Role: "tool", ToolCallID: callID, Name: m.Name, Content: result, CreatedAt: at})
		default:
			return store.ImportedChat{}, &store.ImportError{Field: fmt.Sprintf("messages[%d].role", i),
				Problem: fmt.Sprintf("unknown role %q in Hermes's transcript; nothing of this session was imported", m.Role)}
		}
	}
	chat.Messages = rows
	if chat.CreatedAt <= 0 && len(rows) > 0 {
		chat.CreatedAt = rows[0].CreatedAt
	}
	chat.UpdatedAt = max(last, chat.CreatedAt)
	return chat, nil
}

func firstNonEmpty(v ...string) string {
	for _, s := range v {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

func dedupe(ids []string) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, id := range ids {
		id = strings.TrimSpace(id)
		if id != "" && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
