package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/mcp"
	"talaria/sidecar/protocol"
)

// chat is one Talaria session's link to its agent session: which agent session, on
// which agent process (gen), in which folder, what it offers (modes, models, options,
// commands) and the turn running in it. Guarded by Runtime.mu.
type chat struct {
	id       string
	agentSID string
	gen      int // the agentConn it was opened on; 0 when none
	cwd      string
	loading  bool // session/load replays history: its updates are not a turn's

	modes, models *protocol.Picker
	modeConfig    string // the config option id modes come from ("" for ACP modes)
	modelConfig   string // likewise for models
	options       []protocol.Picker
	commands      []protocol.SlashCommand

	hidden    []string      // the sandbox's hidden paths of the last turn (fs/* never opens them)
	opening   chan struct{} // held (a token in it) while a call opens the chat's session
	mcpKey    string        // the MCP servers the agent session was opened with (their JSON)
	title     string        // the agent's title not yet sent to the host
	turn      *turn
	turnCount int

	// selfModes is the runtime's (shared by its chats): per mode id ("" for an agent
	// without modes), why the agent is known to act without asking in it.
	selfModes map[string]string
}

// chatLocked returns Talaria session id's chat, creating it. r.mu must be held.
func (r *Runtime) chatLocked(id string) *chat {
	c := r.chats[id]
	if c == nil {
		c = &chat{id: id, selfModes: r.selfModes, opening: make(chan struct{}, 1)}
		r.chats[id] = c
	}
	return c
}

// stateLocked is the chat's AgentState. r.mu must be held.
func (c *chat) stateLocked() protocol.AgentState {
	st := protocol.AgentState{AgentSessionID: c.agentSID, Options: []protocol.Picker{}, Commands: []protocol.SlashCommand{}}
	if c.modes != nil {
		m := *c.modes
		m.Choices = slices.Clone(m.Choices)
		for i, ch := range m.Choices {
			m.Choices[i].SelfApproves = firstNonEmpty(c.selfModes[ch.ID], describesSelfApproval(ch))
			if ch.ID == m.Current {
				st.SelfApproves = m.Choices[i].SelfApproves
			}
		}
		st.Modes = &m
	} else {
		st.SelfApproves = c.selfModes[""]
	}
	if c.models != nil {
		m := *c.models
		m.Choices = slices.Clone(m.Choices)
		st.Models = &m
	}
	for _, o := range c.options {
		o.Choices = slices.Clone(o.Choices)
		st.Options = append(st.Options, o)
	}
	st.Commands = append(st.Commands, c.commands...)
	return st
}

// selfApprovalWords are what a mode's id, name or description says when the agent
// acts without asking in it: Hermes's "Auto-allow file edits", Claude's "Accept
// Edits" and "Bypass Permissions", Codex's "Full Access", "Don't Ask", "YOLO".
var selfApprovalWords = regexp.MustCompile(`(?i)auto[- ]?(allow|approv|accept)|accept[ _-]?edits|don'?t[ _-]?ask|dontask|bypass|yolo|full[ _-]?access|without (asking|approval|permission)`)

// describesSelfApproval is why mode choice ch lets the agent act without asking, when
// its id, name or description says so; else "".
func describesSelfApproval(ch protocol.PickerChoice) string {
	if !selfApprovalWords.MatchString(ch.ID + " " + ch.Name + " " + ch.Description) {
		return ""
	}
	if ch.Description != "" {
		return fmt.Sprintf("the mode says so: %q", capString(ch.Description, 200))
	}
	return fmt.Sprintf("the mode's name says so: %q", ch.Name)
}

