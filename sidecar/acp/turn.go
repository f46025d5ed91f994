package acp

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
	"talaria/sidecar/server"
)

// turn is one chat.start running in a chat's agent session.
type turn struct {
	r    *Runtime
	c    *chat
	a    *agentConn
	p    protocol.ChatStartParams
	ctx  context.Context
	emit server.EmitFunc

	mu sync.Mutex // guards m: updates, permission notes and file notes
	m  *mapper

	stopped         atomic.Bool
	allow           map[string]bool // approval_allowlist
	approvalTimeout time.Duration
	policy          sandbox.Policy // the chat's sandbox, for terminal/* and fs/*

	// lastHeard is when the agent last made the turn send a frame (unix ns); waiting
	// counts the cards the user has not answered yet; warnedAt is the lastHeard the
	// silence notice was given for (one notice per silence).
	lastHeard, warnedAt atomic.Int64
	waiting             atomic.Int32
}

// send emits a frame of the turn; a frame after the reply is dropped.
func (t *turn) send(event string, data any) {
	t.lastHeard.Store(time.Now().UnixNano())
	if err := t.emit(event, data); err != nil && !errors.Is(err, server.ErrCallDone) {
		t.r.log.Warn("a frame could not be sent", "event", event, "err", err)
	}
}

// DefaultSilenceNotice is how long an ACP turn's agent may send nothing, while no
// card waits for the user and no terminal of the chat runs, before the chat says so
// (Options.SilenceNotice when 0).
const DefaultSilenceNotice = 60 * time.Second

// silenceNotice is DefaultSilenceNotice, shortened by the tests' sidecar.
var silenceNotice = DefaultSilenceNotice

// noticeSilence sends one warning when the agent has sent nothing for silence: not
// while a card waits for the user or a terminal of the chat runs a command (the agent
// waits on those), and once per silence. An agent whose model cannot be reached (no
// network, no sign-in) often says nothing at all, and the chat showed "Working…" with
// no word of why; the turn goes on (the agent may be thinking), and Stop ends it.
func (t *turn) noticeSilence(silence time.Duration) {
	heard := t.lastHeard.Load()
	if t.waiting.Load() > 0 || t.r.terms.running(t.p.SessionID) {
		t.lastHeard.Store(time.Now().UnixNano())
		return
	}
	if time.Since(time.Unix(0, heard)) < silence || t.warnedAt.Load() == heard {
		return
	}
	t.warnedAt.Store(heard)
	name := t.a.name(t.r.opts.Agent)
	// Emitted past send: the notice is no word from the agent.
	if err := t.emit(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningSilence, Message: fmt.Sprintf(
		"%s has sent nothing for %s. It may be unable to reach its model: check its model, sign-in and network in its own settings "+
			"(or its log). It may also still be thinking. Stop ends the turn.", name, silence.Round(time.Second))}); err != nil && !errors.Is(err, server.ErrCallDone) {
		t.r.log.Warn("a frame could not be sent", "event", protocol.EvWarning, "err", err)
	}
}

// noteRefusal tells the chat that Talaria refused the agent's file request (op "read"
// or "write" of path, for why): the agent only reads the refusal, and one that is not
// sandboxed may then do the same by its own means (OpenCode wrote a file itself after
// Talaria refused it, and its card said "Wrote file successfully"). The warning keeps
// Talaria's word in the chat beside what the agent reports.
func (t *turn) noteRefusal(op, path, why string) {
	name := t.a.name(t.r.opts.Agent)
	t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningRefused, Message: fmt.Sprintf(
		"Talaria refused %s's %s of %s: %s. %s is not sandboxed: it may still %s the file by its own means, which its tool card would then show.",
		name, op, path, why, name, op)})
}

// Limits of the context given to a new agent session of a chat that has history.
const (
	maxHistoryPreface = 32 << 10 // bytes of earlier messages
	maxHistoryMessage = 4 << 10  // bytes of one earlier message
)

