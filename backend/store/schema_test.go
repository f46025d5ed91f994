package store

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestNewDatabaseGetsCurrentVersion(t *testing.T) {
	tests := []struct {
		name string
		rel  string // path under t.TempDir
	}{
		{"plain", "talaria.db"},
		{"missing folders are created", "a/b/c/talaria.db"},
		{"URI characters in the path", "we?ird #dir %41/talaria.db"},
		{"spaces and unicode", "Application Support/Tαlaria/talaria.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tt.rel)
			s, err := OpenWith(t.Context(), path, Options{AppVersion: "1.2.3"})
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if s.Path() != path {
				t.Errorf("Path() = %q, want %q", s.Path(), path)
			}
			if _, err := os.Stat(path); err != nil {
				t.Fatalf("database file not at the given path: %v", err)
			}
			var v int
			if err := s.w.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
				t.Errorf("user_version = %d, %v; want %d", v, err, SchemaVersion)
			}
			meta := map[string]string{}
			rows, err := s.r.Query("SELECT key, value FROM meta")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k, v string
				rows.Scan(&k, &v)
				meta[k] = v
			}
			rows.Close()
			if meta["schema_version"] != strconv.Itoa(SchemaVersion) || meta["app_version"] != "1.2.3" || meta["created_at"] == "" {
				t.Errorf("meta = %v", meta)
			}
			for _, table := range []string{"meta", "sessions", "messages", "journal", "streams", "settings",
				"drafts", "messages_fts", "sessions_fts"} {
				if n := count(t, s, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", table); n != 1 {
					t.Errorf("table %s missing", table)
				}
			}
			st, err := s.Stats(t.Context())
			if err != nil || st.SchemaVersion != SchemaVersion {
				t.Errorf("Stats = %+v, %v", st, err)
			}
		})
	}
}

func TestPragmas(t *testing.T) {
	s := openTest(t)
	tests := []struct {
		pragma string
		want   string
	}{
		{"journal_mode", "wal"},
		{"foreign_keys", "1"},
		{"busy_timeout", "5000"},
		{"synchronous", "1"}, // NORMAL
	}
	for _, tt := range tests {
		t.Run(tt.pragma, func(t *testing.T) {
			var got string
			if err := s.w.QueryRow("PRAGMA " + tt.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("writer PRAGMA %s = %s, want %s", tt.pragma, got, tt.want)
			}
		})
	}
	if s.w.Stats().MaxOpenConnections != 1 {
		t.Errorf("write pool allows %d connections, want 1", s.w.Stats().MaxOpenConnections)
	}
	// The read pool really is read-only.
	if _, err := s.r.Exec("INSERT INTO settings(key, value) VALUES('x', 'y')"); err == nil {
		t.Error("read pool accepted a write")
	}
}

func TestReopenIsNoOp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := OpenWith(t.Context(), path, Options{AppVersion: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	sess := mustSession(t, s, "kept")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	s, err = OpenWith(t.Context(), path, Options{AppVersion: "1.0.0"})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	if got := mustGet(t, s, sess.ID); got.Title != "kept" {
		t.Errorf("session after reopen = %+v", got)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Error("reopening a current database with the same app version changed the file")
	}

	// A new app version is recorded, the schema is not touched.
	s, err = OpenWith(t.Context(), path, Options{AppVersion: "1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var app string
	var v int
	s.r.QueryRow("SELECT value FROM meta WHERE key = 'app_version'").Scan(&app)
	s.r.QueryRow("PRAGMA user_version").Scan(&v)
	if app != "1.1.0" || v != SchemaVersion {
		t.Errorf("app_version = %q, user_version = %d", app, v)
	}
}

func TestMigrationsAreContiguous(t *testing.T) {
	for i, m := range migrations {
		if m.version != i+1 {
			t.Errorf("migrations[%d].version = %d, want %d", i, m.version, i+1)
		}
	}
	if latestVersion() != SchemaVersion {
		t.Errorf("last migration is %d, SchemaVersion is %d", latestVersion(), SchemaVersion)
	}
}

// The FTS5 search needs the sqlite_fts5 build tag; fail early, and clearly, without it.
func TestFTS5Available(t *testing.T) {
	s := openTest(t)
	if _, err := s.w.Exec("CREATE VIRTUAL TABLE temp.fts_probe USING fts5(body)"); err != nil {
		t.Fatalf("FTS5 unavailable (build with -tags sqlite_fts5): %v", err)
	}
}
