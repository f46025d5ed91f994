package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/mcp"
	"talaria/sidecar/protocol"
	"talaria/sidecar/sandbox"
	"talaria/sidecar/server"
)

// Defaults of chat.start's limits.
const (
	DefaultMaxIterations   = 30
	DefaultApprovalTimeout = 300 * time.Second
	DefaultClarifyTimeout  = 3600 * time.Second
)

// Chat runs chat.start: the agent loop for one user message. It offers the tools
// (enabled_toolsets), streams token, reasoning and usage frames, runs the model's tool
// calls between tool and tool_complete frames (approval, clarify and vault prompts
// included) and calls the model again, until it answers without calling a tool or
// max_iterations model calls were made. Before each model call it takes the steers
// queued by chat.steer (steer.go); a model call that fails with 429, 5xx or a reset
// before any answer is retried (retry.go).
//
// Result: status completed, messages = every assistant row (with its tool_calls), tool
// row and taken steer (a user row) of the turn in order, final_response = the last
// assistant text; with tool_limit_reached when the iteration limit stopped the loop,
// and pending_steer = the steers never taken. When ctx is cancelled (by $/cancel or
// the drain): status cancelled with partial true, the rows so far plus the visible text
// of the step that was streaming (a row marked partial). Errors (never both a result
// and an error): a *protocol.Error with code -32602 invalid_params for a missing model
// or base URL, or code -32000 with a provider condition (see endpoint.httpError,
// networkError), with data.partial, data.messages and data.pending_steer.
func (r *Runtime) Chat(ctx context.Context, p protocol.ChatStartParams, emit server.EmitFunc) (protocol.ChatResult, error) {
	ep, err := newEndpoint(p.Model, p.Provider)
	if err != nil {
		return protocol.ChatResult{}, err
	}
	if err := checkOptions(p); err != nil {
		return protocol.ChatResult{}, err
	}
	ep.images = hasImages(p)
	pol, err := policyFor(p)
	if err != nil {
		return protocol.ChatResult{}, err
	}
	// Known from now on: redacted from every output, frame and row of any session.
	r.learnChatSecrets(p.Provider.APIKey, p.Redaction)
	t := &turn{
		r:               r,
		ep:              ep,
		p:               p,
		emit:            emit,
		log:             r.log.With("session_id", p.SessionID, "stream_id", p.StreamID, "provider", ep.name, "model", ep.model),
		offered:         offeredTools(p.EnabledToolsets),
		allow:           map[string]bool{},
		maxIter:         p.MaxIterations,
		approvalTimeout: time.Duration(p.ApprovalTimeoutS) * time.Second,
		clarifyTimeout:  time.Duration(p.ClarifyTimeoutS) * time.Second,
		tids:            map[string]bool{},
		policy:          pol,
	}
	if t.maxIter <= 0 {
		t.maxIter = DefaultMaxIterations
	}
	if t.approvalTimeout <= 0 {
		t.approvalTimeout = DefaultApprovalTimeout
	}
	if t.clarifyTimeout <= 0 {
		t.clarifyTimeout = DefaultClarifyTimeout
	}
	for _, k := range p.ApprovalAllowlist {
		t.allow[k] = true
	}
	// Steerable from now until the result is built; sealSteers also unregisters.
	r.register(t)
	defer t.sealSteers()
	// The host's stored YOLO flag for the session comes with every turn.
	r.mu.Lock()
	r.sessionLocked(p.SessionID).yolo = p.Yolo
	r.mu.Unlock()
	defer func() {
		if t.ws != nil {
			t.ws.Close()
		}
	}()

	if err := t.startMCP(ctx); err != nil {
		// Stopped while the MCP servers started: nothing was said yet.
		res := t.cancelled(&step{})
		res.PendingSteer = t.sealSteers()
		return t.redactResult(res), nil
	}
	if t.messages, err = buildMessages(p, len(t.offered) > 0 || len(t.mcpOrder) > 0); err != nil {
		return protocol.ChatResult{}, err
	}
	t.tools = append(toolsJSON(t.offered), t.mcpToolsJSON()...)
	start := time.Now()
	t.log.Info("turn started", "base_url", ep.baseURL, "history", len(p.ConversationHistory), "tools", len(t.offered)+len(t.mcpOrder), "yolo", p.Yolo)
	res, err := t.run(ctx)
	left := t.sealSteers()
	if err != nil {
		t.log.Info("turn failed", "condition", conditionOf(err), "pending_steer", len(left), "took", time.Since(start).Round(time.Millisecond))
		var rpcErr *protocol.Error
		if errors.As(err, &rpcErr) && rpcErr.Data != nil && len(left) > 0 {
			rpcErr.Data.PendingSteer = left
		}
		return protocol.ChatResult{}, t.redactError(err)
	}
	res.PendingSteer = left
	t.log.Info("turn ended", "status", res.Status, "steps", t.steps, "tool_calls", t.calls, "tool_limit_reached", res.ToolLimitReached, "pending_steer", len(left),
		"input_tokens", res.Usage.InputTokens, "output_tokens", res.Usage.OutputTokens, "took", time.Since(start).Round(time.Millisecond))
	return t.redactResult(res), nil
}

