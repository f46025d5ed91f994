package turn

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"github.com/sourcegraph/go-diff/diff"

	"talaria/backend/pending"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
)

// EditDiff summarises a tool's unified diff: the files it touched and the lines added
// and removed, counted over the whole diff.
type EditDiff struct {
	Files   []string `json:"files"`
	Added   int      `json:"added"`
	Removed int      `json:"removed"`
}

// ParseEditDiff reads a unified diff (one or several files) with sourcegraph/go-diff.
// It returns nil for an empty or unreadable diff.
func ParseEditDiff(unified string) *EditDiff {
	if strings.TrimSpace(unified) == "" {
		return nil
	}
	fds, err := diff.ParseMultiFileDiff([]byte(unified))
	if err != nil || len(fds) == 0 {
		return nil
	}
	out := &EditDiff{Files: []string{}}
	for _, fd := range fds {
		name := fd.NewName
		if name == "" || name == "/dev/null" {
			name = fd.OrigName
		}
		out.Files = append(out.Files, strings.TrimPrefix(strings.TrimPrefix(name, "b/"), "a/"))
		for _, h := range fd.Hunks {
			for _, line := range bytes.Split(h.Body, []byte("\n")) {
				switch {
				case len(line) > 0 && line[0] == '+':
					out.Added++
				case len(line) > 0 && line[0] == '-':
					out.Removed++
				}
			}
		}
	}
	return out
}

// IsToolError decides whether a tool call failed from its raw result: a non-zero
// exit_code, a non-empty error (string, object or true), or success false. A result
// that is not a JSON object is not an error.
func IsToolError(raw json.RawMessage) bool {
	var r map[string]any
	if json.Unmarshal(raw, &r) != nil {
		return false
	}
	if c, ok := r["exit_code"].(float64); ok && c != 0 {
		return true
	}
	switch e := r["error"].(type) {
	case string:
		if strings.TrimSpace(e) != "" {
			return true
		}
	case bool:
		if e {
			return true
		}
	case map[string]any, []any:
		return true
	}
	if s, ok := r["success"].(bool); ok && !s {
		return true
	}
	return false
}

// VaultStatus is what the host knows about a secret a vault clarify asks for.
type VaultStatus struct {
	SavedAvailable   bool   `json:"saved_available"`
	KeyringAvailable bool   `json:"keyring_available"`
	KeyringError     string `json:"keyring_error"`
}

