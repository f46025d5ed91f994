package acp

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
)

// The mapping of one prompt turn: ACP session updates in, protocol frames out (token,
// reasoning, tool, tool_complete, plan, usage), and at the end the turn's transcript
// rows. It holds no locks: the SDK delivers a session's updates one at a time, in
// order, and the runtime serialises permission and file notes through the turn's mutex.

// Frame and row bounds, in bytes (the same as the built-in runtime's).
const (
	maxArgFrame   = 2 << 10   // a string argument in a tool frame
	maxKeyArg     = 200       // a tool frame's key_arg
	maxPreview    = 8 << 10   // tool_complete preview
	maxRawString  = 8 << 10   // a string of tool_complete raw_result
	maxResultDiff = 8 << 20   // tool_complete result_diff
	maxRowDiff    = 32 << 10  // the diff kept in a tool row
	maxRowOutput  = 256 << 10 // the output kept in a tool row
)

// Tool statuses of ACP.
const (
	statusPending    = "pending"
	statusInProgress = "in_progress"
	statusCompleted  = "completed"
	statusFailed     = "failed"
)

type emitFunc func(event string, data any)

// mapper turns one turn's updates into frames and rows.
type mapper struct {
	emit emitFunc
	cwd  string
	now  func() time.Time
	// termOutput returns a client terminal's output so far ("" when unknown).
	termOutput func(id string) string
	// selfApproved, when set, is told of a call that edited, deleted, moved or ran a
	// command and completed with no permission request and nothing served by Talaria
	// (no fs/write_text_file, no terminal): the agent approved it by itself.
	selfApproved func(tid, kind, title, command string)

	segs  []*segment
	tools map[string]*toolState
	seq   int // tool order

	usage      protocol.Usage
	usageKnown bool
	context    protocol.ContextInfo

	// early holds what a permission request or a file write showed (diffs, files)
	// before the call it is about was announced: an agent's notifications and its
	// requests reach the client on different goroutines, so either may come first.
	// Each is a probe toolState (id, kind, locations, diffs); the call claims it when
	// it arrives (claimEarly).
	early []*toolState
}

// segment is assistant output between tool calls: its text, its reasoning, and the
// tool calls that followed it.
type segment struct {
	text      strings.Builder
	reasoning strings.Builder
	calls     []string
}

// chunkText is what a message or thought chunk adds to the text so far (so): its
// blockText, except that an embedded text resource is set apart as a fenced block of
// its own (on its own lines, verbatim, the text after it below it), not glued to the
// words around it.
func chunkText(b sdk.ContentBlock, so *strings.Builder) string {
	t := blockText(b)
	if t == "" {
		return ""
	}
	if b.Resource == nil || b.Resource.Resource.TextResourceContents == nil {
		return t
	}
	fence := "```"
	for strings.Contains(t, fence) {
		fence += "`"
	}
	var sb strings.Builder
	if so.Len() > 0 {
		prev := so.String()
		switch {
		case strings.HasSuffix(prev, "\n\n"):
		case strings.HasSuffix(prev, "\n"):
			sb.WriteString("\n")
		default:
			sb.WriteString("\n\n")
		}
	}
	sb.WriteString(fence + "\n" + strings.TrimSuffix(t, "\n") + "\n" + fence + "\n")
	return sb.String()
}

func newMapper(emit emitFunc, cwd string) *mapper {
	return &mapper{emit: emit, cwd: cwd, now: time.Now, tools: map[string]*toolState{},
		termOutput: func(string) string { return "" }}
}

func (m *mapper) current() *segment {
	if len(m.segs) == 0 {
		m.segs = append(m.segs, &segment{})
	}
	return m.segs[len(m.segs)-1]
}

// fresh returns the segment new text goes to: a new one after tool calls.
func (m *mapper) fresh() *segment {
	s := m.current()
	if len(s.calls) > 0 {
		s = &segment{}
		m.segs = append(m.segs, s)
	}
	return s
}