// buildMessages is what the provider gets: the system prompt (system_message, then the
// ephemeral_system_prompt, then with tools a line naming the workspace, joined by a
// blank line), the history, the user message. Rows and the user message with content
// parts are sent as parts (image files read, see wireContent). Errors: invalid_params
// when an attached image cannot be read.
func buildMessages(p protocol.ChatStartParams, withTools bool) ([]wireMessage, error) {
	msgs := make([]wireMessage, 0, len(p.ConversationHistory)+2)
	var sys []string
	for _, s := range []string{p.SystemMessage, p.EphemeralSystemPrompt} {
		if strings.TrimSpace(s) != "" {
			sys = append(sys, s)
		}
	}
	if withTools && strings.TrimSpace(p.Workspace) != "" {
		sys = append(sys, "The workspace folder is "+p.Workspace+": relative paths of the file tools and the terminal's working directory are there.")
		if pol, err := policyFor(p); err == nil {
			if pol.Confined() {
				can := "they cannot write outside the workspace and /tmp"
				if pol.Mode == sandbox.ModeReadOnly {
					can = "they cannot write anything but /tmp (file tools ask before writing)"
				}
				if !pol.Network {
					can += " or reach the network"
				}
				sys = append(sys, "Commands run in a sandbox ("+pol.String()+"): "+can+", and secret stores like ~/.ssh are hidden. "+
					"Use the terminal's escalate argument when a command truly needs more; the user is asked.")
			} else {
				sys = append(sys, "This chat has full access: commands run outside the sandbox.")
			}
		}
	}
	if len(sys) > 0 {
		msgs = append(msgs, wireMessage{Role: "system", Content: strings.Join(sys, "\n\n")})
	}
	for _, m := range p.ConversationHistory {
		if m.Role == "" {
			continue
		}
		w := toWire(m)
		if len(m.Parts) > 0 {
			c, err := wireContent(m.Content, m.Parts)
			if err != nil {
				return nil, err
			}
			w.Content = c
		}
		msgs = append(msgs, w)
	}
	user, err := wireContent(p.UserMessage, p.UserParts)
	if err != nil {
		return nil, err
	}
	return append(msgs, wireMessage{Role: "user", Content: user}), nil
}

// hasImages reports whether chat.start carries an image anywhere (the user message or
// the history).
func hasImages(p protocol.ChatStartParams) bool {
	if protocol.HasImages(p.UserParts) {
		return true
	}
	for _, m := range p.ConversationHistory {
		if protocol.HasImages(m.Parts) {
			return true
		}
	}
	return false
}

// policyFor is the sandbox policy of a chat.start: its sandbox param over the
// workspace (workspace-write without network when absent). Errors: invalid_params for
// an unknown mode or a path that is not absolute.
func policyFor(p protocol.ChatStartParams) (sandbox.Policy, error) {
	pol := sandbox.Policy{Mode: sandbox.DefaultMode, Workspace: p.Workspace}
	if sp := p.Sandbox; sp != nil {
		if sp.Mode != "" {
			pol.Mode = sandbox.Mode(sp.Mode)
		}
		pol.Network = sp.Network
		pol.Writable = sp.WritablePaths
		pol.Hidden = sp.HiddenPaths
	}
	if !pol.Mode.Valid() {
		return pol, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("sandbox.mode must be read-only, workspace-write or full-access, not %q", trimForMessage(string(pol.Mode))))
	}
	for _, list := range [][]string{pol.Writable, pol.Hidden} {
		for _, x := range list {
			if !filepath.IsAbs(x) {
				return pol, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
					fmt.Sprintf("sandbox paths must be absolute, not %q", trimForMessage(x)))
			}
		}
	}
	// A workspace inside what the sandbox hides (a secret store such as ~/.ssh, the
	// app's data folder) is refused before anything runs.
	if h := pol.WorkspaceHidden(); h != "" {
		return pol, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("the workspace %s lies inside %s, which the sandbox keeps from the agent (secrets, the app's own data): choose another workspace in the chat header", trimForMessage(p.Workspace), h))
	}
	return pol, nil
}

