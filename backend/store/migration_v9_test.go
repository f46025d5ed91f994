package store

import (
	"testing"
)

// schemaV8Delta is what schema version 8 added to version 7, exactly as Talaria 8
// created it, written out here (not read from schema_v8.sql) for the same reason as
// schemaV1Literal.
const schemaV8Delta = `
CREATE TABLE imports (
    source      TEXT    PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    imported_at INTEGER NOT NULL
);
CREATE INDEX imports_by_session ON imports(session_id);
`

// v8Rows populates a version 8 database: a chat of six rows whose summary row
// (position 4) stands for its first three rows.
const v8Rows = `
INSERT INTO meta VALUES ('schema_version', '8'), ('app_version', '8.0.0'), ('created_at', '1730000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, deleted_at, pinned, archived_at, forked_from, fork_position, fork_key, hidden, parent_id,
    runtime, agent_session_id, options) VALUES
 ('long', 'A long chat', 0, '', '/w', 1730000000000, 1730000005000, NULL, 3, 6, NULL, 0, NULL, '', NULL, NULL, 0, '',
  'builtin', '', '{}');
INSERT INTO messages(session_id, position, role, content, kind, stream_id, created_at, summary_covers) VALUES
 ('long', 0, 'user', 'first question', '', '', 1730000000100, 0),
 ('long', 1, 'assistant', 'first answer', '', '', 1730000000200, 0),
 ('long', 2, 'user', 'second question', '', '', 1730000000300, 0),
 ('long', 3, 'assistant', 'second answer', '', '', 1730000000400, 0),
 ('long', 4, 'system', 'they asked twice', 'summary', '', 1730000000500, 3),
 ('long', 5, 'user', 'third question', '', '', 1730000000600, 0);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
PRAGMA user_version = 8;
`

// buildV8 writes a version 8 database at path.
func buildV8(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "_journal_mode=WAL")
	if _, err := db.Exec(schemaV1Literal + schemaV2Delta + schemaV3Delta + schemaV4Delta + schemaV5Delta + schemaV6Delta +
		schemaV7Delta + schemaV8Delta + v8Rows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkV8Data checks a version 8 database after the migration: a turn of the
// summarised chat reads its rows from position 3 on (the rows its summary does not
// stand for), found through the new index.
func checkV8Data(t *testing.T, s *Store, round int) {
	t.Helper()
	if n := count(t, s, "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'messages_summaries'"); n != 1 {
		t.Errorf("round %d: the summaries index is missing", round)
	}
	rows, base, err := s.MessagesForTurn(t.Context(), "long")
	if err != nil || base != 3 || len(rows) != 3 || rows[0].Content != "second answer" || rows[1].Kind != KindSummary {
		t.Errorf("round %d: MessagesForTurn = base %d, %d rows %+v, %v", round, base, len(rows), rows, err)
	}
}
