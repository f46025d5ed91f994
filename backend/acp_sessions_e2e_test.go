package backend_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"talaria/backend"
	"talaria/backend/store"
	"talaria/sidecar/protocol"
	"talaria/sidecar/providertest"
)

// TestACPEarlierSessionsOpenCode: the real Service, sidecar and OpenCode 1.18.33 (only
// the model scripted). The agent's own sessions are listed with the chat bound to
// each; one whose chat was deleted is opened as a new chat bound to it, in its folder,
// which reopens it (not a new session); opening it again gives the same chat; an id the
// agent does not list is refused. Deleting the continued chat leaves the session at
// OpenCode and the delete dialog names OpenCode as keeping it. Signing in goes to the agent with its own method;
// signing out, which OpenCode does not offer, is refused.
func TestACPEarlierSessionsOpenCode(t *testing.T) {
	t.Parallel() // its own provider, data folder and agent
	p := providertest.Start()
	defer p.Close()
	r := newOpenCodeRig(t, p)
	ctx := context.Background()

	kept := r.NewSession()
	stKept, err := r.Svc.ACP().ACPState(ctx, kept)
	if err != nil {
		t.Fatal(err)
	}
	gone := r.NewSession()
	stGone, err := r.Svc.ACP().ACPState(ctx, gone)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Svc.Chats().DeleteSession(ctx, gone); err != nil {
		t.Fatal(err)
	}

	list, err := r.Svc.ACP().ACPSessions(ctx, r.rt)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]backend.ACPSession{}
	for _, s := range list {
		byID[s.AgentSessionID] = s
	}
	if s, ok := byID[stKept.AgentSessionID]; !ok || s.TalariaSessionID != kept || s.Workspace != r.ws {
		t.Fatalf("the kept chat's session %q: %+v (list %+v)", stKept.AgentSessionID, s, list)
	}
	if s, ok := byID[stGone.AgentSessionID]; !ok || s.TalariaSessionID != "" {
		t.Fatalf("the deleted chat's session %q: %+v", stGone.AgentSessionID, s)
	}

	sess, err := r.Svc.ACP().ContinueACPSession(ctx, r.rt, stGone.AgentSessionID)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Runtime != r.rt || sess.AgentSessionID != stGone.AgentSessionID || sess.Workspace != r.ws {
		t.Fatalf("the opened chat = %+v", sess)
	}
	d, err := r.Svc.Chats().GetSession(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Messages) != 1 || !strings.Contains(d.Messages[0].Content, "OpenCode remembers them") {
		t.Fatalf("the opened chat's rows = %+v", d.Messages)
	}
	st, err := r.Svc.ACP().ACPState(ctx, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if st.AgentSessionID != stGone.AgentSessionID {
		t.Fatalf("the opened chat's agent session is %q, want the earlier %q", st.AgentSessionID, stGone.AgentSessionID)
	}
	again, err := r.Svc.ACP().ContinueACPSession(ctx, r.rt, stGone.AgentSessionID)
	if err != nil || again.ID != sess.ID {
		t.Fatalf("opened again: %+v, %v (want chat %s)", again, err, sess.ID)
	}
	if _, err := r.Svc.ACP().ContinueACPSession(ctx, r.rt, "ses_not_listed"); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("an unlisted id: %v", err)
	}

	// Deleting a chat continued from the agent's own sessions removes it from Talaria
	// only: the delete dialog names the agent that keeps its history, and the session
	// stays at OpenCode, to be continued again (review 36, finding 14). A chat Talaria
	// made is Talaria's to delete.
	if by, err := r.Svc.Chats().HistoryKeptBy(ctx, sess.ID); err != nil || by != "OpenCode" {
		t.Fatalf("HistoryKeptBy of the continued chat = %q, %v; want OpenCode", by, err)
	}
	if by, err := r.Svc.Chats().HistoryKeptBy(ctx, kept); err != nil || by != "" {
		t.Fatalf("HistoryKeptBy of a chat made here = %q, %v; want none", by, err)
	}
	if err := r.Svc.Chats().DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Svc.Chats().HistoryKeptBy(ctx, sess.ID); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("HistoryKeptBy of the deleted chat: %v", err)
	}
	list, err = r.Svc.ACP().ACPSessions(ctx, r.rt)
	if err != nil {
		t.Fatal(err)
	}
	listed := false
	for _, s := range list {
		listed = listed || (s.AgentSessionID == stGone.AgentSessionID && s.TalariaSessionID == "")
	}
	if !listed {
		t.Fatalf("after deleting the continued chat OpenCode no longer lists %q unbound: %+v", stGone.AgentSessionID, list)
	}
	back, err := r.Svc.ACP().ContinueACPSession(ctx, r.rt, stGone.AgentSessionID)
	if err != nil || back.ID == sess.ID || back.AgentSessionID != stGone.AgentSessionID {
		t.Fatalf("continued again after the delete: %+v, %v", back, err)
	}
	if by, err := r.Svc.Chats().HistoryKeptBy(ctx, back.ID); err != nil || by != "OpenCode" {
		t.Fatalf("HistoryKeptBy of the chat continued again = %q, %v", by, err)
	}

	if err := r.Svc.ACP().ACPAuthenticate(ctx, r.rt, "opencode-login"); err != nil {
		t.Fatalf("sign in with OpenCode's method: %v", err)
	}
	var pe *protocol.Error
	if err := r.Svc.ACP().ACPAuthenticate(ctx, r.rt, "github"); !errors.As(err, &pe) || pe.Condition() != protocol.CondInvalidParams {
		t.Fatalf("sign in with a method not offered: %v", err)
	}
	if err := r.Svc.ACP().ACPLogout(ctx, r.rt); !errors.As(err, &pe) || pe.Condition() != protocol.CondMethodNotFound {
		t.Fatalf("sign out of OpenCode: %v", err)
	}
	if _, err := r.Svc.ACP().ACPSessions(ctx, "builtin"); err == nil {
		t.Fatalf("sessions of a runtime that is no ACP agent: no error")
	}
}
