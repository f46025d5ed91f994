package store

import (
	"errors"
	"testing"
)

// schemaV3Delta is what schema version 3 added to version 2, exactly as Talaria 3
// created it, written out here (not read from schema_v3.sql) for the same reason as
// schemaV1Literal.
const schemaV3Delta = `
ALTER TABLE sessions ADD COLUMN hidden    INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN parent_id TEXT    NOT NULL DEFAULT '';
DROP INDEX sessions_list;
DROP INDEX sessions_archived;
CREATE INDEX sessions_list ON sessions(pinned, updated_at)
    WHERE deleted_at IS NULL AND archived_at IS NULL AND hidden = 0;
CREATE INDEX sessions_archived ON sessions(updated_at)
    WHERE deleted_at IS NULL AND archived_at IS NOT NULL AND hidden = 0;
CREATE INDEX sessions_hidden ON sessions(parent_id)
    WHERE hidden = 1 AND deleted_at IS NULL;
CREATE TABLE tasks (
    id                TEXT PRIMARY KEY,
    parent_session_id TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    session_id        TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    prompt            TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    stream_id         TEXT    NOT NULL DEFAULT '',
    result            TEXT    NOT NULL DEFAULT '',
    error             TEXT    NOT NULL DEFAULT '',
    created_at        INTEGER NOT NULL,
    started_at        INTEGER,
    ended_at          INTEGER,
    dismissed         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX tasks_by_parent ON tasks(parent_session_id, created_at);
CREATE INDEX tasks_by_session ON tasks(session_id);
CREATE INDEX tasks_open ON tasks(created_at) WHERE status IN ('queued', 'running');
`

// v3Rows populates a version 3 database (after schemaV1Literal, schemaV2Delta and
// schemaV3Delta): a chat with a turn, a running background task with its hidden
// session, and an archived chat.
const v3Rows = `
INSERT INTO meta VALUES ('schema_version', '3'), ('app_version', '3.0.0'), ('created_at', '1710000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, deleted_at, pinned, archived_at, forked_from, fork_position, fork_key, hidden, parent_id) VALUES
 ('q-chat', 'Nginx config', 0, 'qwen3', '/etc-copy', 1710000000000, 1710000005000, NULL, 4, 2, NULL, 0, NULL, '', NULL, NULL, 0, ''),
 ('q-task', 'check the ports', 0, 'qwen3', '/etc-copy', 1710000001000, 1710000002000, 'st-task', 2, 1, NULL, 0, NULL, '', NULL, NULL, 1, 'q-chat'),
 ('q-arch', 'Old notes', 1, '', '', 1710000000500, 1710000000600, NULL, 2, 0, NULL, 0, 1710000000700, '', NULL, NULL, 0, '');
INSERT INTO messages(session_id, position, role, content, stream_id, created_at) VALUES
 ('q-chat', 0, 'user', 'why does nginx answer 502', 'st-q', 1710000000100),
 ('q-chat', 1, 'assistant', 'The upstream on port 8080 is down.', 'st-q', 1710000000200),
 ('q-task', 0, 'user', 'check the ports', 'st-task', 1710000001000);
INSERT INTO streams VALUES ('st-q', 'q-chat', 1710000000100, 1710000000200, 'done'),
 ('st-task', 'q-task', 1710000001000, NULL, '');
INSERT INTO tasks(id, parent_session_id, session_id, prompt, status, stream_id, created_at, started_at) VALUES
 ('t-1', 'q-chat', 'q-task', 'check the ports', 'running', 'st-task', 1710000001000, 1710000001000);
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
PRAGMA user_version = 3;
`

// buildV3 writes a version 3 database at path.
func buildV3(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "_journal_mode=WAL")
	if _, err := db.Exec(schemaV1Literal + schemaV2Delta + schemaV3Delta + v3Rows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkV3Data checks a version 3 database after the migration: every row kept, every
// session on the built-in runtime with default options, and the runtime and options
// usable on the old rows.
func checkV3Data(t *testing.T, s *Store, round int) {
	t.Helper()
	ctx := t.Context()
	for _, id := range []string{"q-chat", "q-task", "q-arch"} {
		sess := mustGet(t, s, id)
		if round == 0 && (sess.Runtime != RuntimeBuiltin || sess.AgentSessionID != "" || sess.Options != "{}") {
			t.Errorf("%s after the migration: runtime %q, agent session %q, options %q", id, sess.Runtime, sess.AgentSessionID, sess.Options)
		}
	}
	if task := mustGet(t, s, "q-task"); !task.Hidden || task.ParentID != "q-chat" || task.ActiveStreamID != "st-task" {
		t.Errorf("q-task = %+v", task)
	}
	if rows := mustMessages(t, s, "q-chat"); len(rows) != 2 || rows[1].Content != "The upstream on port 8080 is down." {
		t.Errorf("q-chat rows = %+v", rows)
	}
	if tasks, err := s.ListTasks(ctx, "q-chat", false); err != nil || len(tasks) != 1 || tasks[0].Status != TaskRunning {
		t.Errorf("ListTasks = %+v, %v", tasks, err)
	}
	if hits, err := s.Search(ctx, "nginx", 10); err != nil || len(hits) != 1 {
		t.Errorf("Search = %+v, %v", hits, err)
	}
	if round > 0 {
		return
	}
	// The new columns work on the old rows.
	if err := s.SetSessionRuntime(ctx, "q-chat", "hermes:work"); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SetAgentSession(ctx, "q-chat", "hermes:work", "20261201_abc"); err != nil || !ok {
		t.Fatalf("SetAgentSession = %v, %v", ok, err)
	}
	if err := s.SetSessionOptions(ctx, "q-chat", `{"system_prompt": "be brief"}`); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, "q-chat")
	if got.Runtime != "hermes:work" || got.AgentSessionID != "20261201_abc" || got.Options != `{"system_prompt":"be brief"}` {
		t.Errorf("q-chat = %+v", got)
	}
	// The live task's session cannot change runtime mid-turn.
	var busy *BusyError
	if err := s.SetSessionRuntime(ctx, "q-task", "hermes:work"); !errors.As(err, &busy) {
		t.Errorf("SetSessionRuntime of a live session = %v, want *BusyError", err)
	}
	// A second round restores the runtime the rest of this check expects.
	if err := s.SetSessionRuntime(ctx, "q-chat", RuntimeBuiltin); err != nil {
		t.Fatal(err)
	}
}
