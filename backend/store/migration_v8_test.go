package store

import (
	"testing"
)

// schemaV7Delta is what schema version 7 added to version 6, exactly as Talaria 7
// created it, written out here (not read from schema_v7.sql) for the same reason as
// schemaV1Literal.
const schemaV7Delta = `
ALTER TABLE messages ADD COLUMN app_error TEXT;
`

// v7Rows populates a version 7 database: a chat "Continue here" bound to Hermes
// session h-7.
const v7Rows = `
INSERT INTO meta VALUES ('schema_version', '7'), ('app_version', '7.0.0'), ('created_at', '1730000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, deleted_at, pinned, archived_at, forked_from, fork_position, fork_key, hidden, parent_id,
    runtime, agent_session_id, options) VALUES
 ('h-chat', 'From Hermes', 0, '', '/w', 1730000000000, 1730000005000, NULL, 2, 1, NULL, 0, NULL, '', NULL, NULL, 0, '',
  'hermes', 'h-7', '{}');
INSERT INTO messages(session_id, position, role, content, kind, stream_id, created_at) VALUES
 ('h-chat', 0, 'user', 'hello hermes', '', '', 1730000000100);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
PRAGMA user_version = 7;
`

// buildV7 writes a version 7 database at path.
func buildV7(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "_journal_mode=WAL")
	if _, err := db.Exec(schemaV1Literal + schemaV2Delta + schemaV3Delta + schemaV4Delta + schemaV5Delta + schemaV6Delta +
		schemaV7Delta + v7Rows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkV7Data checks a version 7 database after the migration: the chat bound before
// imports existed is still found as bound, so importing its Hermes session adds nothing.
func checkV7Data(t *testing.T, s *Store, round int) {
	t.Helper()
	if n := count(t, s, "SELECT count(*) FROM imports"); n != 0 {
		t.Errorf("imports has %d rows after the migration", n)
	}
	got, fresh, err := s.ImportChat(t.Context(), ImportedChat{Source: "hermes:hermes:h-7", Runtime: "hermes", AgentSessionID: "h-7",
		Messages: []Message{{Role: "user", Content: "hello hermes"}}})
	if err != nil || fresh || got.ID != "h-chat" {
		t.Errorf("round %d: import of the bound Hermes session: %+v fresh %v err %v", round, got, fresh, err)
	}
}
