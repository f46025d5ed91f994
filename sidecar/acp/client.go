package acp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/builtin/tools"
	"talaria/sidecar/protocol"
)

// client is the ACP client side one agent connection talks to: session updates,
// permission requests, fs/* and terminal/*. Everything is routed by the agent's
// session id to the chat (and its running turn).
type client struct {
	r *Runtime
	a *agentConn
}

var _ sdk.Client = (*client)(nil)

// route finds the chat of an agent session on this connection, and its running turn.
func (c *client) route(sid sdk.SessionId) (*chat, *turn) {
	c.r.mu.Lock()
	defer c.r.mu.Unlock()
	ch := c.r.byACP[string(sid)]
	if ch == nil || ch.gen != c.a.gen {
		return nil, nil
	}
	return ch, ch.turn
}

// SessionUpdate applies a session update: the chat's state (commands, mode, config
// options, title) whenever it comes, the rest to the running turn. Updates outside a
// turn, and the history session/load replays, are not frames: a change of the chat's
// state outside a turn goes to the host as a $/session_event (agent_state). A state
// update for a session not bound yet is kept until it is (Runtime.early).
func (c *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	ch, t := c.route(n.SessionId)
	u := n.Update
	if ch == nil {
		if isStateUpdate(u) && c.r.keepEarly(c.a, string(n.SessionId), u) {
			return nil
		}
		c.r.log.Debug("update for an unknown agent session dropped")
		return nil
	}
	c.r.mu.Lock()
	loading := ch.loading
	changed, title := ch.applyStateLocked(u, t == nil)
	var st protocol.AgentState
	if changed {
		st = ch.stateLocked()
	}
	chatID := ch.id
	c.r.mu.Unlock()
	if t == nil {
		if changed && !loading {
			c.r.sendSessionEvent(chatID, protocol.EvAgentState, st)
		}
		return nil
	}
	if changed {
		t.send(protocol.EvAgentState, st)
	}
	if title != "" {
		t.send(protocol.EvAgentTitle, protocol.AgentTitleData{Title: capString(title, 200)})
	}
	if loading {
		return nil
	}
	t.mu.Lock()
	t.m.handle(u)
	t.mu.Unlock()
	return nil
}

// isStateUpdate reports whether u changes the chat's state rather than a turn's
// transcript.
func isStateUpdate(u sdk.SessionUpdate) bool {
	return u.AvailableCommandsUpdate != nil || u.CurrentModeUpdate != nil || u.ConfigOptionUpdate != nil || u.SessionInfoUpdate != nil
}

// applyStateLocked applies the chat-state part of u: changed says the state the
// window shows changed; title is a title the agent gave (kept for the next turn when
// idle). r.mu must be held.
func (ch *chat) applyStateLocked(u sdk.SessionUpdate, idle bool) (changed bool, title string) {
	switch {
	case u.AvailableCommandsUpdate != nil:
		ch.setCommandsLocked(u.AvailableCommandsUpdate.AvailableCommands)
		changed = true
	case u.CurrentModeUpdate != nil:
		if ch.modes != nil && ch.modeConfig == "" {
			ch.modes.Current = string(u.CurrentModeUpdate.CurrentModeId)
			changed = true
		}
	case u.ConfigOptionUpdate != nil:
		ch.applyConfigLocked(u.ConfigOptionUpdate.ConfigOptions)
		changed = true
	case u.SessionInfoUpdate != nil:
		if u.SessionInfoUpdate.Title != nil && *u.SessionInfoUpdate.Title != "" {
			title = *u.SessionInfoUpdate.Title
			if idle {
				ch.title = title // sent with the next turn
			}
		}
	}
	return changed, title
}

// RequestPermission asks the user, through the running turn's approval card.
func (c *client) RequestPermission(ctx context.Context, req sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	_, t := c.route(req.SessionId)
	if t == nil {
		c.r.log.Info("permission asked outside a turn: cancelled")
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{Outcome: "cancelled"}}}, nil
	}
	return t.askPermission(ctx, req), nil
}

