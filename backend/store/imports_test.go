package store

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"talaria/sidecar/protocol"
)

func importedTurn() []Message {
	return []Message{
		{Role: "user", Content: "count the zebras in the paddock", CreatedAt: 1_600_000_000_000},
		{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: "c1", Type: "function",
			Function: protocol.ToolFunction{Name: "terminal", Arguments: `{"command":"ls paddock"}`}}}},
		{Role: "tool", ToolCallID: "c1", Name: "terminal", Content: "zebra-1 zebra-2 okapi"},
		{Role: "assistant", Content: "Two zebras and one okapi.", Reasoning: "Counting."},
	}
}

func TestImportChatStoresEverythingOnce(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	chat := ImportedChat{Source: "web:abc", Title: "Zebras", CreatedAt: 1_600_000_000_000, UpdatedAt: 1_600_000_500_000,
		Pinned: true, ArchivedAt: 1_600_000_600_000, Workspace: "/w", Messages: importedTurn()}
	sess, fresh, err := s.ImportChat(ctx, chat)
	if err != nil || !fresh {
		t.Fatalf("ImportChat: %v, fresh %v", err, fresh)
	}
	if sess.Title != "Zebras" || !sess.Pinned || sess.ArchivedAt != 1_600_000_600_000 || sess.CreatedAt != 1_600_000_000_000 ||
		sess.UpdatedAt != 1_600_000_500_000 || sess.MessageCount != 4 || sess.Runtime != RuntimeBuiltin {
		t.Errorf("session %+v", sess)
	}
	ms := mustMessages(t, s, sess.ID)
	if len(ms) != 4 || ms[1].ToolCalls[0].Function.Arguments != `{"command":"ls paddock"}` || ms[2].ToolCallID != "c1" ||
		ms[0].CreatedAt != 1_600_000_000_000 || ms[3].CreatedAt != 1_600_000_000_000 || ms[3].Reasoning != "Counting." {
		t.Errorf("rows %+v", ms)
	}
	// Search finds the imported text at once (tool output too); archived chats are
	// searchable like any other.
	for _, q := range []string{"zebras paddock", "okapi"} {
		hits, err := s.Search(ctx, q, 10)
		if err != nil || len(hits) == 0 || hits[0].SessionID != sess.ID {
			t.Errorf("Search(%q) = %+v, %v", q, hits, err)
		}
	}
	// A second import adds nothing.
	again, fresh, err := s.ImportChat(ctx, chat)
	if err != nil || fresh || again.ID != sess.ID {
		t.Fatalf("second ImportChat: %+v fresh %v err %v", again, fresh, err)
	}
	if n := count(t, s, "SELECT count(*) FROM sessions"); n != 1 {
		t.Errorf("%d sessions after a second import", n)
	}
	src, err := s.ImportedSources(ctx, "web:")
	if err != nil || src["web:abc"] != sess.ID || len(src) != 1 {
		t.Errorf("ImportedSources = %v, %v", src, err)
	}
	// Deleting the chat frees its key: the next import brings it back.
	if err := s.DeleteSession(ctx, sess.ID); err != nil {
		t.Fatal(err)
	}
	back, fresh, err := s.ImportChat(ctx, chat)
	if err != nil || !fresh || back.ID == sess.ID {
		t.Fatalf("import after delete: %+v fresh %v err %v", back, fresh, err)
	}
}

