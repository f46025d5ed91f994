package store

import (
	"errors"
	"strings"
	"testing"
)

// schemaV2Delta is what schema version 2 added to version 1, exactly as Talaria 2
// created it, written out here (not read from schema_v2.sql) for the same reason as
// schemaV1Literal.
const schemaV2Delta = `
ALTER TABLE sessions ADD COLUMN pinned        INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sessions ADD COLUMN archived_at   INTEGER;
ALTER TABLE sessions ADD COLUMN forked_from   TEXT NOT NULL DEFAULT '';
ALTER TABLE sessions ADD COLUMN fork_position INTEGER;
ALTER TABLE sessions ADD COLUMN fork_key      TEXT;
DROP INDEX sessions_by_updated;
CREATE INDEX sessions_list ON sessions(pinned, updated_at) WHERE deleted_at IS NULL AND archived_at IS NULL;
CREATE INDEX sessions_archived ON sessions(updated_at) WHERE deleted_at IS NULL AND archived_at IS NOT NULL;
CREATE UNIQUE INDEX sessions_by_fork_key ON sessions(fork_key) WHERE fork_key IS NOT NULL;
CREATE TABLE drafts (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    text       TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
CREATE VIRTUAL TABLE messages_fts USING fts5(content, content = 'messages', content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    INSERT INTO messages_fts(messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
    INSERT INTO messages_fts(rowid, content) VALUES (new.id, new.content);
END;
CREATE VIRTUAL TABLE sessions_fts USING fts5(title, session_id UNINDEXED, tokenize = 'unicode61 remove_diacritics 2');
CREATE TRIGGER sessions_fts_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO sessions_fts(title, session_id) VALUES (new.title, new.id);
END;
CREATE TRIGGER sessions_fts_delete AFTER DELETE ON sessions BEGIN
    DELETE FROM sessions_fts WHERE session_id = old.id;
END;
CREATE TRIGGER sessions_fts_update AFTER UPDATE OF title ON sessions WHEN new.title IS NOT old.title BEGIN
    UPDATE sessions_fts SET title = new.title WHERE session_id = old.id;
END;
`

// v2Rows populates a version 2 database (after schemaV1Literal and schemaV2Delta): a
// pinned session with a turn, an archived one, a fork of the first with a draft, a
// turn still live, and a tombstone.
const v2Rows = `
INSERT INTO meta VALUES ('schema_version', '2'), ('app_version', '2.0.0'), ('created_at', '1700000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, deleted_at, pinned, archived_at, forked_from, fork_position, fork_key) VALUES
 ('p-pinned', 'Terraform state', 0, 'llama3', '/srv', 1700000000000, 1700000005000, NULL, 3, 2, NULL, 1, NULL, '', NULL, NULL),
 ('p-arch', 'Old receipts', 1, '', '', 1700000001000, 1700000002000, NULL, 2, 0, NULL, 0, 1700000003000, '', NULL, NULL),
 ('p-fork', 'Terraform state (fork)', 1, 'llama3', '/srv', 1700000006000, 1700000006000, NULL, 1, 1, NULL, 0, NULL, 'p-pinned', 0, 'key-1'),
 ('p-live', '', 0, '', '', 1700000007000, 1700000008000, 'st-live2', 2, 1, NULL, 0, NULL, '', NULL, NULL),
 ('p-gone', '', 0, '', '', 1700000000500, 1700000000600, NULL, 5, 0, 1700000000700, 0, NULL, '', NULL, NULL);
INSERT INTO messages(session_id, position, role, content, stream_id, created_at) VALUES
 ('p-pinned', 0, 'user', 'import the bucket into terraform', 'st-a', 1700000000100),
 ('p-pinned', 1, 'assistant', 'Use terraform import aws_s3_bucket.b name.', 'st-a', 1700000000200),
 ('p-fork', 0, 'user', 'import the bucket into terraform', 'st-a', 1700000000100),
 ('p-live', 0, 'user', 'summarise the quarterly numbers', 'st-live2', 1700000008000);
INSERT INTO streams VALUES ('st-a', 'p-pinned', 1700000000100, 1700000000200, 'done'),
 ('st-live2', 'p-live', 1700000008000, NULL, '');
INSERT INTO journal VALUES ('st-live2', 1, 'p-live', 'user_message', '{}', 1700000008000);
INSERT INTO drafts VALUES ('p-fork', 'half-typed thought', 1700000006500);
INSERT INTO settings VALUES ('model', 'llama3');
INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
PRAGMA user_version = 2;
`