// Chat runs chat.start: it opens (or reopens) the chat's agent session, applies the
// chosen mode and model, sends the user's message with session/prompt, streams the
// agent's updates as frames, and returns the turn's rows. Stopped ($/cancel, drain),
// it sends session/cancel, answers the agent's waiting permission requests with
// "cancelled", and returns the cancelled result once the agent confirms (or after
// CancelGrace, ending an agent that does not). Errors (*protocol.Error):
// invalid_params, agent_unavailable (the agent cannot start or died; the next turn
// starts it again), agent_incompatible, credential_missing (it asks to sign in),
// agent_error (it failed the prompt), each with data.partial and data.messages.
func (r *Runtime) Chat(ctx context.Context, p protocol.ChatStartParams, emit server.EmitFunc) (protocol.ChatResult, error) {
	// The chat's MCP secrets are known before the agent is given them, and every frame,
	// the result and an error are redacted of them and of the agent's own secrets: an
	// agent may echo them (in its answer, a tool call, an error message).
	r.learnMCPSecrets(p.MCPServers)
	res, err := r.chat(ctx, p, r.redactingEmit(emit))
	if err := r.redactJSON(&res); err != nil {
		return protocol.ChatResult{}, err
	}
	var perr *protocol.Error
	if errors.As(err, &perr) && perr != nil {
		c := *perr
		c.Message = r.redactLine(c.Message)
		if c.Data != nil {
			d := *c.Data
			d.Hint = r.redactLine(d.Hint)
			c.Data = &d
		}
		return res, &c
	}
	return res, err
}

func (r *Runtime) chat(ctx context.Context, p protocol.ChatStartParams, emit server.EmitFunc) (protocol.ChatResult, error) {
	if p.SessionID == "" {
		return protocol.ChatResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "chat.start needs a session_id")
	}
	if err := checkWorkspace(p.Workspace); err != nil {
		return protocol.ChatResult{}, err
	}
	if strings.TrimSpace(p.UserMessage) == "" && !protocol.HasImages(p.UserParts) {
		return protocol.ChatResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "chat.start needs a user_message")
	}
	if err := protocol.CheckParts(p.UserParts); err != nil {
		return protocol.ChatResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, err.Error())
	}
	policy, err := policyFor(p)
	if err != nil {
		return protocol.ChatResult{}, err
	}
	if h := policy.WorkspaceHidden(); h != "" {
		// As the built-in runtime: the agent's own tools would work in a secret store.
		return protocol.ChatResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("The workspace %s lies inside %s, which Talaria keeps from agents (secrets, the app's own data): choose another workspace in the chat header.", p.Workspace, h))
	}
	a, err := r.ensureAgent(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return cancelledResult(nil, "", r.agentName()), nil
		}
		return protocol.ChatResult{}, err
	}
	ref := protocol.SessionRefParams{SessionID: p.SessionID, Workspace: p.Workspace, AgentSessionID: p.AgentSessionID}
	servers := p.MCPServers
	if servers == nil {
		servers = []protocol.MCPServer{}
	}
	a, staleMCP, err := r.dropStaleMCP(ctx, a, servers)
	if err != nil {
		if ctx.Err() != nil {
			return cancelledResult(nil, "", r.agentName()), nil
		}
		return protocol.ChatResult{}, err
	}
	c, opened, err := r.openSession(ctx, a, ref, servers)
	if err != nil {
		if ctx.Err() != nil {
			return cancelledResult(nil, "", a.name(r.opts.Agent)), nil
		}
		return protocol.ChatResult{}, err
	}

	t := &turn{r: r, c: c, a: a, p: p, ctx: ctx, emit: emit, allow: map[string]bool{},
		approvalTimeout: time.Duration(p.ApprovalTimeoutS) * time.Second, policy: policy}
	if t.approvalTimeout <= 0 {
		t.approvalTimeout = 300 * time.Second
	}
	for _, k := range p.ApprovalAllowlist {
		t.allow[k] = true
	}
	t.m = newMapper(t.send, p.Workspace)
	t.m.termOutput = r.terms.outputOf
	t.m.selfApproved = func(tid, kind, what, command string) { r.noteSelfApproval(t, tid, kind, what, command) }
	r.mu.Lock()
	if c.turn != nil {
		r.mu.Unlock()
		return protocol.ChatResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams, "a turn is already running in this session")
	}
	c.turn = t
	c.turnCount++
	c.hidden = policy.Hides()
	sid := c.agentSID
	r.sessionLocked(p.SessionID).yolo = p.Yolo
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		if c.turn == t {
			c.turn = nil
		}
		r.mu.Unlock()
	}()

	t.send(protocol.EvAgentSession, protocol.AgentSessionData{AgentSessionID: sid})
	if opened.resumeErr != nil {
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback,
			Message: fmt.Sprintf("%s could not reopen this chat's earlier session (%v); it continues in a new session, given the chat's earlier messages as context.", a.name(r.opts.Agent), opened.resumeErr)})
	}
	if len(staleMCP) > 0 {
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback,
			Message: fmt.Sprintf("%s still runs the MCP servers %s, which this chat does not use, until it restarts (at a turn of this chat while no other chat's turn runs).", a.name(r.opts.Agent), strings.Join(staleMCP, ", "))})
	}
	if len(opened.skipped) > 0 {
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback,
			Message: fmt.Sprintf("%s cannot use the MCP servers %s (it does not take their transport); the others are given to it.", a.name(r.opts.Agent), strings.Join(opened.skipped, ", "))})
	}
	r.applyChoices(ctx, t)
	r.mu.Lock()
	state, title := c.stateLocked(), c.title
	c.title = ""
	r.mu.Unlock()
	t.send(protocol.EvAgentState, state)
	if title != "" {
		t.send(protocol.EvAgentTitle, protocol.AgentTitleData{Title: title})
	}

	prompt := []sdk.ContentBlock{}
	if opened.fresh {
		if pre := historyPreface(p.ConversationHistory); pre != "" {
			prompt = append(prompt, sdk.TextBlock(pre))
		}
	}
	blocks, dropped := promptBlocks(p, a.init.AgentCapabilities.PromptCapabilities.Image)
	prompt = append(prompt, blocks...)
	for _, why := range dropped {
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback, Message: why})
	}

	type promptResult struct {
		resp sdk.PromptResponse
		err  error
	}
	ch := make(chan promptResult, 1)
	start := time.Now()
	go func() {
		// Not ctx: a stop is session/cancel, and the agent's answer still comes.
		resp, err := a.conn.Prompt(context.Background(), sdk.PromptRequest{SessionId: sdk.SessionId(sid), Prompt: prompt})
		ch <- promptResult{resp, err}
	}()
	var res promptResult
	silence := r.opts.SilenceNotice
	if silence <= 0 {
		silence = silenceNotice
	}
	t.lastHeard.Store(time.Now().UnixNano())
	tick := time.NewTicker(min(silence/4, 5*time.Second))
	defer tick.Stop()
