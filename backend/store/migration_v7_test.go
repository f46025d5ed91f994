package store

import (
	"encoding/json"
	"testing"

	"talaria/sidecar/protocol"
)

// schemaV6Delta is what schema version 6 added to version 5, exactly as Talaria 6
// created it, written out here (not read from schema_v6.sql) for the same reason as
// schemaV1Literal.
const schemaV6Delta = `
CREATE TABLE attachments (
    id         TEXT PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    message_id INTEGER REFERENCES messages(id) ON DELETE CASCADE,
    ord        INTEGER NOT NULL DEFAULT 0,
    sha256     TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    mime_type  TEXT    NOT NULL,
    kind       TEXT    NOT NULL,
    size       INTEGER NOT NULL,
    sent_bytes INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL
);
CREATE INDEX attachments_by_session ON attachments(session_id, message_id, ord);
CREATE INDEX attachments_by_message ON attachments(message_id) WHERE message_id IS NOT NULL;
CREATE INDEX attachments_by_blob ON attachments(sha256);
ALTER TABLE messages ADD COLUMN summary_covers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN model              TEXT    NOT NULL DEFAULT '';
ALTER TABLE streams ADD COLUMN input_tokens       INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN output_tokens      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN cache_read_tokens  INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN cache_write_tokens INTEGER NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN estimated_cost     REAL    NOT NULL DEFAULT 0;
ALTER TABLE streams ADD COLUMN cost_source        TEXT    NOT NULL DEFAULT '';
ALTER TABLE streams ADD COLUMN context_tokens     INTEGER NOT NULL DEFAULT 0;
`

// v6Rows populates a version 6 database: a chat whose turn failed (its error row has
// only the "Label: message" text) and a settled turn with figures.
const v6Rows = `
INSERT INTO meta VALUES ('schema_version', '6'), ('app_version', '6.0.0'), ('created_at', '1720000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, deleted_at, pinned, archived_at, forked_from, fork_position, fork_key, hidden, parent_id,
    runtime, agent_session_id, options) VALUES
 ('r-chat', 'Rate limits', 0, 'gpt', '/w', 1720000000000, 1720000005000, NULL, 4, 2, NULL, 0, NULL, '', NULL, NULL, 0, '',
  'builtin', '', '{}');
INSERT INTO messages(session_id, position, role, content, kind, stream_id, created_at) VALUES
 ('r-chat', 0, 'user', 'summarise the log', '', 'st-r', 1720000000100),
 ('r-chat', 1, 'assistant', 'Rate limited: slow down', 'error', 'st-r', 1720000000200);
INSERT INTO streams(stream_id, session_id, started_at, ended_at, terminal, model, input_tokens) VALUES
 ('st-r', 'r-chat', 1720000000100, 1720000000200, 'apperror', 'gpt', 12);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
PRAGMA user_version = 6;
`

// buildV6 writes a version 6 database at path.
func buildV6(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "_journal_mode=WAL")
	if _, err := db.Exec(schemaV1Literal + schemaV2Delta + schemaV3Delta + schemaV4Delta + schemaV5Delta + schemaV6Delta + v6Rows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkV6Data checks a version 6 database after the migration: the old error row keeps
// its text and has no saved failure; a new error row keeps its hint.
func checkV6Data(t *testing.T, s *Store, round int) {
	t.Helper()
	rows := mustMessages(t, s, "r-chat")
	if round == 0 && (len(rows) != 2 || rows[1].Kind != KindError || rows[1].Content != "Rate limited: slow down" || rows[1].Error != nil) {
		t.Fatalf("r-chat rows = %+v", rows)
	}
	if round > 0 {
		if len(rows) != 4 || rows[3].Error == nil || rows[3].Error.Hint == "" {
			t.Fatalf("second round: rows = %+v", rows)
		}
		return
	}
	if _, err := s.AdmitTurn(t.Context(), "r-chat", "st-new", Message{Content: "again"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurnWith(t.Context(), "r-chat", "st-new", []Message{{Role: "assistant", Kind: KindError,
		Content: "Rate limited: slow down", Error: &RowError{Type: "rate_limit", Label: "Rate limited", Message: "slow down", Hint: "Wait a moment."}}},
		protocol.Usage{}, TerminalAppError, TurnStats{}); err != nil {
		t.Fatal(err)
	}
}

// An error row keeps the failure it stands for (type, label, message, hint) through
// every way a transcript is read or copied: the whole transcript, a page, a fork, an
// export and its import; a row of another kind never carries one.
func TestErrorRowKeepsItsHint(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	sess, err := s.CreateSession(ctx, NewSession{})
	if err != nil {
		t.Fatal(err)
	}
	want := RowError{Type: "context_too_large", Label: "Conversation too long for the model", Message: "n_ctx exceeded",
		Hint: "Use Summarise and continue."}
	if _, err := s.AdmitTurn(ctx, sess.ID, "st-1", Message{Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurnWith(ctx, sess.ID, "st-1", []Message{
		{Role: "assistant", Content: "partial", Error: &RowError{Hint: "not an error row"}},
		{Role: "assistant", Kind: KindError, Content: want.Label + ": " + want.Message, Error: &want}},
		protocol.Usage{}, TerminalAppError, TurnStats{}); err != nil {
		t.Fatal(err)
	}
	check := func(where string, rows []Message) {
		t.Helper()
		if len(rows) != 3 || rows[1].Error != nil || rows[2].Error == nil || *rows[2].Error != want {
			b, _ := json.Marshal(rows)
			t.Errorf("%s: rows = %s", where, b)
		}
	}
	check("Messages", mustMessages(t, s, sess.ID))
	page, err := s.MessagesBefore(ctx, sess.ID, -1, 10)
	if err != nil {
		t.Fatal(err)
	}
	check("MessagesBefore", page.Messages)
	fork, err := s.ForkSession(ctx, ForkRequest{SessionID: sess.ID, Through: -1})
	if err != nil {
		t.Fatal(err)
	}
	check("fork", mustMessages(t, s, fork.ID))
	exp, err := s.ExportSession(ctx, sess.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := json.Marshal(exp)
	imported, err := s.ImportSession(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	check("import", mustMessages(t, s, imported.ID))
}
