package hermes

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"talaria/sidecar/protocol"
)

// historyRows reads session.resume's `messages` (Hermes's display transcript,
// tui_gateway `_history_to_messages`) into agent.history rows. Both dialects are read
// by the same rules; what B adds is taken when present:
//
//   - user, assistant, system rows: {role, text, reasoning?, timestamp? (B, Unix
//     seconds), display_kind?, ...}; `text` must be a string.
//   - tool rows: {role: tool, name, context, tool_call_id? (B), args? (B, an object),
//     content? (B, edit tools only: the tool's output), timestamp? (B)}; `name` must
//     be a string.
//
// Members Talaria does not use are ignored; anything else (messages not a list, a row
// not an object, an unknown role, a member of the wrong type) is an unknown shape and
// refused with a *protocol.Error (agent_incompatible) naming the row and the Hermes
// version, never guessed. Sources: 0.19.0 tui_gateway/server.py:5447, 0.22.2
// tui_gateway/session_history.py:285.
func historyRows(raw json.RawMessage, hermesVersion string) ([]protocol.AgentHistoryMessage, error) {
	unknown := func(where, format string, args ...any) error {
		e := protocol.NewError(0, protocol.CondAgentIncompatible, fmt.Sprintf(
			"Hermes %s sent a session transcript of a shape Talaria does not know (%s: %s); nothing was read from it",
			versionOr(hermesVersion), where, fmt.Sprintf(format, args...)))
		e.Data.Hint = "Update Talaria, or use a Hermes version it was checked with (docs/hermes.md lists them)."
		return e
	}
	var items []json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &items) != nil || items == nil {
		return nil, unknown("messages", "not a list")
	}
	out := make([]protocol.AgentHistoryMessage, 0, len(items))
	for i, item := range items {
		where := fmt.Sprintf("messages[%d]", i)
		var m map[string]json.RawMessage
		if json.Unmarshal(item, &m) != nil || m == nil {
			return nil, unknown(where, "not an object")
		}
		var row protocol.AgentHistoryMessage
		if err := decodeString(m, "role", &row.Role, true); err != nil {
			return nil, unknown(where+".role", "%v", err)
		}
		ts, err := decodeSeconds(m, "timestamp")
		if err != nil {
			return nil, unknown(where+".timestamp", "%v", err)
		}
		row.CreatedAt = ts
		switch row.Role {
		case "user", "assistant", "system":
			if err := decodeString(m, "text", &row.Content, true); err != nil {
				return nil, unknown(where+".text", "%v", err)
			}
			// reasoning (else reasoning_content) when it is a string; the structured
			// provider-specific members beside it (reasoning_details ...) are display
			// details Talaria does not show, whatever their shape.
			if decodeString(m, "reasoning", &row.Reasoning, false) != nil || row.Reasoning == "" {
				row.Reasoning = ""
				if decodeString(m, "reasoning_content", &row.Reasoning, false) != nil {
					row.Reasoning = ""
				}
			}
		case "tool":
			if err := decodeString(m, "name", &row.Name, true); err != nil {
				return nil, unknown(where+".name", "%v", err)
			}
			for key, dst := range map[string]*string{"context": &row.Content, "tool_call_id": &row.ToolCallID} {
				if err := decodeString(m, key, dst, false); err != nil {
					return nil, unknown(where+"."+key, "%v", err)
				}
			}
			if a, ok := m["args"]; ok && !isNull(a) {
				var obj map[string]json.RawMessage
				if json.Unmarshal(a, &obj) != nil || obj == nil {
					return nil, unknown(where+".args", "not an object")
				}
				row.Args = append(json.RawMessage(nil), a...)
			}
			if c, ok := m["content"]; ok && !isNull(c) {
				var s string
				if json.Unmarshal(c, &s) == nil {
					row.Result = s
				} else {
					var buf bytes.Buffer
					if json.Compact(&buf, c) != nil {
						return nil, unknown(where+".content", "not JSON")
					}
					row.Result = buf.String() // structured output, kept as its JSON text
				}
			}
		default:
			return nil, unknown(where+".role", "unknown role %q", row.Role)
		}
		out = append(out, row)
	}
	return out, nil
}

// decodeString reads m[key] as a string into dst; absent or null is "" unless required.
func decodeString(m map[string]json.RawMessage, key string, dst *string, required bool) error {
	v, ok := m[key]
	if !ok || isNull(v) {
		if required {
			return fmt.Errorf("missing")
		}
		return nil
	}
	if json.Unmarshal(v, dst) != nil {
		return fmt.Errorf("not a string (%s)", clip(string(v), 40))
	}
	return nil
}

// decodeSeconds reads m[key], Unix seconds (a number), as epoch milliseconds; absent or
// null is 0.
func decodeSeconds(m map[string]json.RawMessage, key string) (int64, error) {
	v, ok := m[key]
	if !ok || isNull(v) {
		return 0, nil
	}
	var f float64
	if json.Unmarshal(v, &f) != nil || math.IsNaN(f) || f < 0 || f > 1e11 {
		return 0, fmt.Errorf("not a time in seconds (%s)", clip(string(v), 40))
	}
	return int64(math.Round(f * 1000)), nil
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func versionOr(v string) string {
	if v == "" {
		return "(version unknown)"
	}
	return v
}