wait:
	for {
		select {
		case <-tick.C:
			t.noticeSilence(silence)
		case res = <-ch:
			break wait
		case <-ctx.Done():
			t.stopped.Store(true)
			r.log.Info("turn stopped; cancelling at the agent", "session_id", p.SessionID)
			if err := a.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: sdk.SessionId(sid)}); err != nil {
				r.log.Debug("session/cancel failed", "err", err)
			}
			r.releaseTurn(t)
			r.terms.killSession(p.SessionID)
			select {
			case res = <-ch:
			case <-time.After(r.opts.CancelGrace):
				r.log.Warn("the agent did not confirm the stop; ending it", "grace", r.opts.CancelGrace)
				a.fail(fmt.Errorf("the agent did not stop within %s of session/cancel", r.opts.CancelGrace))
				res = <-ch
			}
			break wait
		}
	}
	r.releaseTurn(t) // anything the agent left waiting

	t.mu.Lock()
	defer t.mu.Unlock()
	cancelled := t.stopped.Load() || (res.err == nil && res.resp.StopReason == sdk.StopReasonCancelled)
	rows, final := t.m.finish(cancelled)
	usage := t.m.usage
	if u := res.resp.Usage; u != nil {
		usage.InputTokens, usage.OutputTokens = int64(u.InputTokens), int64(u.OutputTokens)
		if u.CachedReadTokens != nil {
			usage.CacheReadTokens = int64(*u.CachedReadTokens)
		}
		if u.CachedWriteTokens != nil {
			usage.CacheWriteTokens = int64(*u.CachedWriteTokens)
		}
	}
	name := a.name(r.opts.Agent)
	result := protocol.ChatResult{Status: protocol.StatusCompleted, Messages: rows, FinalResponse: final, Usage: usage,
		Context: t.m.context, Model: r.currentModel(c), Provider: name, AgentSessionID: sid}
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case cancelled:
		r.log.Info("turn cancelled", "session_id", p.SessionID, "took", took)
		return cancelledResult(rows, final, name, withUsage(usage, t.m.context, result.Model, sid)), nil
	case res.err != nil:
		var perr *protocol.Error
		if !a.alive() {
			perr = r.deadError(a, "during the turn")
		} else {
			perr = r.requestError(a, "failed the turn", res.err)
		}
		perr.Data.Partial = final
		perr.Data.Messages = rows
		r.log.Warn("turn failed", "session_id", p.SessionID, "condition", perr.Condition(), "took", took)
		return protocol.ChatResult{}, perr
	}
	if usage != (protocol.Usage{}) {
		t.send(protocol.EvUsage, usage)
	}
	switch res.resp.StopReason {
	case sdk.StopReasonMaxTokens:
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback, Message: "The model reached its output limit; the answer may be cut short."})
	case sdk.StopReasonMaxTurnRequests:
		result.ToolLimitReached = true
	case sdk.StopReasonRefusal:
		t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback, Message: name + " refused to go on with this request."})
	}
	r.log.Info("turn done", "session_id", p.SessionID, "stop_reason", string(res.resp.StopReason), "rows", len(rows), "took", took)
	return result, nil
}