// turn is the state of one chat.start.
type turn struct {
	r *Runtime
	// policy confines the turn's commands and file tools.
	policy sandbox.Policy
	// callID is the tool call running now (calls run one after another).
	callID string
	ep     *endpoint
	p      protocol.ChatStartParams
	emit   server.EmitFunc
	log    *slog.Logger

	offered         map[string]bool // tool names offered to the model
	tools           []json.RawMessage
	allow           map[string]bool // approval_allowlist
	maxIter         int
	approvalTimeout time.Duration
	clarifyTimeout  time.Duration
	ws              *tools.Workspace // opened by the first tool that needs it
	wsErr           error
	// The MCP tools offered (mcptools.go): by offered name, in order, and where the
	// turn's stdio servers run.
	mcpTools map[string]*mcpTool
	mcpOrder []string
	mcpScope mcp.Scope

	messages []wireMessage          // sent to the provider; grows with each step
	rows     []protocol.ChatMessage // the turn's finished rows: assistant calls, tool results, taken steers, the answer
	lastText string                 // the last non-empty assistant text
	tids     map[string]bool        // tool call ids used in this turn
	usage    protocol.Usage         // summed over finished steps and sampling requests (usageMu)
	usageMu  sync.Mutex             // guards usage against sampling during tool calls
	// autoSamples counts the sampling requests a grant or YOLO let through in this
	// turn (mcp_sampling.go's budget).
	autoSamples atomic.Int32
	lastIn      int64 // prompt tokens of the last step
	lastOut     int64 // completion tokens of the last step
	steps       int   // model calls made (a call restarted for a steer does not count)
	calls       int
	steer       steerQueue  // steers queued by chat.steer (steer.go)
	emitErr     atomic.Bool // a frame failed to send (logged once); frames come from steering calls too
}

// step is one streamed completion.
type step struct {
	content   strings.Builder
	reasoning strings.Builder
	tools     toolAccumulator
	finish    string
	usage     protocol.Usage
	hasUsage  bool
	done      bool // [DONE] seen
	streamed  bool // a delta of the answer arrived (text, reasoning or a tool call): no retry
	think     thinkSplit
}

func (t *turn) run(ctx context.Context) (protocol.ChatResult, error) {
	for {
		t.steps++
		s := &step{}
		restarted, err := t.modelCall(ctx, s)
		if s.hasUsage {
			t.usageMu.Lock()
			t.usage = t.usage.Add(s.usage)
			t.usageMu.Unlock()
			t.lastIn, t.lastOut = s.usage.InputTokens, s.usage.OutputTokens
		}
		if (err != nil || restarted) && ctx.Err() != nil {
			return t.cancelled(s), nil
		}
		if restarted {
			// chat.steer_now abandoned the call: keep what it said and call again; the
			// steer is taken at the start of that call.
			t.steps--
			t.keepAbandoned(s, err)
			continue
		}
		if err != nil {
			return protocol.ChatResult{}, t.failed(s, err)
		}
		text := s.content.String()
		if text != "" {
			t.lastText = text
		}
		if reason := truncatedReason(s.finish); reason != "" {
			// Cut: the answer so far is the turn's last row; tool calls it was still
			// writing are dropped (their arguments may be cut too), never run.
			return t.truncated(s, reason), nil
		}
		calls := s.tools.result()
		if len(calls) > 0 && len(t.offered) == 0 && len(t.mcpOrder) == 0 {
			t.log.Warn("the model asked for tools, but none are offered; ending the turn", "calls", len(calls))
			calls = nil
		}
		if len(calls) == 0 {
			t.rows = append(t.rows, protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: s.reasoning.String()})
			return t.result(protocol.StatusCompleted, t.lastText), nil
		}
		for i := range calls {
			calls[i].ID = t.uniqueTID(calls[i].ID)
		}
		row := protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: s.reasoning.String(), ToolCalls: calls}
		t.rows = append(t.rows, row)
		t.messages = append(t.messages, toWire(row))

		if t.steps >= t.maxIter {
			// The limit: the calls of this last step are answered without running them, so
			// the history stays well formed for the next turn.
			msg := fmt.Sprintf("not run: this turn reached its limit of %d model calls (max_iterations)", t.maxIter)
			for _, c := range calls {
				t.addToolRow(protocol.ChatMessage{Role: "tool", ToolCallID: c.ID, Name: c.Function.Name, Content: mustJSON(map[string]any{"error": msg})})
			}
			t.log.Info("tool limit reached", "max_iterations", t.maxIter)
			res := t.result(protocol.StatusCompleted, t.lastText)
			res.ToolLimitReached = true
			return res, nil
		}
		for i, c := range calls {
			if ctx.Err() != nil {
				for _, rest := range calls[i:] {
					t.addToolRow(protocol.ChatMessage{Role: "tool", ToolCallID: rest.ID, Name: rest.Function.Name,
						Content: mustJSON(map[string]any{"error": "not run: the turn was stopped"})})
				}
				break
			}
			t.calls++
			t.addToolRow(t.runCall(ctx, c))
		}
		if ctx.Err() != nil {
			return t.cancelled(&step{}), nil
		}
	}
}

