package hermes

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"talaria/sidecar/protocol"
)

// toolStart opens a tool card and its call in the segment's assistant row
// (tool.start, or a tool.complete whose start never came).
func (t *turn) toolStart(b *evToolStart) {
	tid, name, args := b.ToolID, b.Name, b.Args
	if tid == "" {
		t.seq++
		tid = fmt.Sprintf("hermes_tool_%d", t.seq)
	}
	if t.callRow < 0 {
		// The segment's prose (message.interim, else what streamed) opens the row.
		t.rows = append(t.rows, protocol.ChatMessage{Role: "assistant", Content: strings.TrimSpace(t.segText.String()),
			Reasoning: t.segReasoning.String()})
		t.callRow = len(t.rows) - 1
		t.segText.Reset()
		t.segReasoning.Reset()
	}
	argsText := "{}"
	if args != nil {
		if b, err := json.Marshal(args); err == nil {
			argsText = string(b)
		}
	}
	row := &t.rows[t.callRow]
	row.ToolCalls = append(row.ToolCalls, protocol.ToolCall{ID: tid, Type: "function", Function: protocol.ToolFunction{Name: name, Arguments: argsText}})
	t.tools[tid] = &toolState{name: name, args: args, started: t.now(), row: t.callRow}
	keyArg := b.Context
	if keyArg == "" || strings.HasPrefix(keyArg, "display.") {
		keyArg = primaryArg(name, args)
	}
	t.send(protocol.EvTool, protocol.ToolData{TID: tid, Name: name, Args: capArgs(args), KeyArg: capString(keyArg, 200)})
}

// toolComplete closes a tool card (tool.complete): its tool row, the end of the
// prompts it held, and the end of the segment when the batch is done.
func (t *turn) toolComplete(b *evToolComplete) {
	tid, name := b.ToolID, b.Name
	ts := t.tools[tid]
	if ts == nil {
		// A tool.complete without its start (the turn was resumed mid-tool, or
		// dialect A's subagent relay): give it a row of its own.
		t.toolStart(&b.evToolStart)
		ts = t.tools[tid]
		if ts == nil {
			return
		}
	}
	if ts.done {
		return
	}
	ts.done = true
	if name == "" {
		name = ts.name
	}
	t.completeArgs(ts, tid, b.Args)
	raw := b.Result
	content := string(raw)
	var s string
	if json.Unmarshal(raw, &s) == nil {
		content = s // a tool result given as a JSON text
	}
	dur := b.DurationS
	if dur == 0 {
		dur = t.now().Sub(ts.started).Seconds()
	}
	data := protocol.ToolCompleteData{TID: tid, Name: name, Preview: capString(previewOf(raw, b.Summary), 8<<10),
		RawResult: boundedRaw(raw), ResultDiff: b.InlineDiff, DurationS: float64(int64(dur*1000)) / 1000, TodoResult: b.Todos}
	t.rows = append(t.rows, protocol.ChatMessage{Role: "tool", ToolCallID: tid, Name: name, Content: content})
	// The wait of any prompt this tool held is over: unanswered ones ended by
	// Hermes's own timeout (dialect A has no event for it) or by the interrupt.
	reason := protocol.ResolvedTimeout
	if t.interrupting {
		reason = protocol.ResolvedInterrupted
	}
	for _, a := range t.approvals {
		if a.tid == tid && !a.resolved {
			t.resolveApproval(a, reason, "")
		}
	}
	for _, c := range t.clarifies {
		if c.tid == tid && !c.resolved {
			t.resolveClarify(c, reason)
		}
	}
	t.send(protocol.EvToolComplete, data)
	for _, s := range t.steers {
		if !s.taken {
			s.afterTool = true
		}
	}
	// A new segment starts after a batch: the next text is not this row's.
	if t.allToolsDone() {
		t.closeSegment()
	}
}

// completeArgs fills in a call's arguments that only came with its completion
// (dialect A sends none at tool.start).
func (t *turn) completeArgs(ts *toolState, tid string, args map[string]any) {
	if args == nil || ts.args != nil {
		return
	}
	ts.args = args
	if b, err := json.Marshal(args); err == nil {
		row := &t.rows[ts.row]
		for i := range row.ToolCalls {
			if row.ToolCalls[i].ID == tid {
				row.ToolCalls[i].Function.Arguments = string(b)
			}
		}
	}
}

func (t *turn) allToolsDone() bool {
	for _, ts := range t.tools {
		if !ts.done {
			return false
		}
	}
	return true
}

// openTool is the tool whose prompt this is: the latest started and not finished.
func (t *turn) openTool() string {
	if t.callRow >= 0 {
		calls := t.rows[t.callRow].ToolCalls
		for i := len(calls) - 1; i >= 0; i-- {
			if ts := t.tools[calls[i].ID]; ts != nil && !ts.done {
				return calls[i].ID
			}
		}
	}
	return ""
}

func shortID(s string) string {
	s = strings.TrimPrefix(s, "st_")
	if len(s) > 8 {
		s = s[len(s)-8:]
	}
	return s
}

// capString cuts s to at most n bytes on a rune boundary.
func capString(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// capArgs caps every string of a tool call's arguments at 2 KiB (docs/protocol.md).
func capArgs(args map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range args {
		out[k] = capValue(v, 2<<10)
	}
	return out
}

func capValue(v any, n int) any {
	switch x := v.(type) {
	case string:
		return capString(x, n)
	case map[string]any:
		m := map[string]any{}
		for k, e := range x {
			m[k] = capValue(e, n)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = capValue(e, n)
		}
		return l
	}
	return v
}

// boundedRaw caps every string in a result at 8 KiB.
func boundedRaw(raw json.RawMessage) json.RawMessage {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		b, _ := json.Marshal(capString(string(raw), 8<<10))
		return b
	}
	b, err := json.Marshal(capValue(v, 8<<10))
	if err != nil {
		return nil
	}
	return b
}

// previewOf is a tool result as text: a command's output, Hermes's summary, or the
// JSON itself.
func previewOf(raw json.RawMessage, summary string) string {
	var obj map[string]any
	if json.Unmarshal(raw, &obj) == nil {
		if out, ok := obj["output"].(string); ok {
			if e, ok := obj["error"].(string); ok && e != "" {
				return strings.TrimSpace(out + "\n" + e)
			}
			return out
		}
		if c, ok := obj["content"].(string); ok {
			return c
		}
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if summary != "" {
		return summary
	}
	return string(raw)
}

// primaryArg is the argument a card shows in its title.
func primaryArg(name string, args map[string]any) string {
	for _, k := range []string{"command", "path", "file_path", "pattern", "query", "url", "name"} {
		if v, ok := args[k].(string); ok && v != "" {
			return v
		}
	}
	if name == "clarify" {
		if qs, ok := args["questions"].([]any); ok && len(qs) > 0 {
			if q, ok := qs[0].(map[string]any); ok {
				if s, ok := q["question"].(string); ok {
					return s
				}
			}
		}
		if s, ok := args["question"].(string); ok {
			return s
		}
	}
	if name == "todo" {
		if todos, ok := args["todos"].([]any); ok {
			return fmt.Sprintf("%d items", len(todos))
		}
	}
	return ""
}
