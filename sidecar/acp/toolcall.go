package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
)

// One ACP tool call as the mapper knows it (toolState), and how it is shown: its card's
// name, key argument, arguments, output, diff and transcript row.

// toolState is what is known of one tool call.
type toolState struct {
	id        string
	seq       int
	kind      string
	title     string
	rawInput  any
	rawOutput any
	status    string
	content   []sdk.ToolCallContent
	locations []string
	diffs     map[string]string // path -> unified diff, from any source
	diffOrder []string
	started   time.Time
	announced string // the tool frame last sent, to skip repeats
	done      bool
	asked     bool // a permission request was about it
	served    bool // Talaria wrote a file for it (fs/write_text_file)
}

// ---- a tool call's views ----

// name is the card's name: the ACP tool kind ("edit", "execute", ...), "todo" for a
// call whose input is a todo list.
func (ts *toolState) name() string {
	if _, ok := todoList(ts.rawInput); ok {
		return "todo"
	}
	if ts.kind == "" || ts.kind == "other" {
		return "tool"
	}
	return ts.kind
}

func (ts *toolState) keyArg(cwd string) string {
	s := displayTitle(ts.title, cwd)
	if s == "" && len(ts.locations) > 0 {
		s = displayPath(ts.locations[0], cwd)
	}
	if s == "" {
		if in, ok := ts.rawInput.(map[string]any); ok {
			for _, k := range []string{"command", "path", "filePath", "file_path", "pattern", "query", "url"} {
				if v, ok := in[k].(string); ok && v != "" {
					s = v
					break
				}
			}
		}
	}
	s, _ = tools.Cap(s, maxKeyArg)
	return s
}

// setContent replaces the call's content; the diffs in it are kept (by path).
func (ts *toolState) setContent(c []sdk.ToolCallContent, cwd string) {
	ts.content = c
	for _, item := range c {
		if d := item.Diff; d != nil && d.Path != "" {
			oldName, oldText := "", ""
			if d.OldText != nil {
				oldName, oldText = displayPath(d.Path, cwd), *d.OldText
			}
			if u := tools.Unified(oldName, displayPath(d.Path, cwd), oldText, d.NewText); u != "" {
				ts.addDiff(d.Path, u)
			}
		}
	}
}

// files are the paths the call is known to touch: its diffs', then its locations.
func (ts *toolState) files() []string {
	return append(append([]string{}, ts.diffOrder...), ts.locations...)
}

// touches reports whether one of paths is a file of the call.
func (ts *toolState) touches(paths []string, cwd string) bool {
	for _, p := range paths {
		for _, q := range ts.files() {
			if samePath(p, q, cwd) {
				return true
			}
		}
	}
	return false
}

func (ts *toolState) addDiff(path, unified string) {
	if unified == "" {
		return
	}
	if _, ok := ts.diffs[path]; !ok {
		ts.diffOrder = append(ts.diffOrder, path)
	}
	ts.diffs[path] = unified
}

// usedTerminal reports whether the call shows a terminal: one the agent made with
// terminal/create, whose command Talaria checked before it ran.
func (ts *toolState) usedTerminal() bool {
	for _, item := range ts.content {
		if item.Terminal != nil {
			return true
		}
	}
	return false
}

func (ts *toolState) diff() string {
	var sb strings.Builder
	for _, p := range ts.diffOrder {
		sb.WriteString(ts.diffs[p])
	}
	return sb.String()
}

