package builtin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/gate"
	"talaria/sidecar/mcp"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
	"talaria/sidecar/server"
)

// MCP tools in a turn: the servers chat.start enables are started (or reused) before
// the first model call, their tools offered as <server>__<tool>, and each call asked
// for (unless allowed), made through the server's instance, and shown with its
// content (docs/protocol.md, "MCP servers").

// Bounds of the MCP tools of one turn.
const (
	maxMCPTools       = 128       // tools offered from all servers (the OpenAI API's limit)
	maxToolName       = 64        // a function name (OpenAI: ^[a-zA-Z0-9_-]{1,64}$)
	maxMCPDescription = 2 << 10   // a tool's description sent to the model
	maxMCPSchema      = 128 << 10 // a tool's input schema sent to the model
	maxMCPStderr      = 2 << 10   // the server output a failed call's message quotes
)

// How long a turn waits for MCP servers (mcp.Manager.Ready): a server that is not
// ready by then goes on starting in the background and is left out of this turn with
// a warning; a server that already made a turn wait, or whose last start failed, is
// not waited for at all.
const (
	mcpCallWait = mcp.DefaultConnectTimeout // starting again a server that died before a call
)

// mcpTurnWait is how long a turn waits for its MCP servers to start and list their
// tools: 10 s, or TALARIA_MCP_TURN_WAIT when it parses as a positive duration (a slow
// machine whose servers take longer to start; the tests, whose loaded machines must not
// decide what a turn offers).
var mcpTurnWait = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("TALARIA_MCP_TURN_WAIT")); err == nil && d > 0 {
		return d
	}
	return 10 * time.Second
}()

// mcpTool is one MCP tool offered in a turn.
type mcpTool struct {
	name  string // as offered: <server>__<tool>
	srv   protocol.MCPServer
	tool  *sdk.Tool
	ann   protocol.MCPAnnotations
	title string
}

func (m *mcpTool) ref() *protocol.MCPToolRef {
	return &protocol.MCPToolRef{Server: m.srv.Name, Tool: m.tool.Name, Title: m.title, Annotations: m.ann}
}

var toolNameUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// mcpToolName is the function name a server's tool is offered as: <server>__<tool>,
// characters outside [A-Za-z0-9_-] replaced by '_', cut to 64 bytes with a hash of the
// whole name when longer; taken names get _2, _3 ...
func mcpToolName(server, tool string, taken map[string]bool) string {
	name := server + "__" + toolNameUnsafe.ReplaceAllString(tool, "_")
	if len(name) > maxToolName {
		sum := sha256.Sum256([]byte(server + "\x00" + tool))
		name = name[:maxToolName-9] + "_" + hex.EncodeToString(sum[:4])
	}
	out := name
	for n := 2; taken[out]; n++ {
		suffix := fmt.Sprintf("_%d", n)
		out = name[:min(len(name), maxToolName-len(suffix))] + suffix
	}
	taken[out] = true
	return out
}

// mcpScope is where a turn's (or an mcp.* request's) stdio servers run: under the
// chat's sandbox policy, with network for a server set to "network" and no confinement
// for one set to "off". The scope key tells apart instances under different policies.
func (r *Runtime) mcpScope(pol sandbox.Policy) mcp.Scope {
	key, _ := json.Marshal([]any{pol.Mode, pol.Workspace, pol.Network, pol.Writable, pol.Hidden})
	return mcp.Scope{
		Key:       string(key),
		Workspace: pol.Workspace,
		Env:       sandbox.Env,
		Launch: func(choice string, argv, env []string, dir string, writable []string) (*exec.Cmd, error) {
			p := pol
			switch choice {
			case protocol.MCPSandboxNetwork:
				p.Network = true
			case protocol.MCPSandboxOff:
				p.Mode = sandbox.ModeFullAccess
			}
			if st := r.sandboxStatus(); p.Confined() && !st.Available {
				return nil, fmt.Errorf("no sandbox can confine it here (%s): choose \"no sandbox\" for this server if you trust it", st.Reason)
			}
			// A server installed in the private /tmp (e.g. a checkout there) still
			// finds its own files, read-only.
			p.ReadOnly = append(append([]string{}, p.ReadOnly...), sandbox.ProgramPaths(argv, dir)...)
			// Its own state folder (and the folders the user let it write): read-write
			// in workspace-write mode, unless hidden (a hidden path always wins).
			for _, w := range writable {
				if !slices.ContainsFunc(p.Hidden, func(h string) bool { return sandbox.Overlaps(w, h) }) {
					p.Writable = append(slices.Clip(p.Writable), w)
				}
			}
			// Not tied to a request: the server lives as long as its instance.
			return sandbox.Command(context.Background(), p, argv, env, dir)
		},
	}
}