// noteSelfApproval records that the agent of turn t ran call tid of kind (about what;
// command is its command, else what) with no permission request: an approval_auto
// (pattern agent_own, decided_by "agent") for the audit log, and, the first time in
// the chat's current mode, the mode as one in which the agent acts without asking
// (the chat's new state is sent). A kind the user allowed "always" in this chat (an
// allow_always option) is the user's choice, not the agent's: it is audited as such
// and does not mark the mode.
// t.mu is held (the mapper's callback); r.mu is taken after t.mu here as at the
// turn's end, never the other way round.
func (r *Runtime) noteSelfApproval(t *turn, tid, kind, what, command string) {
	name := t.a.name(r.opts.Agent)
	verb := map[string]string{"edit": "edited", "delete": "deleted", "move": "moved", "execute": "ran"}[kind]
	why := strings.TrimSpace(fmt.Sprintf("%s %s %s without asking in this mode", name, verb, capString(what, 120)))
	r.mu.Lock()
	always := false
	if m := r.sessions[t.p.SessionID]; m != nil && m.agentAlways[kind] {
		always = true
	}
	r.mu.Unlock()
	auto := protocol.ApprovalAutoData{TID: tid, Command: capString(firstNonEmpty(command, what), maxApprovalCmd), Pattern: protocol.PatternAgentOwn,
		Description: fmt.Sprintf("%s ran this with its own tools without asking, outside Talaria's sandbox", name),
		Decision:    protocol.AutoAllowed, DecidedBy: "agent", Kind: kind, Sandbox: "none: the agent's own tool, outside Talaria's sandbox"}
	if always {
		auto.DecidedBy = "agent, after Always allow"
	}
	t.send(protocol.EvApprovalAuto, auto)
	if always {
		return
	}
	r.mu.Lock()
	mode := ""
	if t.c.modes != nil {
		mode = t.c.modes.Current
	}
	if _, known := r.selfModes[mode]; known {
		r.mu.Unlock()
		return
	}
	r.selfModes[mode] = why
	st := t.c.stateLocked()
	r.mu.Unlock()
	r.log.Info("the agent acted without asking", "session_id", t.p.SessionID, "kind", kind, "mode", mode)
	t.send(protocol.EvAgentState, st)
}

// applyModes reads ACP session modes and models (session/new, load, resume answers).
// r.mu must be held.
func (c *chat) applyModesLocked(modes *sdk.SessionModeState, models *sdk.SessionModelState) {
	if modes != nil && len(modes.AvailableModes) > 0 {
		p := &protocol.Picker{ID: "mode", Name: "Mode", Current: string(modes.CurrentModeId)}
		for _, m := range modes.AvailableModes {
			p.Choices = append(p.Choices, protocol.PickerChoice{ID: string(m.Id), Name: m.Name, Description: deref(m.Description)})
		}
		c.modes, c.modeConfig = p, ""
	}
	if models != nil && len(models.AvailableModels) > 0 {
		p := &protocol.Picker{ID: "model", Name: "Model", Current: string(models.CurrentModelId)}
		for _, m := range models.AvailableModels {
			p.Choices = append(p.Choices, protocol.PickerChoice{ID: string(m.ModelId), Name: m.Name, Description: deref(m.Description)})
		}
		c.models, c.modelConfig = p, ""
	}
}

// applyConfigLocked reads ACP session config options: the select options of category
// mode and model become the mode and model pickers (they replace ACP modes and models,
// as the spec says), the other select options are listed as options. Boolean options
// are not shown. r.mu must be held.
func (c *chat) applyConfigLocked(opts []sdk.SessionConfigOption) {
	if opts == nil {
		return
	}
	c.options = nil
	for _, o := range opts {
		s := o.Select
		if s == nil {
			continue
		}
		p := protocol.Picker{ID: string(s.Id), Name: s.Name, Current: string(s.CurrentValue)}
		addChoice := func(v sdk.SessionConfigSelectOption, group string) {
			name := v.Name
			if group != "" {
				name = group + ": " + name
			}
			p.Choices = append(p.Choices, protocol.PickerChoice{ID: string(v.Value), Name: name, Description: deref(v.Description)})
		}
		if u := s.Options.Ungrouped; u != nil {
			for _, v := range *u {
				addChoice(v, "")
			}
		}
		if g := s.Options.Grouped; g != nil {
			for _, grp := range *g {
				for _, v := range grp.Options {
					addChoice(v, grp.Name)
				}
			}
		}
		category := ""
		if s.Category != nil {
			category = string(*s.Category)
		}
		switch category {
		case "mode":
			pp := p
			c.modes, c.modeConfig = &pp, string(s.Id)
		case "model":
			pp := p
			c.models, c.modelConfig = &pp, string(s.Id)
		default:
			c.options = append(c.options, p)
		}
	}
}