// output is the call's text output: its text content and its terminals' output.
func (ts *toolState) output(term func(string) string) string {
	var parts []string
	for _, item := range ts.content {
		switch {
		case item.Content != nil:
			if t := blockText(item.Content.Content); t != "" {
				parts = append(parts, t)
			}
		case item.Terminal != nil:
			if t := term(item.Terminal.TerminalId); t != "" {
				parts = append(parts, t)
			}
		}
	}
	if len(parts) == 0 && ts.rawOutput != nil {
		switch v := ts.rawOutput.(type) {
		case string:
			parts = append(parts, v)
		case map[string]any:
			if s, ok := v["output"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// arguments is the transcript's arguments text: the agent's title first, as the card
// shows it (so a reloaded card shows it too), then the raw input's members.
func (ts *toolState) arguments(cwd string) string {
	var buf bytes.Buffer
	buf.WriteByte('{')
	t, _ := json.Marshal(ts.keyArg(cwd))
	buf.WriteString(`"title":`)
	buf.Write(t)
	if in, ok := capStrings(ts.rawInput, maxRowOutput).(map[string]any); ok {
		keys := make([]string, 0, len(in))
		for k := range in {
			if k != "title" {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			kb, _ := json.Marshal(k)
			vb, err := json.Marshal(in[k])
			if err != nil {
				continue
			}
			buf.WriteByte(',')
			buf.Write(kb)
			buf.WriteByte(':')
			buf.Write(vb)
		}
	} else if ts.rawInput != nil {
		if vb, err := json.Marshal(capStrings(ts.rawInput, maxRowOutput)); err == nil {
			buf.WriteString(`,"input":`)
			buf.Write(vb)
		}
	}
	buf.WriteByte('}')
	return buf.String()
}

// row is the tool row's content: a JSON object with the status, the output, the diff
// and, for a failed or stopped call, the error.
func (ts *toolState) row(term func(string) string, cancelled bool) string {
	out := map[string]any{"status": ts.status, "output": capString(ts.output(term), maxRowOutput)}
	switch {
	case !ts.done && cancelled:
		out["status"] = "interrupted"
		out["error"] = "interrupted: the turn was stopped before the tool call ended"
	case ts.status == statusFailed:
		out["error"] = firstNonEmpty(capString(ts.output(term), maxRawString), "the tool call failed")
	}
	if d := ts.diff(); d != "" {
		out["diff"] = capString(d, maxRowDiff)
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// ---- helpers ----

// displayTitle is an agent's title of a tool call as a card shows it: one line, and a
// path inside the workspace relative to it (OpenCode titles a file call with the file's
// absolute path, or that path without its leading "/").
func displayTitle(title, cwd string) string {
	s := strings.Join(strings.Fields(title), " ")
	if cwd == "" || s == "" || strings.ContainsAny(s, " \t") {
		return s
	}
	for _, p := range []string{s, "/" + s} {
		if rel, err := filepath.Rel(cwd, p); err == nil && filepath.IsAbs(p) && rel != "." && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return s
}

// blockText is the text a content block shows: its text, a resource link as a
// Markdown link, an embedded text resource's text; images and audio show nothing.
func blockText(b sdk.ContentBlock) string {
	switch {
	case b.Text != nil:
		return b.Text.Text
	case b.ResourceLink != nil:
		name := b.ResourceLink.Name
		if b.ResourceLink.Title != nil && *b.ResourceLink.Title != "" {
			name = *b.ResourceLink.Title
		}
		return fmt.Sprintf("[%s](%s)", name, b.ResourceLink.Uri)
	case b.Resource != nil:
		if r := b.Resource.Resource.TextResourceContents; r != nil {
			return r.Text
		}
	}
	return ""
}

func locationPaths(locs []sdk.ToolCallLocation) []string {
	out := make([]string, 0, len(locs))
	for _, l := range locs {
		if l.Path != "" {
			out = append(out, l.Path)
		}
	}
	return out
}

// displayPath is a path as a diff header shows it: relative to the workspace when it
// is inside, else without its leading separator.
func displayPath(p, cwd string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	if cwd != "" {
		if rel, err := filepath.Rel(cwd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return strings.TrimLeft(filepath.ToSlash(p), "/")
}

func samePath(a, b, cwd string) bool {
	abs := func(p string) string {
		if !filepath.IsAbs(p) && cwd != "" {
			p = filepath.Join(cwd, p)
		}
		return filepath.Clean(p)
	}
	return abs(a) == abs(b)
}

// frameArgs are a tool frame's args: the raw input's members with strings capped, or
// {"_raw": ...} for an input that is not an object.
func frameArgs(in any) map[string]any {
	switch v := capStrings(in, maxArgFrame).(type) {
	case nil:
		return map[string]any{}
	case map[string]any:
		return v
	default:
		b, _ := json.Marshal(v)
		s, _ := tools.Cap(string(b), maxArgFrame)
		return map[string]any{"_raw": s}
	}
}

// capStrings returns v (decoded JSON) with every string cut to n bytes.
func capStrings(v any, n int) any {
	switch x := v.(type) {
	case string:
		return capString(x, n)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = capStrings(val, n)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = capStrings(val, n)
		}
		return out
	}
	return v
}

func capString(s string, n int) string {
	s, _ = tools.Cap(s, n)
	return s
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}

// todoList reads a todo list from a tool's raw input: {"todos": [{content, status,
// id?}, ...]} (OpenCode's todowrite, Hermes's todo, Claude's TodoWrite). ok is false
// when the input is not one.
func todoList(in any) ([]protocol.TodoItem, bool) {
	m, ok := in.(map[string]any)
	if !ok {
		return nil, false
	}
	list, ok := m["todos"].([]any)
	if !ok {
		return nil, false
	}
	out := make([]protocol.TodoItem, 0, len(list))
	for i, it := range list {
		e, ok := it.(map[string]any)
		if !ok {
			return nil, false
		}
		content, _ := e["content"].(string)
		status, _ := e["status"].(string)
		if content == "" {
			return nil, false
		}
		id := fmt.Sprint(i + 1)
		switch v := e["id"].(type) {
		case string:
			if v != "" {
				id = v
			}
		case float64:
			id = fmt.Sprint(v)
		}
		out = append(out, protocol.TodoItem{ID: id, Content: content, Status: todoStatus(status)})
	}
	return out, true
}

// todoStatus maps a plan or todo status to the protocol's: pending, in_progress,
// completed, cancelled.
func todoStatus(s string) string {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "in_progress", "in-progress", "active", "doing":
		return tools.TodoInProgress
	case "completed", "done", "complete":
		return tools.TodoCompleted
	case "cancelled", "canceled":
		return tools.TodoCancelled
	}
	return tools.TodoPending
}