// mcpPolicy is the policy of an mcp.* request's scope (the chat's, as chat.start has it).
func mcpPolicy(s protocol.MCPScope) (sandbox.Policy, error) {
	return policyFor(protocol.ChatStartParams{Workspace: s.Workspace, Sandbox: s.Sandbox})
}

// learnSecrets registers the secret values of servers' settings for redaction.
func (r *Runtime) learnSecrets(servers []protocol.MCPServer) {
	var vals []string
	for _, s := range servers {
		vals = append(vals, mcp.Secrets(s)...)
	}
	if len(vals) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	changed := false
	for _, v := range vals {
		if !r.mcpSecrets[v] {
			r.mcpSecrets[v] = true
			changed = true
		}
	}
	if changed {
		r.rebuildRedactorLocked()
	}
}

// startMCP gets the instance of every server the turn enables (in parallel, starting
// those not running) and collects their tools, waiting at most mcpTurnWait. A server
// that fails is left out with a warning frame saying why; servers still starting are
// left out with one warning naming them (they start on in the background and a later
// turn offers their tools). The turn goes on. It returns ctx's error when the turn was
// stopped meanwhile.
func (t *turn) startMCP(ctx context.Context) error {
	servers := t.p.MCPServers
	if len(servers) == 0 || (len(t.p.EnabledToolsets) > 0 && !slices.Contains(t.p.EnabledToolsets, protocol.ToolsetMCP)) {
		return nil
	}
	t.r.learnSecrets(servers)
	t.mcpScope = t.r.mcpScope(t.policy)
	type listed struct {
		tools []*sdk.Tool
		err   error
	}
	out := make([]listed, len(servers))
	var wg sync.WaitGroup
	seen := map[string]bool{}
	begin := time.Now()
	for i, s := range servers {
		if seen[s.Name] {
			out[i].err = fmt.Errorf("a second server is named %q; only the first is used", s.Name)
			continue
		}
		seen[s.Name] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := t.r.mcp.Ready(ctx, s, t.mcpScope, mcpTurnWait)
			if err == nil {
				// Listing the tools shares the turn's wait: a server that answers the
				// handshake but not tools/list is slow too.
				out[i].tools, err = c.ToolsReady(ctx, mcpTurnWait-time.Since(begin))
			}
			out[i].err = err
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	t.mcpTools = map[string]*mcpTool{}
	taken := map[string]bool{}
	for _, tl := range registry {
		taken[tl.Def().Name] = true
	}
	red := t.r.redactor()
	var slow []string
	var left []leftOut // per server, the tools past the cap
	for i, s := range servers {
		if err := out[i].err; err != nil {
			var se *mcp.SlowError
			if errors.As(err, &se) {
				slow = append(slow, s.Name)
				t.log.Info("MCP server still starting; left out of the turn", "server", s.Name)
				continue
			}
			msg := fmt.Sprintf("The MCP server %s is not available in this turn: %s", s.Name, mcpErrorText(err, red))
			t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningMCP, Message: msg})
			t.log.Info("MCP server unavailable", "server", s.Name, "err", mcpErrorText(err, red))
			continue
		}
		lo := leftOut{server: s.Name}
		for _, tl := range out[i].tools {
			if slices.Contains(s.DisabledTools, tl.Name) {
				continue
			}
			lo.enabled++
			if len(t.mcpOrder) >= maxMCPTools {
				lo.tools = append(lo.tools, tl.Name)
				continue
			}
			mt := &mcpTool{name: mcpToolName(s.Name, tl.Name, taken), srv: s, tool: tl, ann: mcp.Annotations(tl), title: mcp.Title(tl)}
			t.mcpTools[mt.name] = mt
			t.mcpOrder = append(t.mcpOrder, mt.name)
		}
		if len(lo.tools) > 0 {
			left = append(left, lo)
		}
	}
	if len(left) > 0 {
		msg, n := capWarning(len(t.mcpOrder), left)
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningMCP, Message: msg})
		t.log.Info("MCP tools left out past the cap", "offered", len(t.mcpOrder), "left_out", n)
	}
	if len(slow) > 0 {
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningMCP, Message: slowMessage(slow)})
	}
	if len(t.mcpOrder) > 0 {
		t.log.Info("MCP tools offered", "servers", len(servers), "tools", len(t.mcpOrder))
	}
	return nil
}

