package acp

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"talaria/sidecar/protocol"
)

// maxListedSessions bounds one agent.sessions page (an agent's page size is its own:
// Hermes gives 50, OpenCode all); the rest is dropped from the page, not lost: the
// agent keeps its sessions.
const maxListedSessions = 500

// Sessions runs agent.sessions (params Workspace and Cursor; Limit is not used): one page of the agent's own sessions through ACP
// session/list, only when the agent advertises it (sessionCapabilities.list), so
// Settings can open one as a chat (the chat then reopens it through session/resume or
// session/load). p.Workspace, when set, must be an absolute path: only the sessions
// the agent ran there are listed. Errors (*protocol.Error): invalid_params for a
// relative workspace; method_not_found when the agent does not list sessions (it is
// not asked); agent_error with the agent's words; credential_missing when it asks to
// sign in; agent_unavailable when it died.
func (r *Runtime) Sessions(ctx context.Context, p protocol.AgentSessionsParams) (protocol.AgentSessionsResult, error) {
	if p.Workspace != "" && !filepath.IsAbs(p.Workspace) {
		return protocol.AgentSessionsResult{}, protocol.NewError(protocol.CodeInvalidParams, protocol.CondInvalidParams,
			fmt.Sprintf("the folder %q is not an absolute path", p.Workspace))
	}
	a, err := r.ensureAgent(ctx)
	if err != nil {
		return protocol.AgentSessionsResult{}, err
	}
	if a.init.AgentCapabilities.SessionCapabilities.List == nil {
		return protocol.AgentSessionsResult{}, protocol.NewError(protocol.CodeMethodNotFound, protocol.CondMethodNotFound,
			fmt.Sprintf("%s does not list its sessions (it does not offer ACP session/list)", a.name(r.opts.Agent)))
	}
	req := sdk.ListSessionsRequest{}
	if p.Workspace != "" {
		req.Cwd = sdk.Ptr(p.Workspace)
	}
	if p.Cursor != "" {
		req.Cursor = sdk.Ptr(p.Cursor)
	}
	resp, err := a.conn.ListSessions(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return protocol.AgentSessionsResult{}, ctx.Err()
		}
		if !a.alive() {
			return protocol.AgentSessionsResult{}, r.deadError(a, "while listing its sessions")
		}
		return protocol.AgentSessionsResult{}, r.requestError(a, "did not list its sessions", err)
	}
	out := protocol.AgentSessionsResult{Sessions: make([]protocol.AgentSessionInfo, 0, min(len(resp.Sessions), maxListedSessions)), NextCursor: deref(resp.NextCursor)}
	for _, s := range resp.Sessions {
		if len(out.Sessions) == maxListedSessions {
			break
		}
		if s.SessionId == "" {
			continue
		}
		info := protocol.AgentSessionInfo{AgentSessionID: string(s.SessionId), Workspace: s.Cwd, Title: capString(deref(s.Title), 200)}
		if t, err := time.Parse(time.RFC3339Nano, deref(s.UpdatedAt)); err == nil {
			info.UpdatedAt = t.UnixMilli()
		}
		out.Sessions = append(out.Sessions, info)
	}
	return out, nil
}