// relayTool normalises the tool-flow frames. It returns false when the frame is not
// one of them.
func (r *Runner) relayTool(rn *run, event string, data json.RawMessage) bool {
	switch event {
	case protocol.EvTool:
		var td protocol.ToolData
		if json.Unmarshal(data, &td) == nil && td.TID != "" {
			if rn.toolStarts == nil {
				rn.toolStarts = map[string]time.Time{}
			}
			rn.toolStarts[td.TID] = time.Now()
			rn.seeTool(td)
		}
		r.emitRaw(rn, event, data)
	case protocol.EvToolComplete:
		var tc protocol.ToolCompleteData
		if err := json.Unmarshal(data, &tc); err != nil {
			r.log.Warn("malformed tool_complete dropped", "stream", rn.streamID, "err", err)
			return true
		}
		dur := tc.DurationS
		if began, ok := rn.toolStarts[tc.TID]; ok {
			if dur <= 0 {
				dur = time.Since(began).Seconds()
			}
			delete(rn.toolStarts, tc.TID)
		}
		rn.toolDone(tc)
		r.emit(rn, event, ToolCompleteFrame{ToolCompleteData: tc, IsError: IsToolError(tc.RawResult), Duration: dur,
			EditDiff: ParseEditDiff(tc.ResultDiff)})
		if tc.TodoResult != nil {
			todos := tc.TodoResult.Todos
			if todos == nil {
				todos = []protocol.TodoItem{}
			}
			r.emit(rn, protocol.EvTodoState, TodoStateData{Todos: todos})
		}
	case protocol.EvApproval:
		var ad protocol.ApprovalData
		if err := json.Unmarshal(data, &ad); err != nil || ad.ApprovalID == "" {
			r.log.Warn("malformed approval dropped", "stream", rn.streamID)
			return true
		}
		if rn.approvals == nil {
			rn.approvals = map[string]protocol.ApprovalData{}
		}
		rn.approvals[ad.ApprovalID] = ad
		frame := ApprovalFrame{ApprovalData: ad, ExpiresAt: expiresAt(ad.TimeoutS)}
		n := r.pending.Add(rn.sessionID, pending.Item{Kind: pending.KindApproval, ID: ad.ApprovalID, StreamID: rn.streamID,
			Pattern: ad.Pattern, Description: ad.Description, Data: mustJSON(frame)})
		frame.PendingCount = n
		r.emit(rn, event, frame)
	case protocol.EvClarify:
		var cd protocol.ClarifyData
		if err := json.Unmarshal(data, &cd); err != nil || cd.ClarifyID == "" {
			r.log.Warn("malformed clarify dropped", "stream", rn.streamID)
			return true
		}
		if cd.Kind == "" {
			cd.Kind = protocol.ClarifyKindClarify
		}
		frame := ClarifyFrame{ClarifyData: cd, ExpiresAt: expiresAt(cd.TimeoutS)}
		if cd.Kind == protocol.ClarifyKindVault && r.VaultStatus != nil {
			frame.VaultStatus = r.VaultStatus(cd.Name)
		}
		n := r.pending.Add(rn.sessionID, pending.Item{Kind: pending.KindClarify, ID: cd.ClarifyID, StreamID: rn.streamID,
			ClarifyKind: cd.Kind, Name: cd.Name, Data: mustJSON(frame)})
		frame.PendingCount = n
		r.emit(rn, event, frame)
	case protocol.EvApprovalResolved, protocol.EvClarifyResolved:
		var rd protocol.ResolvedData
		_ = json.Unmarshal(data, &rd)
		kind, id := pending.KindApproval, rd.ApprovalID
		if event == protocol.EvClarifyResolved {
			kind, id = pending.KindClarify, rd.ClarifyID
		}
		n, _ := r.pending.Resolve(rn.sessionID, kind, id)
		if event == protocol.EvClarifyResolved {
			r.emit(rn, event, ClarifyResolvedFrame{ClarifyID: rd.ClarifyID, Reason: rd.Reason, PendingCount: n})
		} else {
			r.emit(rn, event, ApprovalResolvedFrame{ApprovalID: rd.ApprovalID, Reason: rd.Reason, Choice: rd.Choice, PendingCount: n})
		}
		if kind == pending.KindApproval {
			r.auditResolved(rn, id, rd.Reason, rd.Choice)
		}
	case protocol.EvApprovalAuto:
		var ad protocol.ApprovalAutoData
		if err := json.Unmarshal(data, &ad); err != nil || ad.Pattern == "" {
			r.log.Warn("malformed approval_auto dropped", "stream", rn.streamID)
			return true
		}
		r.emitRaw(rn, event, data)
		r.audit(rn, protocol.ApprovalData{Command: ad.Command, Description: ad.Description, Pattern: ad.Pattern,
			Sandbox: ad.Sandbox, Kind: ad.Kind, MCP: ad.MCP}, ad.Decision, ad.DecidedBy)
	default:
		return false
	}
	return true
}

// auditResolved records the decision about an approval the runtime asked for.
func (r *Runner) auditResolved(rn *run, approvalID, reason, choice string) {
	ad, ok := rn.approvals[approvalID]
	if !ok {
		return
	}
	delete(rn.approvals, approvalID)
	decision, by := reason, reason
	switch reason {
	case protocol.ResolvedAnswered:
		decision, by = choice, "user"
	case protocol.ResolvedInterrupted:
		by = "turn ended"
	}
	if decision == "" {
		decision = store.DecisionInterrupted
	}
	r.audit(rn, ad, decision, by)
}

