package store

import (
	"bytes"
	"testing"
)

// schemaV4Delta is what schema version 4 added to version 3, exactly as Talaria 4
// created it, written out here (not read from schema_v4.sql) for the same reason as
// schemaV1Literal.
const schemaV4Delta = `
ALTER TABLE sessions ADD COLUMN runtime          TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN agent_session_id TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN options          TEXT NOT NULL DEFAULT '{}';
`

// v4Rows populates a version 4 database: a chat on Hermes with options and a deleted
// one (whose audit rows a later version keeps).
const v4Rows = `
INSERT INTO meta VALUES ('schema_version', '4'), ('app_version', '4.0.0'), ('created_at', '1720000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, deleted_at, pinned, archived_at, forked_from, fork_position, fork_key, hidden, parent_id,
    runtime, agent_session_id, options) VALUES
 ('r-chat', 'Deploy script', 0, '', '/home/u/Talaria', 1720000000000, 1720000005000, NULL, 3, 2, NULL, 0, NULL, '', NULL, NULL, 0, '',
  'hermes', '20260101_x', '{"system_prompt":"be brief","sandbox":{"mode":"read-only","network":false}}');
INSERT INTO messages(session_id, position, role, content, stream_id, created_at) VALUES
 ('r-chat', 0, 'user', 'write the deploy script', 'st-r', 1720000000100),
 ('r-chat', 1, 'assistant', 'Here it is.', 'st-r', 1720000000200);
INSERT INTO streams VALUES ('st-r', 'r-chat', 1720000000100, 1720000000200, 'done');
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
PRAGMA user_version = 4;
`

// buildV4 writes a version 4 database at path.
func buildV4(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "_journal_mode=WAL")
	if _, err := db.Exec(schemaV1Literal + schemaV2Delta + schemaV3Delta + schemaV4Delta + v4Rows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkV4Data checks a version 4 database after the migration: the rows kept, the
// audit log and the fingerprints usable.
func checkV4Data(t *testing.T, s *Store, round int) {
	t.Helper()
	ctx := t.Context()
	sess := mustGet(t, s, "r-chat")
	if sess.Runtime != "hermes" || sess.Options != `{"system_prompt":"be brief","sandbox":{"mode":"read-only","network":false}}` {
		t.Errorf("r-chat = %+v", sess)
	}
	if rows := mustMessages(t, s, "r-chat"); len(rows) != 2 {
		t.Errorf("rows = %+v", rows)
	}
	if round > 0 {
		if list, err := s.ListAudit(ctx, AuditFilter{}); err != nil || len(list) != 1 {
			t.Errorf("audit after reopening = %+v, %v", list, err)
		}
		return
	}
	if _, err := s.AppendAudit(ctx, AuditEntry{SessionID: "r-chat", Subject: "rm -rf build", Pattern: "recursive_delete", Decision: DecisionDeny, DecidedBy: "user"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddFingerprints(ctx, []Fingerprint{{MAC: []byte("0123456789abcdef0123456789abcdef"), KeyID: "k1", Length: 12, Roll: 1 << 63}}); err != nil {
		t.Fatal(err)
	}
	fps, err := s.Fingerprints(ctx, "k1")
	if err != nil || len(fps) != 1 || fps[0].Roll != 1<<63 || !bytes.Equal(fps[0].MAC, []byte("0123456789abcdef0123456789abcdef")) {
		t.Errorf("fingerprints = %+v, %v", fps, err)
	}
}