// slowMessage is the one warning of a turn about the servers still starting.
func slowMessage(names []string) string {
	if len(names) == 1 {
		return fmt.Sprintf("The MCP server %s has not finished starting (its MCP handshake); this turn goes on without its tools, and it keeps starting in the background. If it never gets ready, use \"Test\" in its settings to see why.", names[0])
	}
	return fmt.Sprintf("The MCP servers %s have not finished starting (their MCP handshake); this turn goes on without their tools, and they keep starting in the background. If one never gets ready, use \"Test\" in its settings to see why.", strings.Join(names, ", "))
}

// leftOut is one server's tools past the cap: the tools not offered (in its order)
// of its enabled tools.
type leftOut struct {
	server  string
	enabled int
	tools   []string
}

// capWarning is the warning of a turn whose enabled MCP servers offer more than
// maxMCPTools tools (offered of them are), and how many are left out. It names every
// tool left out, by server: "w12 (all 13 tools)" for a server none of whose tools is
// offered, "w10: echo, get-sum" for the rest of one cut in the middle, so the user
// knows which tools the model cannot call and what to disable.
func capWarning(offered int, left []leftOut) (string, int) {
	n := 0
	parts := make([]string, 0, len(left))
	for _, lo := range left {
		n += len(lo.tools)
		if len(lo.tools) == lo.enabled {
			parts = append(parts, fmt.Sprintf("%s (all %d tools)", lo.server, lo.enabled))
		} else {
			parts = append(parts, lo.server+": "+strings.Join(lo.tools, ", "))
		}
	}
	return fmt.Sprintf("The enabled MCP servers offer %d tools; only the first %d are offered. Left out: %s. Disable tools or servers you do not need in this chat.",
		offered+n, maxMCPTools, strings.Join(parts, "; ")), n
}

// mcpToolsJSON is the request's tools entries of the turn's MCP tools, in order.
func (t *turn) mcpToolsJSON() []json.RawMessage {
	var out []json.RawMessage
	for _, name := range t.mcpOrder {
		mt := t.mcpTools[name]
		desc := strings.TrimSpace(mt.tool.Description)
		if mt.title != "" && !strings.Contains(desc, mt.title) {
			desc = mt.title + ". " + desc
		}
		desc, _ = tools.Cap("(MCP server "+mt.srv.Name+") "+desc, maxMCPDescription)
		b, err := json.Marshal(map[string]any{
			"type":     "function",
			"function": map[string]any{"name": mt.name, "description": desc, "parameters": toolSchema(mt.tool.InputSchema)},
		})
		if err == nil {
			out = append(out, b)
		}
	}
	return out
}

// toolSchema is an MCP input schema as a function's parameters: a JSON Schema object
// (type object, properties present), without $schema, which some providers refuse.
func toolSchema(in any) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(in); err == nil && len(b) <= maxMCPSchema {
		_ = json.Unmarshal(b, &m)
	}
	if m == nil {
		m = map[string]any{}
	}
	delete(m, "$schema")
	m["type"] = "object"
	if _, ok := m["properties"].(map[string]any); !ok {
		m["properties"] = map[string]any{}
	}
	return m
}