// modelCall makes one model call into s: before each HTTP attempt it takes the queued
// steers, and it retries a failed attempt when planRetry allows. restarted reports that
// chat.steer_now abandoned the call (err is then the attempt's, if any).
func (t *turn) modelCall(ctx context.Context, s *step) (restarted bool, err error) {
	for retries := 0; ; retries++ {
		*s = step{}
		callCtx, cancel := context.WithCancelCause(ctx)
		for _, it := range t.beginCall(cancel) {
			row := protocol.ChatMessage{Role: "user", Content: it.Text}
			t.rows = append(t.rows, row)
			t.messages = append(t.messages, toWire(row))
		}
		err = t.stream(callCtx, s)
		t.endContent(s)
		cancel(nil)
		if t.endCall() {
			return true, err
		}
		if err == nil || ctx.Err() != nil {
			return false, err
		}
		if s.streamed {
			return false, err // never after the answer began: the error carries the partial
		}
		plan, ok := planRetry(err, retries, t.r.retryDelays, t.r.maxRetryWait, time.Now())
		if !ok {
			return false, t.gaveUp(err, plan, retries)
		}
		if !t.retryWait(ctx, err, plan, retries+1) {
			return false, ctx.Err()
		}
	}
}

// keepAbandoned keeps what a model call restarted by chat.steer_now said: its text as
// an assistant row (partial unless the answer had finished without tool calls; tool
// calls of an abandoned call are dropped, never run), sent to the model with the next
// call. Reasoning alone is kept for display only.
func (t *turn) keepAbandoned(s *step, err error) {
	text := s.content.String()
	calls := s.tools.result()
	if text == "" && s.reasoning.Len() == 0 {
		t.log.Info("model call restarted for a steer", "partial_chars", 0)
		return
	}
	row := protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: s.reasoning.String(), Partial: err != nil || len(calls) > 0 || !(s.done || s.finish != "")}
	t.rows = append(t.rows, row)
	if text != "" {
		t.messages = append(t.messages, toWire(protocol.ChatMessage{Role: "assistant", Content: text}))
		t.lastText = text
	}
	t.log.Info("model call restarted for a steer", "partial_chars", len(text), "dropped_tool_calls", len(calls))
}

// uniqueTID keeps tool call ids unique within the turn (some servers number calls
// per response, call_0 every time).
func (t *turn) uniqueTID(id string) string {
	out := id
	for n := 2; t.tids[out]; n++ {
		out = fmt.Sprintf("%s_%d", id, n)
	}
	t.tids[out] = true
	return out
}

func (t *turn) addToolRow(row protocol.ChatMessage) {
	t.rows = append(t.rows, row)
	t.messages = append(t.messages, toWire(row))
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (t *turn) result(status, final string) protocol.ChatResult {
	rows := t.rows
	if rows == nil {
		rows = []protocol.ChatMessage{}
	}
	t.usageMu.Lock()
	defer t.usageMu.Unlock()
	return protocol.ChatResult{
		Status:        status,
		Messages:      rows,
		FinalResponse: final,
		Usage:         t.usage,
		Context:       protocol.ContextInfo{LastPromptTokens: t.lastIn, LastOutputTokens: t.lastOut},
		Model:         t.ep.model,
		Provider:      t.ep.name,
	}
}

// truncated ends the turn after a step whose answer was cut (finish reason length or
// content_filter): a truncated frame, the step's text as the last row, and the
// result's truncated set.
func (t *turn) truncated(s *step, reason string) protocol.ChatResult {
	msg := "The answer was cut off: the model reached its output limit. Continue asks it to go on; a higher max output tokens (chat settings) gives it more room."
	if reason == protocol.TruncatedContentFilter {
		msg = "The provider's content filter stopped the answer. Rephrase the request, or Continue to ask again."
	}
	t.send(protocol.EvTruncated, protocol.TruncatedData{Reason: reason, Message: msg})
	text := s.content.String()
	if text != "" {
		t.lastText = text
	}
	t.rows = append(t.rows, protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: s.reasoning.String()})
	t.log.Info("answer truncated", "reason", reason, "finish_reason", s.finish, "chars", len(text), "dropped_tool_calls", len(s.tools.calls))
	res := t.result(protocol.StatusCompleted, t.lastText)
	res.Truncated = reason
	return res
}