// handle maps one session update. It reports false for the updates a turn does not
// map (commands, modes, config options, titles: the runtime handles those).
func (m *mapper) handle(u sdk.SessionUpdate) bool {
	switch {
	case u.AgentMessageChunk != nil:
		seg := m.fresh()
		if t := chunkText(u.AgentMessageChunk.Content, &seg.text); t != "" {
			seg.text.WriteString(t)
			m.emit(protocol.EvToken, protocol.TextData{Text: t})
		}
	case u.AgentThoughtChunk != nil:
		seg := m.fresh()
		if t := chunkText(u.AgentThoughtChunk.Content, &seg.reasoning); t != "" {
			seg.reasoning.WriteString(t)
			m.emit(protocol.EvReasoning, protocol.TextData{Text: t})
		}
	case u.ToolCall != nil:
		tc := u.ToolCall
		ts := m.tool(string(tc.ToolCallId))
		ts.kind = string(tc.Kind)
		ts.title = tc.Title
		if tc.RawInput != nil {
			ts.rawInput = tc.RawInput
		}
		if tc.RawOutput != nil {
			ts.rawOutput = tc.RawOutput
		}
		if tc.Status != "" {
			ts.status = string(tc.Status)
		}
		if tc.Content != nil {
			ts.setContent(tc.Content, m.cwd)
		}
		if tc.Locations != nil {
			ts.locations = locationPaths(tc.Locations)
		}
		m.claimEarly(ts)
		m.afterToolChange(ts)
	case u.ToolCallUpdate != nil:
		tu := u.ToolCallUpdate
		ts := m.tool(string(tu.ToolCallId))
		if tu.Kind != nil {
			ts.kind = string(*tu.Kind)
		}
		if tu.Title != nil {
			ts.title = *tu.Title
		}
		if tu.RawInput != nil {
			ts.rawInput = tu.RawInput
		}
		if tu.RawOutput != nil {
			ts.rawOutput = tu.RawOutput
		}
		if tu.Status != nil {
			ts.status = string(*tu.Status)
		}
		if tu.Content != nil {
			ts.setContent(tu.Content, m.cwd)
		}
		if tu.Locations != nil {
			ts.locations = locationPaths(tu.Locations)
		}
		m.claimEarly(ts)
		m.afterToolChange(ts)
	case u.Plan != nil:
		todos := make([]protocol.TodoItem, 0, len(u.Plan.Entries))
		for i, e := range u.Plan.Entries {
			todos = append(todos, protocol.TodoItem{ID: fmt.Sprint(i + 1), Content: e.Content, Status: todoStatus(string(e.Status))})
		}
		m.emit(protocol.EvPlan, protocol.TodoList{Todos: todos})
	case u.UsageUpdate != nil:
		uu := u.UsageUpdate
		m.context.ContextLength = int64(uu.Size)
		m.context.LastPromptTokens = int64(uu.Used)
		if uu.Cost != nil && uu.Cost.Amount > 0 && strings.EqualFold(uu.Cost.Currency, "USD") {
			m.usage.EstimatedCost = uu.Cost.Amount
			m.usageKnown = true
			m.emit(protocol.EvUsage, m.usage)
		}
	case u.UserMessageChunk != nil:
		// The agent echoing the prompt (or replaying history): the host saved it.
	default:
		return false
	}
	return true
}

// tool returns the state of a tool call, creating it (and placing it after the text
// so far) when it is new.
func (m *mapper) tool(id string) *toolState {
	if ts := m.tools[id]; ts != nil {
		return ts
	}
	m.seq++
	ts := &toolState{id: id, seq: m.seq, status: statusPending, started: m.now(), diffs: map[string]string{}}
	m.tools[id] = ts
	s := m.current()
	s.calls = append(s.calls, id)
	return ts
}

// afterToolChange sends the tool frame when what a card shows changed, and
// tool_complete once the call has ended.
func (m *mapper) afterToolChange(ts *toolState) {
	if ts.done {
		return
	}
	frame := protocol.ToolData{TID: ts.id, Name: ts.name(), Args: frameArgs(ts.rawInput), KeyArg: ts.keyArg(m.cwd)}
	if b, err := json.Marshal(frame); err == nil && string(b) != ts.announced {
		ts.announced = string(b)
		m.emit(protocol.EvTool, frame)
	}
	if ts.status == statusCompleted || ts.status == statusFailed {
		m.complete(ts)
	}
}