// mcpKeyArg is the argument a card shows in its title: the first required string
// argument, else the first string argument in the schema's order.
func (m *mcpTool) keyArg(args map[string]any, red *tools.Redactor) string {
	schema := toolSchema(m.tool.InputSchema)
	var names []string
	if req, ok := schema["required"].([]any); ok {
		for _, r := range req {
			if s, ok := r.(string); ok {
				names = append(names, s)
			}
		}
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		var rest []string
		for k := range props {
			rest = append(rest, k)
		}
		slices.Sort(rest)
		names = append(names, rest...)
	}
	for _, n := range names {
		if s, ok := args[n].(string); ok && strings.TrimSpace(s) != "" {
			s, _ = tools.Cap(red.String(s), maxKeyArg)
			return s
		}
	}
	return ""
}

// callMCP runs one MCP tool call: the approval, then the call through the server's
// instance (started again when it died since), its result converted.
func (t *turn) callMCP(ctx context.Context, mt *mcpTool, args map[string]any) toolResult {
	if ok, msg := t.approveMCP(ctx, mt, args); !ok {
		return mcpErr(mt, msg)
	}
	c, err := t.r.mcp.Ready(ctx, mt.srv, t.mcpScope, mcpCallWait)
	if err != nil {
		return t.mcpFailure(ctx, mt, err)
	}
	// The server's elicitation and sampling requests during the call ask this chat
	// (mcp_requests.go).
	res, err := c.Call(mcp.WithRequests(ctx, mcpAsker{t}), mt.tool.Name, args)
	if err != nil {
		return t.mcpFailure(ctx, mt, err)
	}
	red := t.r.redactor()
	conv := mcp.ConvertResult(mt.srv.Name, mt.tool.Name, res)
	card := conv.Card
	for i := range card.Content {
		b := &card.Content[i]
		b.Text, b.Description, b.Name, b.Title, b.URI = red.String(b.Text), red.String(b.Description), red.String(b.Name), red.String(b.Title), red.String(b.URI)
	}
	if len(card.Structured) > 0 {
		card.Structured = cleanJSON(json.RawMessage(card.Structured), red, maxRawString)
	}
	text := red.String(conv.Text)
	if note := t.refusalNote(mt.srv, res.IsError, text); note != "" {
		// A write the sandbox refused: say which path, and how to allow it.
		text += "\n\n" + note
		card.Content = append(card.Content, protocol.MCPContent{Type: "text", Text: note})
	}
	raw := map[string]any{"server": mt.srv.Name, "tool": mt.tool.Name, "is_error": res.IsError}
	if res.IsError {
		raw["error"] = firstLine(text, 500)
	}
	return toolResult{value: raw, text: text, preview: conv.Preview, mcp: &card}
}

// mcpFailure is the result of a call that did not get an answer.
func (t *turn) mcpFailure(ctx context.Context, mt *mcpTool, err error) toolResult {
	red := t.r.redactor()
	if ctx.Err() != nil {
		return mcpErr(mt, "interrupted: the turn was stopped while the MCP tool ran; it may have done part of its work.")
	}
	msg := mcpErrorText(err, red)
	t.log.Info("MCP call failed", "server", mt.srv.Name, "tool", mt.tool.Name, "err", msg)
	var de *mcp.DeadError
	if errors.As(err, &de) {
		out := de.Error()
		if de.Stderr != "" {
			s := red.String(de.Stderr)
			if len(s) > maxMCPStderr {
				s = "…" + s[len(s)-maxMCPStderr:]
			}
			out += "\nIts last output:\n" + s
		}
		if note := t.refusalNote(mt.srv, true, de.Stderr); note != "" {
			out += "\n\n" + note
		}
		return mcpErr(mt, red.String(out))
	}
	var se *mcp.StartError
	var slow *mcp.SlowError
	if errors.As(err, &se) || errors.As(err, &slow) {
		return mcpErr(mt, "the tool was not called: "+msg)
	}
	return mcpErr(mt, fmt.Sprintf("the MCP server %s refused the call: %s", mt.srv.Name, msg))
}

// refusalNote is mcp.RefusalHint for a failed call of a sandboxed stdio server whose
// message names a write refused (read-only file system, permission denied); "" when
// there is none.
func (t *turn) refusalNote(s protocol.MCPServer, failed bool, text string) string {
	if !failed || s.Transport != protocol.MCPTransportStdio || s.Sandbox == protocol.MCPSandboxOff || !t.policy.Confined() {
		return ""
	}
	r, ok := mcp.FindRefusal(text)
	if !ok {
		return ""
	}
	return mcp.RefusalHint(s.Name, s.Cwd, r)
}