// cancelled is the result of a cancelled turn: the rows so far and the visible text
// the step being streamed had so far.
func (t *turn) cancelled(s *step) protocol.ChatResult {
	text := s.content.String()
	if text != "" {
		t.rows = append(t.rows, protocol.ChatMessage{Role: "assistant", Content: text, Reasoning: s.reasoning.String(), Partial: true})
		t.lastText = text
	}
	res := t.result(protocol.StatusCancelled, t.lastText)
	res.Partial = true
	t.log.Info("turn cancelled", "partial_chars", len(text), "rows", len(t.rows))
	return res
}

// redactResult replaces known secret values in every text of a result.
func (t *turn) redactResult(res protocol.ChatResult) protocol.ChatResult {
	red := t.r.redactor()
	if red.Empty() {
		return res
	}
	res.FinalResponse = red.String(res.FinalResponse)
	res.Messages = redactRows(res.Messages, red)
	res.PendingSteer = redactSteers(res.PendingSteer, red)
	return res
}

func (t *turn) redactError(err error) error {
	red := t.r.redactor()
	var rpcErr *protocol.Error
	if red.Empty() || !errors.As(err, &rpcErr) {
		return err
	}
	rpcErr.Message = red.String(rpcErr.Message)
	if rpcErr.Data != nil {
		rpcErr.Data.Partial = red.String(rpcErr.Data.Partial)
		rpcErr.Data.Messages = redactRows(rpcErr.Data.Messages, red)
		rpcErr.Data.PendingSteer = redactSteers(rpcErr.Data.PendingSteer, red)
	}
	return rpcErr
}

func redactSteers(items []protocol.SteerItem, red *tools.Redactor) []protocol.SteerItem {
	if items == nil {
		return nil
	}
	out := make([]protocol.SteerItem, len(items))
	for i, it := range items {
		out[i] = protocol.SteerItem{SteerID: it.SteerID, Text: red.String(it.Text)}
	}
	return out
}

func redactRows(rows []protocol.ChatMessage, red *tools.Redactor) []protocol.ChatMessage {
	out := make([]protocol.ChatMessage, len(rows))
	for i, m := range rows {
		m.Content = red.String(m.Content)
		m.Reasoning = red.String(m.Reasoning)
		if len(m.ToolCalls) > 0 {
			calls := make([]protocol.ToolCall, len(m.ToolCalls))
			for j, c := range m.ToolCalls {
				c.Function.Arguments = red.String(c.Function.Arguments)
				calls[j] = c
			}
			m.ToolCalls = calls
		}
		out[i] = m
	}
	return out
}

// failed decorates a step's error with the partial text and the finished rows.
func (t *turn) failed(s *step, err error) error {
	var rpcErr *protocol.Error
	if !errors.As(err, &rpcErr) {
		rpcErr = t.ep.failure(protocol.CondProviderError, fmt.Sprintf("%s: %v", t.ep.name, err))
	}
	if rpcErr.Data == nil {
		rpcErr.Data = &protocol.ErrorData{Condition: protocol.CondProviderError}
	}
	rpcErr.Data.Partial = s.content.String()
	rpcErr.Data.Messages = t.rows
	return rpcErr
}

// send emits a frame with every known secret value redacted from its strings. A write
// failure means the host is gone; the drain that follows cancels the turn, so it is
// logged once and otherwise ignored.
func (t *turn) send(event string, data any) {
	if red := t.r.redactor(); !red.Empty() {
		data = cleanJSON(data, red, 0)
	}
	if err := t.emit(event, data); err != nil && t.emitErr.CompareAndSwap(false, true) {
		t.log.Warn("sending a frame failed", "event", event, "err", err)
	}
}