// complete sends tool_complete for a call that ended.
func (m *mapper) complete(ts *toolState) {
	if ts.done {
		return
	}
	ts.done = true
	reported := ts.status == statusCompleted // not one completed at the turn's end
	if ts.status != statusFailed {
		ts.status = statusCompleted
	}
	output := ts.output(m.termOutput)
	preview, _ := tools.Cap(output, maxPreview)
	raw := map[string]any{"status": ts.status, "output": capString(output, maxRawString)}
	if ts.status == statusFailed {
		raw["error"] = firstNonEmpty(capString(output, maxRawString), "the tool call failed")
	}
	if ts.rawOutput != nil {
		raw["raw_output"] = capStrings(ts.rawOutput, maxRawString)
	}
	rawJSON, _ := json.Marshal(raw)
	done := protocol.ToolCompleteData{
		TID: ts.id, Name: ts.name(), Preview: preview, RawResult: rawJSON,
		DurationS: math.Round(m.now().Sub(ts.started).Seconds()*1000) / 1000,
	}
	if d := ts.diff(); d != "" {
		done.ResultDiff, _ = tools.Cap(d, maxResultDiff)
	}
	if m.selfApproved != nil && reported && !ts.asked && !ts.served && !ts.usedTerminal() {
		switch ts.kind {
		case "edit", "delete", "move", "execute":
			title := ts.keyArg(m.cwd)
			m.selfApproved(ts.id, ts.kind, title, permissionCommand(sdk.ToolCallUpdate{RawInput: ts.rawInput}, title))
		}
	}
	if todos, ok := todoList(ts.rawInput); ok {
		done.TodoResult = &protocol.TodoList{Todos: todos}
	}
	m.emit(protocol.EvToolComplete, done)
}

// notePermission records what a permission request showed about a tool call (its
// diffs and locations) on the call it is about: the call of that id, or else the open
// call touching the same files, or else the last open call of the same kind.
func (m *mapper) notePermission(tc sdk.ToolCallUpdate) (diff string) {
	probe := &toolState{diffs: map[string]string{}}
	probe.setContent(tc.Content, m.cwd)
	if tc.Locations != nil {
		probe.locations = locationPaths(tc.Locations)
	}
	diff = probe.diff()
	ts := m.tools[string(tc.ToolCallId)]
	if ts == nil {
		kind := ""
		if tc.Kind != nil {
			kind = string(*tc.Kind)
		}
		ts = m.openToolFor(probe.files(), kind)
	}
	if ts != nil {
		ts.asked = true
		for _, p := range probe.diffOrder {
			ts.addDiff(p, probe.diffs[p])
		}
	} else if len(probe.diffOrder) > 0 || tc.ToolCallId != "" {
		probe.asked = true
		probe.id = string(tc.ToolCallId)
		if tc.Kind != nil {
			probe.kind = string(*tc.Kind)
		}
		m.early = append(m.early, probe)
	}
	return diff
}

// refusePermission forgets what a refused permission request showed (notePermission):
// the edit it asked for was not made, so its diff is no change of the call's (a card
// would show "+1 −0" for a file left as it was). Diffs the call reported itself for
// other files, or a different diff of the same file, stay.
func (m *mapper) refusePermission(tc sdk.ToolCallUpdate) {
	probe := &toolState{diffs: map[string]string{}}
	probe.setContent(tc.Content, m.cwd)
	if len(probe.diffOrder) == 0 {
		return
	}
	drop := func(ts *toolState) {
		keep := ts.diffOrder[:0]
		for _, p := range ts.diffOrder {
			if d, shown := probe.diffs[p]; shown && d == ts.diffs[p] {
				delete(ts.diffs, p)
				continue
			}
			keep = append(keep, p)
		}
		ts.diffOrder = keep
	}
	if ts := m.tools[string(tc.ToolCallId)]; ts != nil {
		drop(ts)
	} else {
		kind := ""
		if tc.Kind != nil {
			kind = string(*tc.Kind)
		}
		if ts := m.openToolFor(probe.files(), kind); ts != nil {
			drop(ts)
		}
	}
	for _, n := range m.early {
		if n.id == string(tc.ToolCallId) {
			drop(n)
		}
	}
}