type resultExtra struct {
	usage   protocol.Usage
	context protocol.ContextInfo
	model   string
	sid     string
}

func withUsage(u protocol.Usage, c protocol.ContextInfo, model, sid string) resultExtra {
	return resultExtra{u, c, model, sid}
}

// cancelledResult is the result of a stopped turn (docs/protocol.md, "Cancelled
// result"): the rows so far, the last assistant row marked partial.
func cancelledResult(rows []protocol.ChatMessage, final, provider string, extra ...resultExtra) protocol.ChatResult {
	if rows == nil {
		rows = []protocol.ChatMessage{}
	}
	res := protocol.ChatResult{Status: protocol.StatusCancelled, Partial: true, Messages: rows, FinalResponse: final, Provider: provider}
	if len(extra) > 0 {
		res.Usage, res.Context, res.Model, res.AgentSessionID = extra[0].usage, extra[0].context, extra[0].model, extra[0].sid
	}
	return res
}

// applyChoices sets the mode and model the user chose for the chat, when the agent
// offers them and the session has another; a refusal is a warning, not a failure.
func (r *Runtime) applyChoices(ctx context.Context, t *turn) {
	for _, ch := range []struct{ which, value string }{{"mode", t.p.AgentMode}, {"model", t.p.AgentModel}} {
		if ch.value == "" {
			continue
		}
		r.mu.Lock()
		picker := t.c.modes
		if ch.which == "model" {
			picker = t.c.models
		}
		skip := picker == nil || picker.Current == ch.value
		r.mu.Unlock()
		if skip {
			continue
		}
		if err := r.setChoice(ctx, t.a, t.c, ch.which, "", ch.value); err != nil {
			t.send(protocol.EvWarning, protocol.WarningData{Type: protocol.WarningFallback,
				Message: fmt.Sprintf("The chat's %s could not be set: %v", ch.which, err)})
		}
	}
}

// currentModel is the model the chat's agent session uses, as the picker names it.
func (r *Runtime) currentModel(c *chat) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if c.models == nil {
		return ""
	}
	for _, ch := range c.models.Choices {
		if ch.ID == c.models.Current {
			return ch.Name
		}
	}
	return c.models.Current
}

func (r *Runtime) agentName() string {
	r.mu.Lock()
	a := r.agent
	r.mu.Unlock()
	return a.name(r.opts.Agent)
}

// sessionLocked returns a session's memory, creating it. r.mu must be held.
func (r *Runtime) sessionLocked(id string) *memory {
	m := r.sessions[id]
	if m == nil {
		m = &memory{grants: map[string]bool{}}
		r.sessions[id] = m
	}
	return m
}

