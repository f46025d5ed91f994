package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
)

// Running the model's tool calls: the tool and tool_complete frames around each call,
// dispatch through the tool registry (toolset.go; each tool in tool_<name>.go), and
// the tool rows the model reads back, redacted and capped.

// Frame and result bounds, in bytes.
const (
	maxArgFrame    = 2 << 10   // a string argument in a tool frame
	maxKeyArg      = 200       // the key argument of a tool frame
	maxPreview     = 8 << 10   // tool_complete preview
	maxRawString   = 8 << 10   // a string of tool_complete raw_result
	maxResultDiff  = 8 << 20   // tool_complete result_diff (whole below this)
	maxModelDiff   = 32 << 10  // the diff in the result the model reads
	maxToolContent = 256 << 10 // a tool row's content
)

// toolResult is what one tool call produced.
type toolResult struct {
	value   any                 // the result object; the model reads it as JSON
	preview string              // text for the card
	diff    string              // unified diff of an edit
	todos   []protocol.TodoItem // the todo tool's whole list
	isTodo  bool
	// text, when set, is what the model reads instead of value as JSON (MCP tools);
	// value is then only the raw_result the host decides is_error from.
	text string
	mcp  *protocol.MCPToolResult // an MCP tool's answer for the card
}

func errResult(format string, args ...any) toolResult {
	msg := fmt.Sprintf(format, args...)
	return toolResult{value: map[string]any{"error": msg}, preview: msg}
}

// runCall runs one tool call between its tool and tool_complete frames and returns
// the tool row for the model.
func (t *turn) runCall(ctx context.Context, call protocol.ToolCall) protocol.ChatMessage {
	start := time.Now()
	t.callID = call.ID
	name := call.Function.Name
	rawArgs := strings.TrimSpace(call.Function.Arguments)
	if rawArgs == "" {
		rawArgs = "{}"
	}
	var args map[string]any
	argErr := json.Unmarshal([]byte(rawArgs), &args)
	if argErr == nil && args == nil {
		argErr = fmt.Errorf("null is not an object")
	}
	spec := toolNamed(name)
	mt := t.mcpTools[name]
	red := t.r.redactor()

	frame := protocol.ToolData{TID: call.ID, Name: name, Args: map[string]any{}}
	if argErr != nil {
		s, _ := tools.Cap(red.String(rawArgs), maxArgFrame)
		frame.Args = map[string]any{"_raw": s}
	} else {
		frame.Args, _ = walkStrings(args, red, maxArgFrame).(map[string]any)
		frame.KeyArg = keyArg(spec, args, red)
		if mt != nil {
			frame.KeyArg = mt.keyArg(args, red)
		}
	}
	if mt != nil {
		frame.MCP = mt.ref()
	}
	t.send(protocol.EvTool, frame)

	var res toolResult
	switch {
	case mt != nil && argErr != nil:
		res = mcpErr(mt, fmt.Sprintf("the arguments of %s are not a JSON object: %v", name, argErr))
	case mt != nil:
		res = t.callMCP(ctx, mt, args)
	case spec == nil || !t.offered[name]:
		res = errResult("there is no tool named %q; the tools are: %s", trimForMessage(name), strings.Join(t.offeredNames(), ", "))
	case argErr != nil:
		res = errResult("the arguments of %s are not a JSON object: %v", name, argErr)
	default:
		res = spec.run(ctx, t, []byte(rawArgs))
	}
	took := time.Since(start)

	red = t.r.redactor() // a request_secret call may have added a value
	content := cleanJSON(res.value, red, 0)
	if res.text != "" {
		content = []byte(red.String(res.text))
	}
	if len(content) > maxToolContent {
		s, _ := tools.Cap(string(content), maxToolContent)
		content, _ = json.Marshal(map[string]any{"truncated_result": s})
	}
	preview, _ := tools.Cap(red.String(res.preview), maxPreview)
	done := protocol.ToolCompleteData{
		TID:       call.ID,
		Name:      name,
		Preview:   preview,
		RawResult: cleanJSON(res.value, red, maxRawString),
		DurationS: math.Round(took.Seconds()*1000) / 1000,
	}
	if res.diff != "" {
		done.ResultDiff, _ = tools.Cap(red.String(res.diff), maxResultDiff)
	}
	if res.isTodo {
		done.TodoResult = &protocol.TodoList{Todos: res.todos}
	}
	done.MCP = res.mcp
	t.send(protocol.EvToolComplete, done)
	t.log.Info("tool done", "tool", name, "tid", call.ID, "took", took.Round(time.Millisecond))
	return protocol.ChatMessage{Role: "tool", ToolCallID: call.ID, Name: name, Content: string(content)}
}

func (t *turn) offeredNames() []string {
	var out []string
	for _, tl := range registry {
		if name := tl.Def().Name; t.offered[name] {
			out = append(out, name)
		}
	}
	return append(out, t.mcpOrder...)
}

// keyArg is the argument a card shows in its title, redacted and cut.
func keyArg(tl Tool, args map[string]any, red *tools.Redactor) string {
	if tl == nil {
		return ""
	}
	s, _ := tools.Cap(red.String(tl.KeyArg(args)), maxKeyArg)
	return s
}

func editResult(res tools.WriteResult) toolResult {
	model := res
	model.Diff, _ = tools.Cap(res.Diff, maxModelDiff)
	added, removed := tools.DiffStat(res.Diff)
	verb := "edited"
	if res.Created {
		verb = "created"
	}
	return toolResult{value: model, diff: res.Diff, preview: fmt.Sprintf("%s %s (+%d -%d)", verb, res.Path, added, removed)}
}

// withWorkspace opens the session's workspace for a file tool (once per turn).
func (t *turn) withWorkspace(f func(*tools.Workspace) toolResult) toolResult {
	ws, err := t.workspace()
	if err != nil {
		return errResult("%v", err)
	}
	return f(ws)
}

func (t *turn) workspace() (*tools.Workspace, error) {
	if t.ws == nil && t.wsErr == nil {
		t.ws, t.wsErr = tools.OpenWorkspace(t.p.Workspace, t.policy.Hides()...)
	}
	return t.ws, t.wsErr
}

// cleanJSON encodes v with every known secret value replaced in its strings and, when
// capN > 0, every string cut to capN bytes.
func cleanJSON(v any, red *tools.Redactor, capN int) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"error": "the result could not be encoded: " + err.Error()})
	}
	if red.Empty() && capN <= 0 {
		return b
	}
	if capN <= 0 {
		// Secrets inside strings (raw or JSON-escaped) are replaced in the text itself,
		// which keeps the members' order; a match across the structure (a secret of
		// digits in a number) falls back to the walk below.
		if out := []byte(red.String(string(b))); json.Valid(out) {
			return out
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var generic any
	if dec.Decode(&generic) != nil {
		return b
	}
	out, err := json.Marshal(walkStrings(generic, red, capN))
	if err != nil {
		return b
	}
	return out
}

// walkStrings returns v (decoded JSON) with secrets redacted from every string (map
// keys included) and strings capped at capN bytes when capN > 0.
func walkStrings(v any, red *tools.Redactor, capN int) any {
	switch x := v.(type) {
	case string:
		s := red.String(x)
		if capN > 0 {
			s, _ = tools.Cap(s, capN)
		}
		return s
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[red.String(k)] = walkStrings(val, red, capN)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = walkStrings(val, red, capN)
		}
		return out
	}
	return v
}
