package backend

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"talaria/backend/core"
	"talaria/backend/store"
	"talaria/backend/turn"
	"talaria/sidecar/protocol"
)

// An ACP agent's account and its own sessions: the window's sign-in card (ACP
// authenticate), Settings' "Sign out" (ACP logout) and the agent's earlier sessions
// (ACP session/list) opened as chats. docs/protocol.md, "The ACP runtime", has the
// sidecar's side (agent.authenticate, agent.logout, agent.sessions).

// acpCall calls method on runtime id's ("acp:<agent>") sidecar, started when needed.
// Errors: *NotACPError; *core.RuntimeUnavailableError; the sidecar's.
func (s *Service) acpCall(ctx context.Context, runtimeID, method string, params, out any) error {
	runtimeID = core.CanonicalRuntime(runtimeID)
	if core.AgentKind(runtimeID) != protocol.RuntimeACP {
		return &NotACPError{Runtime: runtimeID}
	}
	sup, _, err := s.core.SupervisorFor(ctx, runtimeID)
	if err != nil {
		return err
	}
	return sup.Call(ctx, method, params, nil, out)
}

// ACPAuthenticate signs in to runtime id's agent with methodID, one of the
// auth_methods of its ACPAgentInfo (ACP authenticate); the window then sends the
// failed message again. Errors: *NotACPError; invalid_params for a method the agent
// did not offer; credential_missing when the agent refuses (a *protocol.Error).
func (area *ACPArea) ACPAuthenticate(ctx context.Context, runtimeID, methodID string) error {
	s := area.s
	if strings.TrimSpace(methodID) == "" {
		return &InvalidAnswerError{Message: "choose one of the agent's ways to sign in"}
	}
	return s.acpCall(ctx, runtimeID, protocol.MethodAgentAuthenticate, protocol.AuthenticateParams{MethodID: methodID}, nil)
}

// ACPLogout signs out of runtime id's agent (ACP logout), offered only when its
// ACPAgentInfo says capabilities.logout. Errors: *NotACPError; method_not_found when
// the agent does not offer it; the agent's refusal (a *protocol.Error).
func (area *ACPArea) ACPLogout(ctx context.Context, runtimeID string) error {
	s := area.s
	return s.acpCall(ctx, runtimeID, protocol.MethodAgentLogout, struct{}{}, nil)
}

// ACPSessionsLimit is the most sessions ACPSessions lists (pages of the agent's
// session/list are read until then).
const ACPSessionsLimit = 500

// ACPSession is one row of an ACP agent's "Earlier sessions" list.
type ACPSession struct {
	protocol.AgentSessionInfo
	// TalariaSessionID is the chat already bound to it ("" when none).
	TalariaSessionID string `json:"talaria_session_id"`
}

// ACPSessions lists runtime id's agent's own sessions (ACP session/list, in the
// agent's order), at most ACPSessionsLimit, each with the Talaria chat bound to it
// when there is one. Errors: *NotACPError; method_not_found when the agent does not
// list sessions (ACPAgentInfo's capabilities.list_sessions); the agent's.
func (area *ACPArea) ACPSessions(ctx context.Context, runtimeID string) ([]ACPSession, error) {
	s := area.s
	runtimeID = core.CanonicalRuntime(runtimeID)
	var all []protocol.AgentSessionInfo
	cursor := ""
	for pages := 0; pages < 20 && len(all) < ACPSessionsLimit; pages++ {
		var res protocol.AgentSessionsResult
		if err := s.acpCall(ctx, runtimeID, protocol.MethodAgentSessions, protocol.AgentSessionsParams{Cursor: cursor}, &res); err != nil {
			return nil, err
		}
		all = append(all, res.Sessions...)
		if res.NextCursor == "" || res.NextCursor == cursor {
			break
		}
		cursor = res.NextCursor
	}
	if len(all) > ACPSessionsLimit {
		all = all[:ACPSessionsLimit]
	}
	bound, err := s.Store.SessionsByAgentSession(ctx, runtimeID)
	if err != nil {
		return nil, err
	}
	out := make([]ACPSession, 0, len(all))
	for _, r := range all {
		out = append(out, ACPSession{AgentSessionInfo: r, TalariaSessionID: bound[r.AgentSessionID]})
	}
	return out, nil
}

// ContinueACPSession makes a Talaria chat of one of runtime id's agent's own sessions
// (ACPSessions' agentSessionID): bound to it and working in its folder, so the chat's
// next turn (or its state read) reopens it through session/resume or session/load and
// the agent goes on with what it remembers. The earlier messages stay in the agent's
// history; the chat starts with a note saying so. A chat already bound to it is
// returned instead of a second one. Errors: *NotACPError; store.ErrInvalid for an id
// the agent does not list; those of ACPSessions.
func (area *ACPArea) ContinueACPSession(ctx context.Context, runtimeID, agentSessionID string) (store.Session, error) {
	s := area.s
	runtimeID = core.CanonicalRuntime(runtimeID)
	if strings.TrimSpace(agentSessionID) == "" {
		return store.Session{}, fmt.Errorf("no agent session given: %w", store.ErrInvalid)
	}
	list, err := s.ACP().ACPSessions(ctx, runtimeID)
	if err != nil {
		return store.Session{}, err
	}
	var found *ACPSession
	for i := range list {
		if list[i].AgentSessionID == agentSessionID {
			found = &list[i]
		}
	}
	if found == nil {
		return store.Session{}, fmt.Errorf("the agent no longer lists the session %q (refresh the list): %w", agentSessionID, store.ErrInvalid)
	}
	if found.TalariaSessionID != "" {
		return s.Store.GetSession(ctx, found.TalariaSessionID)
	}
	name := runtimeID
	if a, ok, _ := s.acpAgent(ctx, strings.TrimPrefix(runtimeID, protocol.RuntimeACP+":")); ok {
		name = a.Name
	}
	title := found.Title
	if title == "" {
		title = name + " session " + agentSessionID
	}
	sess, err := s.Store.CreateSession(ctx, store.NewSession{Runtime: runtimeID, Title: turn.ProvisionalTitle(title), Workspace: found.Workspace})
	if err != nil {
		return store.Session{}, err
	}
	note := fmt.Sprintf("*Continuing %s's session “%s”. Its earlier messages are in %s's own history; %s remembers them.*", name, title, name, name)
	if _, err := s.Store.AppendMessages(ctx, sess.ID, sess.Revision, []store.Message{{Role: "assistant", Content: note}}); err != nil {
		return store.Session{}, err
	}
	return s.bindContinued(ctx, sess.ID, runtimeID, agentSessionID)
}

// bindContinued binds the chat sessionID, just made to continue the agent's session
// agentSessionID, and returns it. When another chat took the agent's session first
// (two "Open as a chat" at once), the new chat is deleted (here only: it was never
// bound, so nothing is asked of the agent) and the first one is returned.
func (s *Service) bindContinued(ctx context.Context, sessionID, runtimeID, agentSessionID string) (store.Session, error) {
	_, err := s.Store.SetAgentSessionFromAgent(ctx, sessionID, runtimeID, agentSessionID)
	var bound *store.AgentSessionBoundError
	if errors.As(err, &bound) {
		if derr := s.Store.DeleteSession(ctx, sessionID); derr != nil {
			return store.Session{}, derr
		}
		s.core.SessionsChanged()
		return s.Store.GetSession(ctx, bound.SessionID)
	}
	if err != nil {
		return store.Session{}, err
	}
	s.core.SessionsChanged()
	return s.Store.GetSession(ctx, sessionID)
}