// buildV2 writes a version 2 database at path.
func buildV2(t *testing.T, path string) {
	t.Helper()
	db := rawDB(t, path, "_journal_mode=WAL")
	if _, err := db.Exec(schemaV1Literal + schemaV2Delta + v2Rows); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// checkV2Data checks a version 2 database after the migration: every row kept, every
// session visible, and hidden sessions and tasks usable beside them.
func checkV2Data(t *testing.T, s *Store, round int) {
	t.Helper()
	ctx := t.Context()
	pinned := mustGet(t, s, "p-pinned")
	if pinned.Title != "Terraform state" || !pinned.Pinned || pinned.Hidden || pinned.ParentID != "" ||
		pinned.MessageCount != 2 || pinned.Model != "llama3" {
		t.Errorf("p-pinned = %+v", pinned)
	}
	if fork := mustGet(t, s, "p-fork"); fork.ForkedFrom != "p-pinned" || fork.Hidden {
		t.Errorf("p-fork = %+v", fork)
	}
	if d, err := s.Draft(ctx, "p-fork"); err != nil || d.Text != "half-typed thought" {
		t.Errorf("draft = %+v, %v", d, err)
	}
	if ls, _ := s.LiveStreams(ctx); len(ls) != 1 || ls[0].StreamID != "st-live2" {
		t.Errorf("LiveStreams = %+v", ls)
	}
	list, _ := s.ListSessions(ctx, 0, 0)
	var got []string
	for _, sess := range list {
		got = append(got, sess.ID)
	}
	if strings.Join(got, ",") != "p-pinned,p-live,p-fork" {
		t.Errorf("list = %v", got)
	}
	if arch, _ := s.ListArchivedSessions(ctx, 0, 0); len(arch) != 1 || arch[0].ID != "p-arch" {
		t.Errorf("archived = %+v", arch)
	}
	if hits, err := s.Search(ctx, "terraform import", 10); err != nil || len(hits) != 2 {
		t.Errorf("Search = %+v, %v", hits, err)
	}
	if _, err := s.GetSession(ctx, "p-gone"); !errors.Is(err, ErrNotFound) {
		t.Errorf("the tombstone came back: %v", err)
	}
	if round > 0 {
		return
	}
	// The new features work on the old rows: a task with its hidden session, and a
	// hidden copy, neither listed nor found.
	task, err := s.CreateTask(ctx, NewTask{ParentSessionID: "p-pinned", Prompt: "plan the terraform upgrade", Title: "plan"})
	if err != nil {
		t.Fatal(err)
	}
	hidden := mustGet(t, s, task.SessionID)
	if !hidden.Hidden || hidden.ParentID != "p-pinned" || hidden.Model != "llama3" || hidden.Workspace != "/srv" {
		t.Errorf("task session = %+v", hidden)
	}
	turn(t, s, task.SessionID, "st-task", "terraform plan please", "terraform plan shows 3 changes")
	cp, err := s.ForkSession(ctx, ForkRequest{SessionID: "p-pinned", Through: -1, Hidden: true})
	if err != nil || !cp.Hidden || cp.ParentID != "p-pinned" || cp.MessageCount != 2 {
		t.Fatalf("hidden copy = %+v, %v", cp, err)
	}
	if tasks, err := s.ListTasks(ctx, "p-pinned", false); err != nil || len(tasks) != 1 || tasks[0].Status != TaskQueued {
		t.Errorf("ListTasks = %+v, %v", tasks, err)
	}
	if l2, _ := s.ListSessions(ctx, 0, 0); len(l2) != 3 {
		t.Errorf("hidden sessions are listed: %+v", l2)
	}
	if hits, _ := s.Search(ctx, "terraform", 10); len(hits) != 2 {
		t.Errorf("hidden sessions are found: %+v", hits)
	}
}