// mcpErr is a failed call's result: the model reads msg, the card shows it as an error.
func mcpErr(mt *mcpTool, msg string) toolResult {
	card := protocol.MCPToolResult{Server: mt.srv.Name, Tool: mt.tool.Name, IsError: true, Content: []protocol.MCPContent{{Type: "text", Text: msg}}}
	return toolResult{value: map[string]any{"server": mt.srv.Name, "tool": mt.tool.Name, "is_error": true, "error": msg}, text: "Error: " + msg, preview: msg, mcp: &card}
}

// mcpErrorText is an error's message with secrets redacted, and a start failure's hint.
func mcpErrorText(err error, red *tools.Redactor) string {
	msg := err.Error()
	var se *mcp.StartError
	if errors.As(err, &se) && se.Hint != "" {
		msg += ". " + se.Hint
	}
	return red.String(msg)
}

func firstLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s, _ = tools.Cap(s, n)
	return s
}

// mcpChoices are the answers an MCP tool's approval offers.
var mcpChoices = []string{protocol.ChoiceOnce, protocol.ChoiceSession, protocol.ChoiceAlways, protocol.ChoiceAlwaysServer, protocol.ChoiceDeny}

// approveMCP asks the user before an MCP tool runs, unless YOLO, a grant or the
// allowlist allows the tool or its server, or the tool declares itself read-only and
// the user let this server's read-only tools run without asking.
func (t *turn) approveMCP(ctx context.Context, mt *mcpTool, args map[string]any) (bool, string) {
	if mt.ann.ReadOnly && mt.srv.AllowReadOnly {
		t.send(protocol.EvApprovalAuto, protocol.ApprovalAutoData{TID: t.callID, Command: mt.srv.Name + " · " + mt.tool.Name,
			Pattern: protocol.MCPPattern(mt.srv.Name, mt.tool.Name), Decision: protocol.AutoAllowed, DecidedBy: "read-only tool",
			Kind: protocol.ApprovalKindMCP, MCP: mt.ref(), Sandbox: t.mcpWhere(mt.srv)})
		return true, ""
	}
	key, serverKey := protocol.MCPPattern(mt.srv.Name, mt.tool.Name), protocol.MCPServerPattern(mt.srv.Name)
	w := &waiter{id: newID("ap_"), sessionID: t.p.SessionID, kind: kindApproval, key: key, serverKey: serverKey, ch: make(chan answer, 1)}
	red := t.r.redactor()
	if t.r.park(w, key, t.allow) {
		decision := protocol.AutoAllowed
		if w.allowedBy == gate.ByYolo {
			decision = protocol.AutoYolo
		}
		t.send(protocol.EvApprovalAuto, protocol.ApprovalAutoData{TID: t.callID, Command: mt.srv.Name + " · " + mt.tool.Name,
			Pattern: key, Decision: decision, DecidedBy: w.allowedBy, Kind: protocol.ApprovalKindMCP, MCP: mt.ref(), Sandbox: t.mcpWhere(mt.srv)})
		return true, ""
	}
	shownArgs, _ := walkStrings(args, red, maxArgFrame).(map[string]any)
	label := mt.tool.Name
	if mt.title != "" {
		label = mt.title
	}
	desc, _ := tools.Cap(red.String(strings.TrimSpace(mt.tool.Description)), 1000)
	if desc == "" {
		desc = "calls the tool " + mt.tool.Name + " of the MCP server " + mt.srv.Name
	}
	frame := protocol.ApprovalData{
		ApprovalID: w.id, Kind: protocol.ApprovalKindMCP, MCP: mt.ref(), Args: shownArgs,
		Command: mt.srv.Name + " · " + label, Description: desc, Pattern: key, Choices: mcpChoices,
		TimeoutS: int(t.approvalTimeout / time.Second), Sandbox: t.mcpWhere(mt.srv),
	}
	t.send(protocol.EvApproval, frame)
	t.log.Info("approval requested", "approval_id", w.id, "pattern", key)
	ans, reason := t.wait(ctx, w, t.approvalTimeout)
	resolved := protocol.ResolvedData{ApprovalID: w.id, Reason: reason}
	if reason == protocol.ResolvedAnswered {
		resolved.Choice = ans.choice
	}
	t.send(protocol.EvApprovalResolved, resolved)
	t.log.Info("approval resolved", "approval_id", w.id, "pattern", key, "reason", reason, "choice", ans.choice)
	// The shared gate's reading of the answer: it fails closed.
	if (gate.Outcome{Reason: reason, Choice: ans.choice}).Allows() {
		return true, ""
	}
	switch reason {
	case protocol.ResolvedAnswered:
		return false, fmt.Sprintf("denied: the user did not allow the MCP tool %s of the server %s; it was not called. Do not try to do the same another way; ask the user or choose a different approach.", mt.tool.Name, mt.srv.Name)
	case protocol.ResolvedTimeout:
		return false, fmt.Sprintf("denied: nobody answered the approval request within %d seconds; the MCP tool %s was not called.", int(t.approvalTimeout/time.Second), mt.tool.Name)
	}
	return false, "interrupted: the turn was stopped while the MCP tool waited for approval; it was not called."
}