func TestImportChatRespectsAnExistingBinding(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	// A chat "Continue here" made earlier: bound to Hermes session h-1.
	cont, err := s.CreateSession(ctx, NewSession{Runtime: "hermes:work", Title: "continued"})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SetAgentSession(ctx, cont.ID, "hermes:work", "h-1"); err != nil || !ok {
		t.Fatalf("SetAgentSession: %v %v", ok, err)
	}
	got, fresh, err := s.ImportChat(ctx, ImportedChat{Source: "hermes:hermes:work:h-1", Runtime: "hermes:work", AgentSessionID: "h-1",
		Messages: importedTurn()})
	if err != nil || fresh || got.ID != cont.ID {
		t.Fatalf("import of a continued session: %+v fresh %v err %v", got, fresh, err)
	}
	// The same Hermes session id under another profile is another session.
	other, fresh, err := s.ImportChat(ctx, ImportedChat{Source: "hermes:hermes:h-1", Runtime: "hermes", AgentSessionID: "h-1",
		Messages: importedTurn()})
	if err != nil || !fresh || other.AgentSessionID != "h-1" || other.Runtime != "hermes" {
		t.Fatalf("import under the default profile: %+v fresh %v err %v", other, fresh, err)
	}
	bound, err := s.SessionsByAgentSession(ctx, "hermes")
	if err != nil || bound["h-1"] != other.ID {
		t.Errorf("SessionsByAgentSession = %v, %v", bound, err)
	}
}

// An error in the middle of a chat (its third row is bad, after the session and two
// rows were inserted in the transaction) leaves nothing of it: no session, no rows, no
// search hit, no import record.
func TestImportChatRollsBackOnAnErrorMidChat(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	rows := importedTurn()
	rows[2].ToolCallID = "" // a tool result that names no call
	_, _, err := s.ImportChat(ctx, ImportedChat{Source: "web:broken", Title: "Broken zebras", Messages: rows})
	var ie *ImportError
	if !errors.As(err, &ie) || !errors.Is(err, ErrInvalid) || ie.Field != "messages[2]" {
		t.Fatalf("err = %v; want an ImportError at messages[2]", err)
	}
	for table, q := range map[string]string{
		"sessions": "SELECT count(*) FROM sessions", "messages": "SELECT count(*) FROM messages",
		"imports": "SELECT count(*) FROM imports", "sessions_fts": "SELECT count(*) FROM sessions_fts",
	} {
		if n := count(t, s, q); n != 0 {
			t.Errorf("%s has %d rows after a failed import", table, n)
		}
	}
	if hits, err := s.Search(ctx, "zebras", 10); err != nil || len(hits) != 0 {
		t.Errorf("Search after a failed import = %+v, %v", hits, err)
	}
	// The key is free: a good import of the same source works.
	if _, fresh, err := s.ImportChat(ctx, ImportedChat{Source: "web:broken", Messages: importedTurn()}); err != nil || !fresh {
		t.Errorf("import after the failed one: fresh %v err %v", fresh, err)
	}
}

func TestImportChatRefusesBadInput(t *testing.T) {
	s := openTest(t)
	for name, chat := range map[string]ImportedChat{
		"no source":    {Messages: importedTurn()},
		"unknown role": {Source: "web:x", Messages: []Message{{Role: "robot", Content: "beep"}}},
		"bad kind":     {Source: "web:y", Messages: []Message{{Role: "user", Kind: "weird"}}},
		"not utf-8":    {Source: "web:z", Messages: []Message{{Role: "user", Content: "\xff\xfe"}}},
	} {
		if _, _, err := s.ImportChat(t.Context(), chat); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v; want ErrInvalid", name, err)
		}
	}
	if n := count(t, s, "SELECT count(*) FROM sessions"); n != 0 {
		t.Errorf("%d sessions after refused imports", n)
	}
}

// A database recovered from damage keeps its import records: an imported chat is still
// not imported twice.
func TestRecoveryKeepsImportRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	sess, fresh, err := s.ImportChat(t.Context(), ImportedChat{Source: "web:kept", Title: "Kept", Messages: importedTurn()})
	if err != nil || !fresh {
		t.Fatalf("ImportChat: %v %v", fresh, err)
	}
	s.Close()
	if _, err := recoverDatabase(t.Context(), path, []string{"test"}, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	again, fresh, err := s.ImportChat(t.Context(), ImportedChat{Source: "web:kept", Title: "Kept", Messages: importedTurn()})
	if err != nil || fresh || again.ID != sess.ID {
		t.Errorf("import after recovery: %+v fresh %v err %v", again, fresh, err)
	}
}