// promptBlocks turns the user's message into ACP content blocks: its text, and its
// images as image blocks when the agent takes images (promptCapabilities.image). An
// image it cannot be given (the agent takes none, the file is gone, a web URL) is left
// out, and dropped says so, for a warning.
func promptBlocks(p protocol.ChatStartParams, images bool) (blocks []sdk.ContentBlock, dropped []string) {
	if len(p.UserParts) == 0 {
		return []sdk.ContentBlock{sdk.TextBlock(p.UserMessage)}, nil
	}
	for i, part := range p.UserParts {
		name := fmt.Sprintf("image %d", i+1)
		switch part.Type {
		case protocol.PartText:
			if part.Text != "" {
				blocks = append(blocks, sdk.TextBlock(part.Text))
			}
			continue
		case protocol.PartImageFile:
			if part.ImageFile.Name != "" {
				name = part.ImageFile.Name
			}
		}
		if !images {
			dropped = append(dropped, fmt.Sprintf("This agent does not take images: %s was not sent to it.", name))
			continue
		}
		switch part.Type {
		case protocol.PartImageFile:
			data, err := protocol.ReadImageFile(part.ImageFile)
			if err != nil {
				dropped = append(dropped, fmt.Sprintf("%s was not sent to the agent: %v.", name, err))
				continue
			}
			blocks = append(blocks, sdk.ImageBlock(base64.StdEncoding.EncodeToString(data), part.ImageFile.MIMEType))
		case protocol.PartImageURL:
			mime, data, ok := dataURL(part.ImageURL.URL)
			if !ok {
				dropped = append(dropped, fmt.Sprintf("%s is a web address, not an attached image: it was not sent to the agent.", name))
				continue
			}
			blocks = append(blocks, sdk.ImageBlock(data, mime))
		}
	}
	if len(blocks) == 0 {
		blocks = append(blocks, sdk.TextBlock(p.UserMessage))
	}
	return blocks, dropped
}

// dataURL reads a base64 data: URL of an image (data:image/png;base64,...).
func dataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	head, payload, found := strings.Cut(rest, ",")
	mime, isB64 := strings.CutSuffix(head, ";base64")
	if !found || !isB64 || !strings.HasPrefix(mime, "image/") {
		return "", "", false
	}
	return mime, payload, true
}

// policyFor is the sandbox policy of a chat.start: its sandbox param over the
// workspace (workspace-write without network when absent), as the built-in runtime
// reads it. Errors: invalid_params for an unknown mode or a relative path.
func policyFor(p protocol.ChatStartParams) (sandbox.Policy, error) {
	pol := sandbox.Policy{Mode: sandbox.DefaultMode, Workspace: p.Workspace}
	if sp := p.Sandbox; sp != nil {
		if sp.Mode != "" {
			pol.Mode = sandbox.Mode(sp.Mode)
		}
		pol.Network, pol.Writable, pol.Hidden = sp.Network, sp.WritablePaths, sp.HiddenPaths
	}
	if !pol.Mode.Valid() {
		return pol, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("sandbox.mode must be read-only, workspace-write or full-access, not %q", preview([]byte(pol.Mode))))
	}
	for _, list := range [][]string{pol.Writable, pol.Hidden} {
		for _, x := range list {
			if !filepath.IsAbs(x) {
				return pol, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
					fmt.Sprintf("sandbox paths must be absolute, not %q", preview([]byte(x))))
			}
		}
	}
	return pol, nil
}

// historyPreface is the text that tells a new agent session what the chat said
// before it: the latest user and assistant messages that fit maxHistoryPreface.
func historyPreface(history []protocol.ChatMessage) string {
	var parts []string
	size := 0
	for i := len(history) - 1; i >= 0; i-- {
		m := history[i]
		if (m.Role != "user" && m.Role != "assistant") || strings.TrimSpace(m.Content) == "" || m.Partial {
			continue
		}
		text := capString(strings.TrimSpace(m.Content), maxHistoryMessage)
		part := fmt.Sprintf("[%s]\n%s", m.Role, text)
		if size+len(part) > maxHistoryPreface {
			break
		}
		size += len(part) + 2
		parts = append([]string{part}, parts...)
	}
	if len(parts) == 0 {
		return ""
	}
	return "This conversation started before this session. For context, its earlier messages were:\n\n" +
		strings.Join(parts, "\n\n") + "\n\n(End of the earlier messages. The user's new message follows.)"
}