// mcpWhere says where a server's tools run, for the approval card.
func (t *turn) mcpWhere(s protocol.MCPServer) string {
	if s.Transport != protocol.MCPTransportStdio {
		host := s.URL
		if u, err := url.Parse(s.URL); err == nil && u.Host != "" {
			host = u.Host
		}
		return "on the remote server " + host
	}
	p := t.policy
	switch s.Sandbox {
	case protocol.MCPSandboxOff:
		return "local server, outside the sandbox"
	case protocol.MCPSandboxNetwork:
		p.Network = true
	}
	if !p.Confined() {
		return "local server, outside the sandbox"
	}
	return "local server, sandboxed (" + p.String() + ")"
}

// mcpMethods are the mcp.* request handlers (docs/protocol.md, "MCP servers").
func (r *Runtime) mcpMethods() map[string]server.Handler {
	return map[string]server.Handler{
		protocol.MethodMCPInspect:      r.mcpInspect,
		protocol.MethodMCPList:         r.mcpList,
		protocol.MethodMCPPromptGet:    r.mcpPromptGet,
		protocol.MethodMCPResourceRead: r.mcpResourceRead,
		protocol.MethodMCPStop:         r.mcpStop,
	}
}

// mcpInspect runs mcp.inspect: one server started (or found running) and reported, redacted.
func (r *Runtime) mcpInspect(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.MCPInspectParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	pol, err := mcpPolicy(p.MCPScope)
	if err != nil {
		return nil, err
	}
	r.learnSecrets([]protocol.MCPServer{p.Server})
	return r.redactReport(r.mcp.Inspect(ctx, p.Server, r.mcpScope(pol))), nil
}

// mcpList runs mcp.list: every server of the chat reported at once, each waited for no longer than a turn waits.
func (r *Runtime) mcpList(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.MCPListParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	pol, err := mcpPolicy(p.MCPScope)
	if err != nil {
		return nil, err
	}
	r.learnSecrets(p.Servers)
	scope := r.mcpScope(pol)
	out := protocol.MCPListResult{Servers: make([]protocol.MCPServerReport, len(p.Servers))}
	var wg sync.WaitGroup
	for i, s := range p.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rep := protocol.MCPServerReport{Name: s.Name, Tools: []protocol.MCPToolInfo{}, Prompts: []protocol.MCPPromptInfo{}, Resources: []protocol.MCPResourceInfo{}}
			// The chat's menu waits no longer than a turn (and not at all for a
			// server that already made something wait in vain).
			c, err := r.mcp.Ready(ctx, s, scope, mcpTurnWait)
			if err == nil {
				rep = c.Report(ctx)
			} else {
				rep.Error = err.Error()
				var se *mcp.StartError
				if errors.As(err, &se) {
					rep.Hint, rep.Stderr = se.Hint, se.Stderr
				}
			}
			out.Servers[i] = r.redactReport(rep)
		}()
	}
	wg.Wait()
	return out, nil
}

