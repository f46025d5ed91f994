package store

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// schemaV1Literal is schema version 1 exactly as Talaria 1 created it, written out here
// (not read from schema_v1.sql) so that an edit to the embedded file cannot hide a
// migration bug.
const schemaV1Literal = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE sessions (
    id                 TEXT PRIMARY KEY,
    title              TEXT    NOT NULL DEFAULT '',
    title_manual       INTEGER NOT NULL DEFAULT 0,
    model              TEXT    NOT NULL DEFAULT '',
    workspace          TEXT    NOT NULL DEFAULT '',
    created_at         INTEGER NOT NULL,
    updated_at         INTEGER NOT NULL,
    active_stream_id   TEXT,
    revision           INTEGER NOT NULL DEFAULT 1,
    message_count      INTEGER NOT NULL DEFAULT 0,
    input_tokens       INTEGER NOT NULL DEFAULT 0,
    output_tokens      INTEGER NOT NULL DEFAULT 0,
    cache_read_tokens  INTEGER NOT NULL DEFAULT 0,
    cache_write_tokens INTEGER NOT NULL DEFAULT 0,
    estimated_cost     REAL    NOT NULL DEFAULT 0,
    deleted_at         INTEGER,
    stop_hold          INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_updated ON sessions(updated_at) WHERE deleted_at IS NULL;
CREATE TABLE messages (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id   TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    position     INTEGER NOT NULL CHECK (position >= 0),
    role         TEXT    NOT NULL,
    content      TEXT    NOT NULL DEFAULT '',
    reasoning    TEXT    NOT NULL DEFAULT '',
    tool_calls   TEXT,
    tool_call_id TEXT    NOT NULL DEFAULT '',
    name         TEXT    NOT NULL DEFAULT '',
    kind         TEXT    NOT NULL DEFAULT '',
    stream_id    TEXT    NOT NULL DEFAULT '',
    created_at   INTEGER NOT NULL,
    UNIQUE (session_id, position)
);
CREATE TABLE streams (
    stream_id  TEXT PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    started_at INTEGER NOT NULL,
    ended_at   INTEGER,
    terminal   TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX streams_by_session ON streams(session_id);
CREATE INDEX streams_live ON streams(started_at) WHERE ended_at IS NULL;
CREATE TABLE journal (
    stream_id  TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    session_id TEXT    NOT NULL,
    event      TEXT    NOT NULL,
    data       TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (stream_id, seq)
) WITHOUT ROWID;
CREATE INDEX journal_by_session ON journal(session_id);
CREATE TABLE settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`

// v1Rows populates a version 1 database: a live session with a tool-using turn, a
// manually titled session with a turn still live (the app died), a tombstone, the
// journal and settings.
const v1Rows = `
INSERT INTO meta VALUES ('schema_version', '1'), ('app_version', '1.0.0'), ('created_at', '1690000000000');
INSERT INTO sessions(id, title, title_manual, model, workspace, created_at, updated_at, active_stream_id, revision,
    message_count, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, estimated_cost, deleted_at) VALUES
 ('s-old', 'Kubernetes upgrade', 0, 'llama3', '/srv', 1690000000000, 1690000005000, NULL, 4, 4, 100, 20, 5, 1, 0.5, NULL),
 ('s-live', 'My notes', 1, 'gpt', '/home', 1690000001000, 1690000009000, 'st-live', 2, 1, 0, 0, 0, 0, 0, NULL),
 ('s-gone', 'secret tombstone title', 0, '', '', 1690000002000, 1690000003000, NULL, 7, 0, 0, 0, 0, 0, 0, 1690000004000);
INSERT INTO messages(session_id, position, role, content, reasoning, tool_calls, tool_call_id, name, kind, stream_id, created_at) VALUES
 ('s-old', 0, 'user', 'upgrade the cluster please', '', NULL, '', '', '', 'st-1', 1690000000100),
 ('s-old', 1, 'assistant', '', 'check versions', '[{"id":"c1","type":"function","function":{"name":"sh","arguments":"{\"cmd\":\"kubectl version\"}"}}]', '', '', '', 'st-1', 1690000000200),
 ('s-old', 2, 'tool', 'Server Version: v1.29', '', NULL, 'c1', 'sh', '', 'st-1', 1690000000300),
 ('s-old', 3, 'assistant', 'You are on 1.29; kubeadm upgrade plan comes next.', '', NULL, '', '', '', 'st-1', 1690000000400),
 ('s-live', 0, 'user', 'draft my speech', '', NULL, '', '', '', 'st-live', 1690000009000);
INSERT INTO streams VALUES ('st-1', 's-old', 1690000000100, 1690000000400, 'done'),
 ('st-live', 's-live', 1690000009000, NULL, '');
INSERT INTO journal VALUES ('st-live', 1, 's-live', 'user_message', '{}', 1690000009000),
 ('st-live', 2, 's-live', 'token', '{"text":"Ladies"}', 1690000009100);
INSERT INTO settings VALUES ('model', 'gpt'), ('provider.base_url', 'http://127.0.0.1:11434/v1');
PRAGMA user_version = 1;
`

// Every earlier schema version must migrate to the current one. A new schema version
// needs a fixture here for the version before it; the test fails until it has one.
func TestMigrateFromEveryEarlierVersion(t *testing.T) {
	fixtures := map[int]func(t *testing.T, path string){
		0: func(t *testing.T, path string) {}, // no file yet
		1: func(t *testing.T, path string) {
			db := rawDB(t, path, "_journal_mode=WAL")
			if _, err := db.Exec(schemaV1Literal + v1Rows); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		},
		2: buildV2, // migration_v3_test.go
		3: buildV3, // migration_v4_test.go
		4: buildV4, // migration_v5_test.go
		5: buildV5, // migration_v6_test.go
		6: buildV6, // migration_v7_test.go
		7: buildV7, // migration_v8_test.go
		8: buildV8, // migration_v9_test.go
	}
	for v := 0; v < SchemaVersion; v++ {
		if fixtures[v] == nil {
			t.Errorf("no fixture for schema version %d", v)
		}
	}
	for v := 0; v < SchemaVersion; v++ {
		build := fixtures[v]
		if build == nil {
			continue
		}
		t.Run("from version "+strconv.Itoa(v), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "talaria.db")
			build(t, path)
			for round := range 2 { // the second open finds nothing to do
				s, err := OpenWith(t.Context(), path, Options{AppVersion: "2.0.0"})
				if err != nil {
					t.Fatalf("open %d: %v", round, err)
				}
				checkCurrentSchema(t, s)
				switch v {
				case 1:
					checkV1Data(t, s, round)
				case 2:
					checkV2Data(t, s, round)
				case 3:
					checkV3Data(t, s, round)
				case 4:
					checkV4Data(t, s, round)
				case 5:
					checkV5Data(t, s, round)
				case 6:
					checkV6Data(t, s, round)
				case 7:
					checkV7Data(t, s, round)
				case 8:
					checkV8Data(t, s, round)
				}
				if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// An empty file (zero bytes) is a new database, as SQLite treats it.
func TestMigrateEmptyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkCurrentSchema(t, s)
}

func checkCurrentSchema(t *testing.T, s *Store) {
	t.Helper()
	var v int
	var meta, app string
	s.r.QueryRow("PRAGMA user_version").Scan(&v)
	s.r.QueryRow("SELECT value FROM meta WHERE key = 'schema_version'").Scan(&meta)
	s.r.QueryRow("SELECT value FROM meta WHERE key = 'app_version'").Scan(&app)
	if v != SchemaVersion || meta != strconv.Itoa(SchemaVersion) || app != "2.0.0" && app != "" && app != buildVersion() {
		t.Errorf("user_version %d, meta schema_version %q, app_version %q", v, meta, app)
	}
	for _, name := range []string{"drafts", "messages_fts", "sessions_fts", "sessions_list", "sessions_archived",
		"sessions_by_fork_key", "messages_fts_insert", "messages_fts_delete", "messages_fts_update",
		"sessions_fts_insert", "sessions_fts_delete", "sessions_fts_update",
		"tasks", "tasks_by_parent", "tasks_by_session", "tasks_open", "sessions_hidden",
		"attachments", "attachments_by_session", "attachments_by_message", "attachments_by_blob"} {
		if n := count(t, s, "SELECT count(*) FROM sqlite_schema WHERE name = ?", name); n != 1 {
			t.Errorf("%s missing", name)
		}
	}
	if n := count(t, s, "SELECT count(*) FROM sqlite_schema WHERE name = 'sessions_by_updated'"); n != 0 {
		t.Error("the v1 list index is still there")
	}
	for _, name := range []string{"sessions_list", "sessions_archived"} {
		var sql string
		s.r.QueryRow("SELECT sql FROM sqlite_schema WHERE name = ?", name).Scan(&sql)
		if !strings.Contains(sql, "hidden = 0") {
			t.Errorf("%s still indexes hidden sessions: %s", name, sql)
		}
	}
	if n := count(t, s, "SELECT count(*) FROM pragma_table_info('sessions') WHERE name IN ('hidden', 'parent_id')"); n != 2 {
		t.Errorf("sessions has %d of the columns hidden and parent_id", n)
	}
	var ok string
	if err := s.w.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
	checkFTS(t, s)
}

func checkV1Data(t *testing.T, s *Store, round int) {
	t.Helper()
	ctx := t.Context()
	old := mustGet(t, s, "s-old")
	want := Session{Runtime: RuntimeBuiltin, Options: "{}", ID: "s-old", Title: "Kubernetes upgrade", Model: "llama3", Workspace: "/srv", CreatedAt: 1690000000000,
		UpdatedAt: 1690000005000, Revision: 4 + 2*int64(round), MessageCount: 4} // round 0 pins and unpins
	want.Usage.InputTokens, want.Usage.OutputTokens, want.Usage.CacheReadTokens, want.Usage.CacheWriteTokens = 100, 20, 5, 1
	want.Usage.EstimatedCost = 0.5
	if old != want {
		t.Errorf("s-old = %+v\nwant    %+v", old, want)
	}
	rows := mustMessages(t, s, "s-old")
	if len(rows) != 4 || rows[1].Reasoning != "check versions" || len(rows[1].ToolCalls) != 1 ||
		rows[1].ToolCalls[0].Function.Arguments != `{"cmd":"kubectl version"}` || rows[2].ToolCallID != "c1" ||
		rows[2].Name != "sh" || rows[3].CreatedAt != 1690000000400 || rows[3].StreamID != "st-1" {
		t.Errorf("s-old rows = %+v", rows)
	}
	live := mustGet(t, s, "s-live")
	if live.Title != "My notes" || !live.TitleManual || live.ActiveStreamID != "st-live" || live.Pinned || live.ArchivedAt != 0 {
		t.Errorf("s-live = %+v", live)
	}
	if ls, _ := s.LiveStreams(ctx); len(ls) != 1 || ls[0].StreamID != "st-live" {
		t.Errorf("LiveStreams = %+v", ls)
	}
	if fs, _ := s.JournalSince(ctx, "st-live", 0); len(fs) != 2 || string(fs[1].Data) != `{"text":"Ladies"}` {
		t.Errorf("journal = %+v", fs)
	}
	if v, ok, _ := s.Setting(ctx, "provider.base_url"); !ok || v != "http://127.0.0.1:11434/v1" {
		t.Errorf("setting = %q %v", v, ok)
	}
	if _, err := s.GetSession(ctx, "s-gone"); err == nil {
		t.Error("the tombstone came back")
	}
	var title string
	s.r.QueryRow("SELECT title FROM sessions WHERE id = 's-gone'").Scan(&title)
	if title != "" {
		t.Errorf("tombstone title kept: %q", title)
	}
	list, _ := s.ListSessions(ctx, 0, 0)
	if ids(list) != "My notes,Kubernetes upgrade" {
		t.Errorf("list = %q", ids(list))
	}
	// The old rows are searchable, the tombstone is not.
	for q, want := range map[string]string{"kubeadm": "Kubernetes upgrade", "kubernetes": "Kubernetes upgrade",
		"speech": "My notes", "secret tombstone": "", "v1.29": "Kubernetes upgrade"} {
		hits, err := s.Search(ctx, q, 10)
		var got []string
		for _, h := range hits {
			got = append(got, h.Title)
		}
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("Search(%q) = %q, %v; want %q", q, got, err, want)
		}
	}
	// And the new features work on them.
	if _, err := s.SetPinned(ctx, "s-old", true); err != nil {
		t.Error(err)
	}
	if _, err := s.SetPinned(ctx, "s-old", false); err != nil {
		t.Error(err)
	}
	if err := s.SaveDraft(ctx, "s-old", "draft"); err != nil {
		t.Error(err)
	}
	if err := s.SaveDraft(ctx, "s-old", ""); err != nil {
		t.Error(err)
	}
	var n int
	if err := s.r.QueryRow("SELECT count(*) FROM messages WHERE id > 0").Scan(&n); err != nil || n != 5 {
		t.Errorf("%d messages, %v", n, err)
	}
}