// audit hands one decision to the audit log.
func (r *Runner) audit(rn *run, ad protocol.ApprovalData, decision, by string) {
	if r.Audit == nil {
		return
	}
	kind, tool := store.AuditCommand, ""
	switch {
	case ad.Kind == protocol.ApprovalKindMCP && ad.MCP != nil:
		kind, tool = store.AuditToolCall, "mcp:"+ad.MCP.Server+"/"+ad.MCP.Tool
	case ad.Kind != "" || ad.ToolCallID != "":
		kind, tool = store.AuditToolCall, ad.Title
	}
	subject := ad.Command
	if subject == "" {
		subject = ad.Title
	}
	policy := policyText(rn.cfg.Sandbox)
	if ad.Sandbox != "" && ad.Sandbox != policy {
		policy += "; this call: " + ad.Sandbox
	}
	red := func(s string) string {
		if r.Redact == nil {
			return s
		}
		return string(r.Redact([]byte(s)))
	}
	r.Audit(store.AuditEntry{SessionID: rn.sessionID, StreamID: rn.streamID, Runtime: rn.cfg.Runtime, Kind: kind, Tool: tool,
		Subject: red(subject), Pattern: ad.Pattern, Description: red(ad.Description), Decision: decision, DecidedBy: by, Policy: policy})
}

// policyText describes a sandbox policy like the runtime does: "workspace-write, no
// network".
func policyText(p *protocol.SandboxPolicy) string {
	if p == nil {
		return ""
	}
	mode := p.Mode
	if mode == "" {
		mode = protocol.SandboxWorkspaceWrite
	}
	switch {
	case mode == protocol.SandboxFullAccess:
		return mode
	case p.Network:
		return mode + ", network on"
	}
	return mode + ", no network"
}

// expiresAt is when a wait of timeoutS seconds from now ends, in epoch milliseconds (0
// when there is no timeout), so a window opened late shows the right countdown.
func expiresAt(timeoutS int) int64 {
	if timeoutS <= 0 {
		return 0
	}
	return time.Now().Add(time.Duration(timeoutS) * time.Second).UnixMilli()
}

// mustJSON encodes a frame type (which always encodes).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("turn: frame not encodable: " + err.Error())
	}
	return b
}

// withdrawPending emits a resolved frame (reason interrupted) for every item the
// stream left waiting, so no window keeps a card the agent no longer waits for.
func (r *Runner) withdrawPending(rn *run) {
	for _, it := range r.pending.DropStream(rn.sessionID, rn.streamID) {
		_, n, _ := r.pending.Head(rn.sessionID, it.Kind)
		if it.Kind == pending.KindApproval {
			r.emit(rn, protocol.EvApprovalResolved, ApprovalResolvedFrame{ApprovalID: it.ID, Reason: protocol.ResolvedInterrupted, PendingCount: n})
			r.auditResolved(rn, it.ID, protocol.ResolvedInterrupted, "")
		} else {
			r.emit(rn, protocol.EvClarifyResolved, ClarifyResolvedFrame{ClarifyID: it.ID, Reason: protocol.ResolvedInterrupted, PendingCount: n})
		}
	}
	// Approvals answered but never resolved (the agent died in between) end here too.
	for id := range rn.approvals {
		r.auditResolved(rn, id, protocol.ResolvedInterrupted, "")
	}
}

// maxSeenTools bounds the tool calls a run keeps for its partial rows.
const maxSeenTools = 256

// seenTool is a tool call a turn showed (a tool frame), and its result once a
// tool_complete came: what partialRows saves of it when the turn returns no rows.
type seenTool struct {
	call   protocol.ToolCall
	result string
	done   bool
}

// seeTool records a tool frame: a new call, or new arguments of one already shown.
func (rn *run) seeTool(td protocol.ToolData) {
	args, err := json.Marshal(td.Args)
	if err != nil || td.Args == nil {
		args = []byte("{}")
	}
	for i := range rn.tools {
		if rn.tools[i].call.ID == td.TID {
			if td.Name != "" {
				rn.tools[i].call.Function.Name = td.Name
			}
			if td.Args != nil {
				rn.tools[i].call.Function.Arguments = string(args)
			}
			return
		}
	}
	if len(rn.tools) >= maxSeenTools {
		return
	}
	rn.tools = append(rn.tools, seenTool{call: protocol.ToolCall{ID: td.TID, Type: "function",
		Function: protocol.ToolFunction{Name: td.Name, Arguments: string(args)}}})
}

// toolDone records a tool call's result (its raw result, else its preview).
func (rn *run) toolDone(tc protocol.ToolCompleteData) {
	for i := range rn.tools {
		if rn.tools[i].call.ID == tc.TID {
			rn.tools[i].done = true
			rn.tools[i].result = tc.Preview
			if len(tc.RawResult) > 0 && string(tc.RawResult) != "null" {
				rn.tools[i].result = string(tc.RawResult)
			}
			return
		}
	}
}