// mcpPromptGet runs mcp.prompt_get: a server's prompt, its messages converted and redacted, their text joined.
func (r *Runtime) mcpPromptGet(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.MCPPromptGetParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	c, err := r.mcpConn(ctx, p.MCPScope, p.Server)
	if err != nil {
		return nil, err
	}
	res, err := c.GetPrompt(ctx, p.Name, p.Arguments)
	if err != nil {
		return nil, r.mcpRequestError(p.Server.Name, err)
	}
	red := r.redactor()
	out := protocol.MCPPromptGetResult{Description: red.String(res.Description), Messages: []protocol.MCPPromptMessage{}}
	budget := mcp.MaxMediaTotal
	var texts []string
	for _, m := range res.Messages {
		if m == nil {
			continue
		}
		mc := mcp.ConvertContent(m.Content, &budget)
		mc.Text = red.String(mc.Text)
		out.Messages = append(out.Messages, protocol.MCPPromptMessage{Role: string(m.Role), Content: mc})
		switch {
		case mc.Type == "text":
			texts = append(texts, mc.Text)
		case mc.Type == "resource" && mc.Text != "":
			texts = append(texts, mc.Text)
		}
	}
	out.Text = strings.Join(texts, "\n\n")
	return out, nil
}

// mcpResourceRead runs mcp.resource_read: a server's resource, its contents converted and redacted.
func (r *Runtime) mcpResourceRead(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.MCPResourceReadParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.URI) == "" {
		return nil, invalid("uri is required")
	}
	c, err := r.mcpConn(ctx, p.MCPScope, p.Server)
	if err != nil {
		return nil, err
	}
	res, err := c.ReadResource(ctx, p.URI)
	if err != nil {
		return nil, r.mcpRequestError(p.Server.Name, err)
	}
	red := r.redactor()
	out := protocol.MCPResourceReadResult{Contents: []protocol.MCPContent{}}
	budget := mcp.MaxMediaTotal
	for _, rc := range res.Contents {
		mc := mcp.ConvertResource(rc, &budget)
		if mc.Type == "" {
			continue
		}
		mc.Text = red.String(mc.Text)
		out.Contents = append(out.Contents, mc)
	}
	return out, nil
}

// mcpStop runs mcp.stop: the named servers' instances stopped.
func (r *Runtime) mcpStop(ctx context.Context, call *server.Call) (any, error) {
	var p protocol.MCPStopParams
	if err := call.Bind(&p); err != nil {
		return nil, err
	}
	return protocol.MCPStopResult{Stopped: r.mcp.Stop(p.Names)}, nil
}

// mcpConn gets the running instance of a server for an mcp.* request. Errors:
// invalid_params for bad settings, agent_unavailable when it cannot start.
func (r *Runtime) mcpConn(ctx context.Context, scope protocol.MCPScope, s protocol.MCPServer) (*mcp.Conn, error) {
	pol, err := mcpPolicy(scope)
	if err != nil {
		return nil, err
	}
	r.learnSecrets([]protocol.MCPServer{s})
	c, err := r.mcp.Ready(ctx, s, r.mcpScope(pol), mcpCallWait)
	if err != nil {
		return nil, r.mcpRequestError(s.Name, err)
	}
	return c, nil
}

// mcpRequestError maps an MCP failure to the protocol's errors: a config error is
// invalid_params; the server's own refusal, a start failure or a dead server
// agent_unavailable; a cancelled request is the context's error.
func (r *Runtime) mcpRequestError(server string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	red := r.redactor()
	var ce *mcp.ConfigError
	if errors.As(err, &ce) {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, red.String(ce.Error()))
	}
	return protocol.NewError(0, protocol.CondAgentUnavailable, fmt.Sprintf("MCP server %s: %s", server, mcpErrorText(err, red)))
}

// redactReport removes known secrets from a report's texts.
func (r *Runtime) redactReport(rep protocol.MCPServerReport) protocol.MCPServerReport {
	red := r.redactor()
	if red.Empty() {
		return rep
	}
	raw := cleanJSON(rep, red, 0)
	var out protocol.MCPServerReport
	if json.Unmarshal(raw, &out) != nil {
		return rep
	}
	return out
}