func (c *chat) setCommandsLocked(cmds []sdk.AvailableCommand) {
	c.commands = make([]protocol.SlashCommand, 0, len(cmds))
	for _, cmd := range cmds {
		sc := protocol.SlashCommand{Name: cmd.Name, Description: cmd.Description}
		if cmd.Input != nil && cmd.Input.Unstructured != nil {
			sc.Hint = cmd.Input.Unstructured.Hint
		}
		c.commands = append(c.commands, sc)
	}
}

// openResult says how a chat's agent session was opened.
type openResult struct {
	fresh     bool     // a new agent session: the agent knows nothing of the chat
	resumed   bool     // an earlier agent session was loaded or resumed
	resumeErr error    // set when an earlier session was asked for and could not be had
	skipped   []string // MCP servers the agent cannot take (a transport it lacks)
}

// openSession makes sure the chat has a session on agent a in workspace: the one it
// has, else the earlier one (ref.AgentSessionID, or the one it had on a previous agent
// process) through session/resume or session/load where the agent offers them, else a
// new one. Errors are *protocol.Error (credential_missing when the agent asks to sign
// in).
//
// servers are the chat's MCP servers (chat.start's mcp_servers; nil outside a turn):
// ACP gives them to a session when it is opened, so a chat whose servers changed
// reopens its session with the new ones.
//
// One call at a time opens a chat's session: the window reads a new chat's state
// (session.state) while its first turn starts, and two calls that both found no
// session would each open one, the first left open at the agent and never used. A
// session this call replaces on the same agent process is closed (session/close,
// where advertised).
func (r *Runtime) openSession(ctx context.Context, a *agentConn, ref protocol.SessionRefParams, servers []protocol.MCPServer) (*chat, openResult, error) {
	r.learnMCPSecrets(servers)
	mcpServers, skipped := mcp.ACPServers(servers, a.init.AgentCapabilities.McpCapabilities)
	if mcpServers == nil {
		mcpServers = []sdk.McpServer{}
	}
	keyJSON, _ := json.Marshal(mcpServers)
	key := string(keyJSON)
	r.mu.Lock()
	c := r.chatLocked(ref.SessionID)
	r.mu.Unlock()
	select {
	case c.opening <- struct{}{}:
		defer func() { <-c.opening }()
	case <-ctx.Done():
		return nil, openResult{skipped: skipped}, ctx.Err()
	}
	r.mu.Lock()
	if c.gen == a.gen && c.agentSID != "" && c.cwd == ref.Workspace && (ref.AgentSessionID == "" || ref.AgentSessionID == c.agentSID) &&
		(servers == nil || c.mcpKey == key) {
		r.mu.Unlock()
		return c, openResult{skipped: skipped}, nil
	}
	want := ref.AgentSessionID
	if want == "" {
		want = c.agentSID // the agent process was replaced: reopen what the chat had
	}
	r.mu.Unlock()

	caps := a.init.AgentCapabilities
	res := openResult{skipped: skipped}
	if servers == nil {
		// Outside a turn the chat's servers are not known: keep the ones it had (none
		// when it had no session: the same key as a turn's empty list, so the first
		// turn keeps the session a state read opened).
		if c.mcpKey != "" {
			mcpServers, key = nil, c.mcpKey
			_ = json.Unmarshal([]byte(key), &mcpServers)
		}
	}
	if mcpServers == nil {
		mcpServers = []sdk.McpServer{}
	}
	if want != "" {
		var err error
		switch {
		case caps.SessionCapabilities.Resume != nil:
			var resp sdk.ResumeSessionResponse
			resp, err = a.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: sdk.SessionId(want), Cwd: ref.Workspace, McpServers: mcpServers})
			if err == nil {
				r.adopt(c, a, want, ref.Workspace, func(c *chat) {
					c.applyModesLocked(resp.Modes, resp.Models)
					c.applyConfigLocked(resp.ConfigOptions)
				})
			}
		case caps.LoadSession:
			r.mu.Lock()
			r.bind(c, a, want, ref.Workspace)
			r.applyEarlyLocked(c)
			c.loading = true
			r.mu.Unlock()
			var resp sdk.LoadSessionResponse
			resp, err = a.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(want), Cwd: ref.Workspace, McpServers: mcpServers})
			r.mu.Lock()
			c.loading = false
			if err == nil {
				c.applyModesLocked(resp.Modes, resp.Models)
				c.applyConfigLocked(resp.ConfigOptions)
			} else {
				r.unbindLocked(c)
			}
			r.mu.Unlock()
		default:
			err = errors.New("the agent cannot load or resume sessions")
		}
		if err == nil {
			r.mu.Lock()
			c.mcpKey = key
			a.noteMCPLocked(mcpServers)
			r.mu.Unlock()
			r.log.Info("agent session reopened", "session_id", ref.SessionID, "how", reopenHow(caps), "mcp_servers", len(mcpServers))
			res.resumed = true
			return c, res, nil
		}
		if ctx.Err() != nil {
			return nil, res, ctx.Err()
		}
		if !a.alive() {
			return nil, res, r.deadError(a, "while reopening the chat's session")
		}
		res.resumeErr = fmt.Errorf("%s", requestMessage(err))
		r.log.Warn("agent session could not be reopened; starting a new one", "session_id", ref.SessionID, "err", res.resumeErr)
	}

	r.mu.Lock()
	replaced := ""
	if c.gen == a.gen && c.agentSID != "" {
		replaced = c.agentSID
	}
	r.mu.Unlock()
	resp, err := a.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: ref.Workspace, McpServers: mcpServers})
	if err != nil {
		if ctx.Err() != nil {
			return nil, res, ctx.Err()
		}
		if !a.alive() {
			return nil, res, r.deadError(a, "while opening a session")
		}
		return nil, res, r.requestError(a, "refused to open a session", err)
	}
	r.adopt(c, a, string(resp.SessionId), ref.Workspace, func(c *chat) {
		c.modes, c.models, c.options, c.modeConfig, c.modelConfig = nil, nil, nil, "", ""
		c.applyModesLocked(resp.Modes, resp.Models)
		c.applyConfigLocked(resp.ConfigOptions)
		c.mcpKey = key
		a.noteMCPLocked(mcpServers)
	})
	res.fresh = true
	r.log.Info("agent session opened", "session_id", ref.SessionID)
	if replaced != "" && replaced != string(resp.SessionId) && a.init.AgentCapabilities.SessionCapabilities.Close != nil {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if _, err := a.conn.CloseSession(cctx, sdk.CloseSessionRequest{SessionId: sdk.SessionId(replaced)}); err != nil {
			r.log.Debug("session/close of the replaced session failed", "err", requestMessage(err))
		}
		cancel()
	}
	return c, res, nil
}