// workspace opens the workspace of an agent session's chat; the caller closes it.
func (c *client) workspace(sid sdk.SessionId) (*tools.Workspace, *turn, error) {
	ch, t := c.route(sid)
	if ch == nil {
		return nil, nil, sdk.NewInvalidParams(map[string]any{"error": "unknown session"})
	}
	c.r.mu.Lock()
	cwd, hidden := ch.cwd, ch.hidden
	c.r.mu.Unlock()
	ws, err := tools.OpenWorkspace(cwd, hidden...)
	if err != nil {
		return nil, nil, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return ws, t, nil
}

// ReadTextFile serves fs/read_text_file inside the chat's workspace, under the file
// tools' rules (no path outside it, no link leading out, no binary file). line is
// 1-based; without a limit the whole file is read, up to the file tools' 128 KiB.
func (c *client) ReadTextFile(ctx context.Context, req sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	ws, t, err := c.workspace(req.SessionId)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	defer ws.Close()
	line, limit := 1, tools.MaxReadLines
	if req.Line != nil && *req.Line > 0 {
		line = *req.Line
	}
	if req.Limit != nil && *req.Limit > 0 {
		limit = min(*req.Limit, tools.MaxReadLines)
	}
	res, err := ws.ReadFile(req.Path, line, limit)
	if err != nil {
		if t != nil && refused(err) {
			t.noteRefusal("read", req.Path, err.Error())
		}
		return sdk.ReadTextFileResponse{}, &sdk.RequestError{Code: -32002, Message: err.Error()}
	}
	if res.Truncated && (req.Limit == nil || res.EndLine-res.StartLine+1 < *req.Limit) {
		return sdk.ReadTextFileResponse{}, &sdk.RequestError{Code: -32000, Message: fmt.Sprintf(
			"%s is larger than the %d KiB read at once: read it in parts with line and limit (it has %d lines)", res.Path, tools.MaxReadBytes>>10, res.TotalLines)}
	}
	return sdk.ReadTextFileResponse{Content: res.Content}, nil
}

// WriteTextFile serves fs/write_text_file inside the chat's workspace, under the file
// tools' rules (asking first in a read-only sandbox), and shows the change as the diff
// of the tool call it belongs to.
func (c *client) WriteTextFile(ctx context.Context, req sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	ws, t, err := c.workspace(req.SessionId)
	if err != nil {
		return sdk.WriteTextFileResponse{}, err
	}
	defer ws.Close()
	if t == nil {
		return sdk.WriteTextFileResponse{}, &sdk.RequestError{Code: -32000, Message: "no turn is running in this session: files are written only while the user waits for an answer"}
	}
	if why := t.approveWrite(ctx, req.Path); why != "" {
		t.noteRefusal("write", req.Path, why)
		return sdk.WriteTextFileResponse{}, &sdk.RequestError{Code: -32000, Message: why}
	}
	res, err := ws.WriteFile(req.Path, req.Content)
	if err != nil {
		if refused(err) {
			t.noteRefusal("write", req.Path, err.Error())
		}
		return sdk.WriteTextFileResponse{}, &sdk.RequestError{Code: -32000, Message: err.Error()}
	}
	// Noted even without a change: the call it belongs to went through Talaria.
	t.mu.Lock()
	t.m.noteWrite(req.Path, res.Diff)
	t.mu.Unlock()
	return sdk.WriteTextFileResponse{}, nil
}

// refused reports whether a file tool's error is Talaria's refusal of the path (outside
// the workspace, a link leading out, a folder the agent never touches, a hard-linked
// file), not a plain failure such as a missing file.
func refused(err error) bool {
	return errors.Is(err, tools.ErrOutside) || errors.Is(err, tools.ErrHidden) || errors.Is(err, tools.ErrHardLinked)
}

// CreateTerminal serves terminal/create (see terminals.go).
func (c *client) CreateTerminal(ctx context.Context, req sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	_, t := c.route(req.SessionId)
	if t == nil {
		return sdk.CreateTerminalResponse{}, &sdk.RequestError{Code: -32000, Message: "no turn is running in this session: commands run only while the user waits for an answer"}
	}
	return t.createTerminal(ctx, req)
}

func (c *client) session(sid sdk.SessionId) (string, error) {
	ch, _ := c.route(sid)
	if ch == nil {
		return "", sdk.NewInvalidParams(map[string]any{"error": "unknown session"})
	}
	return ch.id, nil
}

// TerminalOutput serves terminal/output.
func (c *client) TerminalOutput(ctx context.Context, req sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	id, err := c.session(req.SessionId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	term, err := c.r.terms.get(id, req.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	out, truncated, exited, code, sig := term.snapshot()
	resp := sdk.TerminalOutputResponse{Output: out, Truncated: truncated}
	if exited {
		ec, s := exitStatusOf(code, sig)
		resp.ExitStatus = &sdk.TerminalExitStatus{ExitCode: ec, Signal: s}
	}
	return resp, nil
}

// WaitForTerminalExit serves terminal/wait_for_exit.
func (c *client) WaitForTerminalExit(ctx context.Context, req sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	id, err := c.session(req.SessionId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	term, err := c.r.terms.get(id, req.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-term.done:
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
	_, _, _, code, sig := term.snapshot()
	ec, s := exitStatusOf(code, sig)
	return sdk.WaitForTerminalExitResponse{ExitCode: ec, Signal: s}, nil
}

// KillTerminal serves terminal/kill: the command's process group is killed; its
// output stays readable until release.
func (c *client) KillTerminal(ctx context.Context, req sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	id, err := c.session(req.SessionId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	term, err := c.r.terms.get(id, req.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	term.proc.Kill()
	return sdk.KillTerminalResponse{}, nil
}

// ReleaseTerminal serves terminal/release: killed and forgotten.
func (c *client) ReleaseTerminal(ctx context.Context, req sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	id, err := c.session(req.SessionId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	return sdk.ReleaseTerminalResponse{}, c.r.terms.release(id, req.TerminalId)
}
