package store

import (
	"errors"
	"testing"
)

func TestSessionRuntimeBinding(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, NewSession{Title: "x", Runtime: "hermes:default", Options: `{"system_prompt": "terse"}`})
	if err != nil {
		t.Fatal(err)
	}
	if sess.Runtime != "hermes:default" || sess.Options != `{"system_prompt":"terse"}` {
		t.Fatalf("created %+v", sess)
	}
	if got := mustGet(t, s, sess.ID); got != sess {
		t.Fatalf("read back %+v, want %+v", got, sess)
	}
	// The agent's session id is kept only for the runtime the chat is on.
	if ok, err := s.SetAgentSession(ctx, sess.ID, "acp:opencode", "wrong"); err != nil || ok {
		t.Fatalf("SetAgentSession for another runtime = %v, %v", ok, err)
	}
	if ok, err := s.SetAgentSession(ctx, sess.ID, "hermes:default", "h-1"); err != nil || !ok {
		t.Fatalf("SetAgentSession = %v, %v", ok, err)
	}
	if got := mustGet(t, s, sess.ID); got.AgentSessionID != "h-1" || got.Revision != sess.Revision {
		t.Fatalf("after SetAgentSession: %+v", got)
	}
	// Staying on the same runtime keeps it; moving forgets it.
	if err := s.SetSessionRuntime(ctx, sess.ID, "hermes:default"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, sess.ID); got.AgentSessionID != "h-1" || got.Revision != sess.Revision {
		t.Fatalf("a no-op runtime change touched the session: %+v", got)
	}
	if err := s.SetSessionRuntime(ctx, sess.ID, ""); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, sess.ID); got.Runtime != RuntimeBuiltin || got.AgentSessionID != "" || got.Revision != sess.Revision+1 {
		t.Fatalf("after moving to builtin: %+v", got)
	}
	// Forks and tasks inherit runtime and options, not the agent's session.
	if err := s.SetSessionRuntime(ctx, sess.ID, "acp:goose"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetAgentSession(ctx, sess.ID, "acp:goose", "g-1"); err != nil {
		t.Fatal(err)
	}
	turn(t, s, sess.ID, "st-1", "hello", "hi")
	fork, err := s.ForkSession(ctx, ForkRequest{SessionID: sess.ID, Through: -1})
	if err != nil {
		t.Fatal(err)
	}
	if fork.Runtime != "acp:goose" || fork.AgentSessionID != "" || fork.Options != `{"system_prompt":"terse"}` {
		t.Errorf("fork = %+v", fork)
	}
	task, err := s.CreateTask(ctx, NewTask{ParentSessionID: sess.ID, Prompt: "p", Title: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if ts := mustGet(t, s, task.SessionID); ts.Runtime != "acp:goose" || ts.AgentSessionID != "" || ts.Options != `{"system_prompt":"terse"}` {
		t.Errorf("task session = %+v", ts)
	}
	// Deleted sessions take nothing.
	if err := s.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetAgentSession(ctx, sess.ID, "acp:goose", "g-2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetAgentSession after delete = %v", err)
	}
	if err := s.SetSessionRuntime(ctx, sess.ID, "builtin"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetSessionRuntime after delete = %v", err)
	}
}

func TestSessionOptionsMustBeAnObject(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess := mustSession(t, s, "x")
	if sess.Options != "{}" {
		t.Fatalf("new session options %q", sess.Options)
	}
	for _, bad := range []JSONObject{`[]`, `"text"`, `{"a":`, `12`, JSONObject(`{"p":"` + string(make([]byte, maxOptionsBytes)) + `"}`)} {
		if err := s.SetSessionOptions(ctx, sess.ID, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetSessionOptions(%.20q) = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := s.CreateSession(ctx, NewSession{Options: `[1]`}); !errors.Is(err, ErrInvalid) {
		t.Errorf("CreateSession with array options = %v", err)
	}
	if got := mustGet(t, s, sess.ID); got.Options != "{}" || got.Revision != sess.Revision {
		t.Errorf("a refused change was written: %+v", got)
	}
	if err := s.SetSessionOptions(ctx, sess.ID, "null"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, sess.ID); got.Options != "{}" {
		t.Errorf("null options read back as %q", got.Options)
	}
}

// TestAgentSessionFromAgentRecordsItsOrigin: a chat bound to one of the agent's own
// sessions by SetAgentSessionFromAgent says where it came from (ImportSource); one bound
// by SetAgentSession (a session Talaria made) says nothing; a binding refused for
// another runtime records nothing; a fork of the continued chat is Talaria's own.
func TestAgentSessionFromAgentRecordsItsOrigin(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	made, err := s.CreateSession(ctx, NewSession{Title: "made here", Runtime: "acp:opencode"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SetAgentSession(ctx, made.ID, "acp:opencode", "ses_made"); err != nil || !ok {
		t.Fatalf("SetAgentSession = %v, %v", ok, err)
	}
	if src, err := s.ImportSource(ctx, made.ID); err != nil || src != "" {
		t.Fatalf("ImportSource of a chat made here = %q, %v", src, err)
	}
	cont, err := s.CreateSession(ctx, NewSession{Title: "continued", Runtime: "acp:opencode"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SetAgentSessionFromAgent(ctx, cont.ID, "hermes", "ses_tui"); err != nil || ok {
		t.Fatalf("SetAgentSessionFromAgent for another runtime = %v, %v", ok, err)
	}
	if src, err := s.ImportSource(ctx, cont.ID); err != nil || src != "" {
		t.Fatalf("a refused binding recorded %q, %v", src, err)
	}
	if ok, err := s.SetAgentSessionFromAgent(ctx, cont.ID, "acp:opencode", "ses_tui"); err != nil || !ok {
		t.Fatalf("SetAgentSessionFromAgent = %v, %v", ok, err)
	}
	if got := mustGet(t, s, cont.ID); got.AgentSessionID != "ses_tui" {
		t.Fatalf("not bound: %+v", got)
	}
	if src, err := s.ImportSource(ctx, cont.ID); err != nil || src != AgentSessionSource("acp:opencode", "ses_tui") {
		t.Fatalf("ImportSource of the continued chat = %q, %v", src, err)
	}
	if _, err := s.AppendMessages(ctx, cont.ID, mustGet(t, s, cont.ID).Revision, []Message{{Role: "assistant", Content: "note"}}); err != nil {
		t.Fatal(err)
	}
	fork, err := s.ForkSession(ctx, ForkRequest{SessionID: cont.ID, Through: 0, Key: "fork-key"})
	if err != nil {
		t.Fatal(err)
	}
	if src, err := s.ImportSource(ctx, fork.ID); err != nil || src != "" {
		t.Fatalf("ImportSource of a fork = %q, %v", src, err)
	}
	if err := s.DeleteSession(ctx, cont.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ImportSource(ctx, cont.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("ImportSource of a deleted chat: %v", err)
	}
}

// TestAgentSessionContinuedInOneChat: a second chat cannot be bound to an agent session
// another live chat continues (two "Open as a chat" at once); the first keeps its
// import record, so deleting it still leaves the agent's session alone. Once the first
// chat is deleted the agent session may be continued again.
func TestAgentSessionContinuedInOneChat(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	first, err := s.CreateSession(ctx, NewSession{Title: "first", Runtime: "acp:opencode"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.CreateSession(ctx, NewSession{Title: "second", Runtime: "acp:opencode"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SetAgentSessionFromAgent(ctx, first.ID, "acp:opencode", "ses_tui"); err != nil || !ok {
		t.Fatalf("SetAgentSessionFromAgent(first) = %v, %v", ok, err)
	}
	ok, err := s.SetAgentSessionFromAgent(ctx, second.ID, "acp:opencode", "ses_tui")
	var bound *AgentSessionBoundError
	if !errors.As(err, &bound) || ok || bound.SessionID != first.ID {
		t.Fatalf("SetAgentSessionFromAgent(second) = %v, %v; want an AgentSessionBoundError naming %s", ok, err, first.ID)
	}
	if got := mustGet(t, s, second.ID); got.AgentSessionID != "" {
		t.Fatalf("the refused chat was bound: %+v", got)
	}
	if src, err := s.ImportSource(ctx, first.ID); err != nil || src != AgentSessionSource("acp:opencode", "ses_tui") {
		t.Fatalf("ImportSource of the first chat = %q, %v (the second took its record)", src, err)
	}
	if src, err := s.ImportSource(ctx, second.ID); err != nil || src != "" {
		t.Fatalf("ImportSource of the refused chat = %q, %v", src, err)
	}
	if err := s.DeleteSession(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SetAgentSessionFromAgent(ctx, second.ID, "acp:opencode", "ses_tui"); err != nil || !ok {
		t.Fatalf("SetAgentSessionFromAgent after the first chat's delete = %v, %v", ok, err)
	}
}
