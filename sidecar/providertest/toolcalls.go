package providertest

import (
	"encoding/json"
	"slices"
)

// Helpers for scripting tool-calling turns: "first request → tool call X, second
// request → a text answer" is Enqueue(CallTurn("", Call("c1", "read_file", args)),
// TextTurn("done")); the tool rows the runtime sent back are then in the second
// request (Requests()[1].ToolResults()).

// ToolCall is one scripted tool call. Arguments is the JSON text of its arguments.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Call returns a tool call whose arguments are args encoded as JSON (a string is used
// as the JSON text itself, so malformed arguments can be scripted too).
func Call(id, name string, args any) ToolCall {
	if s, ok := args.(string); ok {
		return ToolCall{ID: id, Name: name, Arguments: s}
	}
	return ToolCall{ID: id, Name: name, Arguments: string(mustJSON(args))}
}

// argPiece is how many bytes of arguments CallTurn puts in one delta.
const argPiece = 7

// CallTurn streams text (when not empty) as one token chunk, then the calls the way
// OpenAI streams them: per call a delta with index, id and name, then its arguments in
// pieces of a few bytes; calls after the first interleave their pieces with the
// previous call's, so assembly by index is exercised. It finishes with "tool_calls".
func CallTurn(text string, calls ...ToolCall) Turn {
	t := Turn{FinishReason: "tool_calls"}
	if text != "" {
		t.Chunks = append(t.Chunks, Chunk{Text: text})
	}
	type piece struct {
		call int
		args string
	}
	var pending []piece
	for i, c := range calls {
		t.Chunks = append(t.Chunks, Chunk{ToolCalls: []ToolCallDelta{{Index: i, ID: c.ID, Name: c.Name}}})
		for a := c.Arguments; a != ""; {
			n := min(argPiece, len(a))
			pending = append(pending, piece{i, a[:n]})
			a = a[n:]
		}
	}
	// Interleave: round-robin over the calls' pieces.
	byCall := map[int][]string{}
	for _, p := range pending {
		byCall[p.call] = append(byCall[p.call], p.args)
	}
	for more := true; more; {
		more = false
		for i := range calls {
			if len(byCall[i]) == 0 {
				continue
			}
			t.Chunks = append(t.Chunks, Chunk{ToolCalls: []ToolCallDelta{{Index: i, Arguments: byCall[i][0]}}})
			byCall[i] = byCall[i][1:]
			more = true
		}
	}
	return t
}

// ToolNames returns the names of the tools a request offered (its "tools" member).
func (r *Request) ToolNames() []string {
	var tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	json.Unmarshal(r.Tools, &tools) //nolint:errcheck // no tools: nil
	var out []string
	for _, t := range tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// ToolChoice returns the request's tool_choice when it is a string ("auto").
func (r *Request) ToolChoice() string {
	var v struct {
		ToolChoice string `json:"tool_choice"`
	}
	json.Unmarshal(r.Body, &v) //nolint:errcheck // absent or not a string: ""
	return v.ToolChoice
}

// ToolResults returns the request's tool messages (role "tool"), in order.
func (r *Request) ToolResults() []Message {
	var out []Message
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// ToolResult returns the tool message answering the call id.
func (r *Request) ToolResult(id string) (Message, bool) {
	i := slices.IndexFunc(r.Messages, func(m Message) bool { return m.Role == "tool" && m.ToolCallID == id })
	if i < 0 {
		return Message{}, false
	}
	return r.Messages[i], true
}

// AssistantCalls returns the tool calls of the request's assistant messages, in order.
func (r *Request) AssistantCalls() []ToolCall {
	var out []ToolCall
	for _, m := range r.Messages {
		if m.Role != "assistant" || len(m.ToolCalls) == 0 {
			continue
		}
		var calls []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		}
		json.Unmarshal(m.ToolCalls, &calls) //nolint:errcheck // malformed: none
		for _, c := range calls {
			out = append(out, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
	}
	return out
}