// claimEarly gives ts the early notes that are about it: the one naming its id, or
// one about a file it touches, or, for a note that names neither a known id nor a
// file of an open call, the first call of the note's kind to arrive.
func (m *mapper) claimEarly(ts *toolState) {
	if len(m.early) == 0 || ts.done {
		return
	}
	keep := m.early[:0]
	for _, n := range m.early {
		about := (n.id != "" && n.id == ts.id) || ts.touches(n.files(), m.cwd) ||
			(n.kind != "" && n.kind == ts.kind && len(ts.locations) == 0)
		if !about {
			keep = append(keep, n)
			continue
		}
		for _, p := range n.diffOrder {
			if _, had := ts.diffs[p]; !had || n.id == ts.id {
				ts.addDiff(p, n.diffs[p])
			}
		}
		ts.asked = ts.asked || n.asked
		ts.served = ts.served || n.served
	}
	m.early = keep
}

// noteWrite records a file the agent wrote through fs/write_text_file (unified, the
// write's diff, "" when nothing changed) on the open call that is about it, unless
// that call already has a diff for the file; the call is marked as served by Talaria.
func (m *mapper) noteWrite(path, unified string) {
	ts := m.openToolFor([]string{path}, "edit")
	if ts == nil {
		probe := &toolState{kind: "edit", diffs: map[string]string{}, served: true, locations: []string{path}}
		if unified != "" {
			probe.addDiff(path, unified)
		}
		m.early = append(m.early, probe)
		return
	}
	ts.served = true
	for _, p := range ts.diffOrder {
		if samePath(p, path, m.cwd) {
			return
		}
	}
	ts.addDiff(path, unified)
}

// openToolFor finds the latest open call whose files include one of paths, else the
// latest open call of kind (any kind when ""), else nil.
func (m *mapper) openToolFor(paths []string, kind string) *toolState {
	var open []*toolState
	for _, ts := range m.tools {
		if !ts.done {
			open = append(open, ts)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i].seq > open[j].seq })
	for _, ts := range open {
		if ts.touches(paths, m.cwd) {
			return ts
		}
	}
	for _, ts := range open {
		if kind == "" || ts.kind == kind {
			return ts
		}
	}
	return nil
}

// finish ends the turn's mapping: calls still open are completed with what is known
// (the agent ended its turn without reporting them) or, when the turn was stopped,
// left open (the window shows them interrupted). It returns the transcript rows and
// the final answer.
func (m *mapper) finish(cancelled bool) (rows []protocol.ChatMessage, final string) {
	ids := make([]*toolState, 0, len(m.tools))
	for _, ts := range m.tools {
		ids = append(ids, ts)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].seq < ids[j].seq })
	if !cancelled {
		for _, ts := range ids {
			m.complete(ts)
		}
	}
	rows = []protocol.ChatMessage{}
	for _, s := range m.segs {
		text, reasoning := s.text.String(), s.reasoning.String()
		if text == "" && reasoning == "" && len(s.calls) == 0 {
			continue
		}
		row := protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: reasoning}
		for _, id := range s.calls {
			ts := m.tools[id]
			row.ToolCalls = append(row.ToolCalls, protocol.ToolCall{ID: id, Type: "function",
				Function: protocol.ToolFunction{Name: ts.name(), Arguments: ts.arguments(m.cwd)}})
		}
		rows = append(rows, row)
		for _, id := range s.calls {
			rows = append(rows, protocol.ChatMessage{Role: "tool", ToolCallID: id, Name: m.tools[id].name(), Content: m.tools[id].row(m.termOutput, cancelled)})
		}
		if strings.TrimSpace(text) != "" {
			final = text
		}
	}
	if cancelled {
		for i := len(rows) - 1; i >= 0; i-- {
			if rows[i].Role == "assistant" {
				rows[i].Partial = true
				break
			}
		}
	}
	return rows, final
}