// noteMCPLocked records servers as given to the agent process. r.mu must be held.
func (a *agentConn) noteMCPLocked(servers []sdk.McpServer) {
	for _, s := range servers {
		b, _ := json.Marshal(s)
		if a.mcpGiven == nil {
			a.mcpGiven = map[string]string{}
		}
		a.mcpGiven[string(b)] = mcpName(s)
	}
}

func mcpName(s sdk.McpServer) string {
	switch {
	case s.Stdio != nil:
		return s.Stdio.Name
	case s.Http != nil:
		return s.Http.Name
	case s.Sse != nil:
		return s.Sse.Name
	}
	return "?"
}

// dropStaleMCP makes sure agent a runs no MCP server that servers (a chat's
// chat.start mcp_servers) leave out: an ACP agent is given servers when a session is
// opened and may keep them for its whole process (OpenCode 1.18 does), so a server the
// user turned off, or whose setting changed, could still be offered to the model. When
// a gave such a server and no turn runs on it, the agent process is ended and a new
// one started (the chats' sessions are reopened through session/resume or load on
// their next turn); the new agent is returned. When another chat's turn runs on a, a
// is kept and the stale servers' names are returned, so the turn can say so. Errors
// are ensureAgent's.
func (r *Runtime) dropStaleMCP(ctx context.Context, a *agentConn, servers []protocol.MCPServer) (*agentConn, []string, error) {
	want, _ := mcp.ACPServers(servers, a.init.AgentCapabilities.McpCapabilities)
	wanted := map[string]bool{}
	for _, s := range want {
		b, _ := json.Marshal(s)
		wanted[string(b)] = true
	}
	r.mu.Lock()
	var stale []string
	for k, name := range a.mcpGiven {
		if !wanted[k] {
			stale = append(stale, name)
		}
	}
	if len(stale) == 0 {
		r.mu.Unlock()
		return a, nil, nil
	}
	slices.Sort(stale)
	stale = slices.Compact(stale)
	for _, c := range r.chats {
		if c.turn != nil && c.gen == a.gen {
			r.mu.Unlock()
			return a, stale, nil
		}
	}
	a.fail(fmt.Errorf("restarted to stop the MCP servers %s", strings.Join(stale, ", ")))
	r.mu.Unlock()
	r.log.Info("restarting the agent: it runs MCP servers this chat does not use", "servers", stale, "generation", a.gen)
	select {
	case <-a.proc.done:
	case <-time.After(5 * time.Second):
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	na, err := r.ensureAgent(ctx)
	return na, nil, err
}

func reopenHow(caps sdk.AgentCapabilities) string {
	if caps.SessionCapabilities.Resume != nil {
		return "session/resume"
	}
	return "session/load"
}

// adopt binds the chat to agent session sid and applies what the answer said.
func (r *Runtime) adopt(c *chat, a *agentConn, sid, cwd string, apply func(*chat)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bind(c, a, sid, cwd)
	apply(c)
	r.applyEarlyLocked(c)
}

// bind records that chat c is agent session sid on agent a. r.mu must be held.
func (r *Runtime) bind(c *chat, a *agentConn, sid, cwd string) {
	if c.agentSID != "" && r.byACP[c.agentSID] == c {
		delete(r.byACP, c.agentSID)
	}
	c.agentSID, c.gen, c.cwd = sid, a.gen, cwd
	r.byACP[sid] = c
}

func (r *Runtime) unbindLocked(c *chat) {
	if r.byACP[c.agentSID] == c {
		delete(r.byACP, c.agentSID)
	}
	c.gen = 0
}

// setMode, setModel and setOption change a choice of the chat's agent session,
// through the config option it comes from or ACP's own method.
func (r *Runtime) setChoice(ctx context.Context, a *agentConn, c *chat, which, optionID, value string) error {
	r.mu.Lock()
	sid := sdk.SessionId(c.agentSID)
	var picker *protocol.Picker
	configID := ""
	switch which {
	case "mode":
		picker, configID = c.modes, c.modeConfig
	case "model":
		picker, configID = c.models, c.modelConfig
	default:
		for i := range c.options {
			if c.options[i].ID == optionID {
				picker, configID = &c.options[i], optionID
			}
		}
	}
	var known bool
	if picker != nil {
		known = slices.ContainsFunc(picker.Choices, func(ch protocol.PickerChoice) bool { return ch.ID == value })
	}
	current := ""
	if picker != nil {
		current = picker.Current
	}
	r.mu.Unlock()
	if picker == nil {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, fmt.Sprintf("this agent offers no %s to choose", choiceNoun(which, optionID)))
	}
	if !known {
		return protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, fmt.Sprintf("%q is not one of the agent's choices for %s", value, picker.Name))
	}
	if current == value {
		return nil
	}
	var err error
	switch {
	case configID != "":
		var resp sdk.SetSessionConfigOptionResponse
		resp, err = a.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: sid, ConfigId: sdk.SessionConfigId(configID), Value: sdk.SessionConfigValueId(value)}})
		if err == nil {
			r.mu.Lock()
			if resp.ConfigOptions != nil {
				c.applyConfigLocked(resp.ConfigOptions)
			} else {
				picker.Current = value
			}
			r.mu.Unlock()
		}
	case which == "mode":
		_, err = a.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: sid, ModeId: sdk.SessionModeId(value)})
	case which == "model":
		_, err = a.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: sid, ModelId: sdk.UnstableModelId(value)})
	}
	if err != nil {
		if !a.alive() {
			return r.deadError(a, "while changing "+picker.Name)
		}
		return r.requestError(a, "refused to change "+picker.Name, err)
	}
	if configID == "" {
		r.mu.Lock()
		picker.Current = value
		r.mu.Unlock()
	}
	r.log.Info("agent choice changed", "session_id", c.id, "which", which, "option", optionID)
	return nil
}

func choiceNoun(which, optionID string) string {
	switch which {
	case "mode":
		return "modes"
	case "model":
		return "models"
	}
	return fmt.Sprintf("option %q", optionID)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
