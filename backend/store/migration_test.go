package store

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// writeNewerDatabase makes a database as a future Talaria would leave it: the current
// schema plus a table we do not know, user_version above ours, and meta naming it.
func writeNewerDatabase(t *testing.T, path string) {
	t.Helper()
	s, err := OpenWith(t.Context(), path, Options{AppVersion: "1.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, s, "from the future")
	if _, err := s.w.Exec(`CREATE TABLE future_things(x);
		UPDATE meta SET value = '9.9.9' WHERE key = 'app_version';
		PRAGMA user_version = ` + strconv.Itoa(SchemaVersion+1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestTooNewIsRefusedAndUntouched(t *testing.T) {
	tests := []struct {
		name     string
		wantHave int
		// prepare leaves a newer database in dir and returns its path.
		prepare func(t *testing.T, dir string) string
	}{
		{"closed cleanly", SchemaVersion + 1, func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "talaria.db")
			writeNewerDatabase(t, path)
			return path
		}},
		{"newer app crashed with a write-ahead log", SchemaVersion + 2, func(t *testing.T, dir string) string {
			// Build the newer file elsewhere, then copy the main file and its -wal while
			// a connection still holds them: that is what a kill -9 leaves behind.
			src := filepath.Join(t.TempDir(), "talaria.db")
			writeNewerDatabase(t, src)
			db := rawDB(t, src, "_journal_mode=WAL")
			if _, err := db.Exec("PRAGMA wal_autocheckpoint = 0; PRAGMA user_version = " + strconv.Itoa(SchemaVersion+2)); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "talaria.db")
			for _, suffix := range []string{"", "-wal"} {
				b, err := os.ReadFile(src + suffix)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path+suffix, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if v, _ := headerUserVersion(path); v != SchemaVersion+1 {
				t.Fatalf("setup: header version %d, want the newer version only in the WAL", v)
			}
			return path
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.prepare(t, dir)
			before := snapshotDir(t, dir)

			s, err := Open(t.Context(), path)
			if err == nil {
				s.Close()
				t.Fatal("Open accepted a database written by a newer schema")
			}
			var tooNew *TooNewError
			if !errors.As(err, &tooNew) {
				t.Fatalf("error %v (%T) is not a *TooNewError", err, err)
			}
			if tooNew.Have != tt.wantHave || tooNew.Want != SchemaVersion || tooNew.AppVersion != "9.9.9" {
				t.Errorf("TooNewError = %+v", tooNew)
			}
			if msg := err.Error(); !strings.Contains(msg, "update Talaria") || !strings.Contains(msg, "9.9.9") {
				t.Errorf("message does not say to update Talaria: %q", msg)
			}

			after := snapshotDir(t, dir)
			for name, b := range before {
				if after[name] != b {
					t.Errorf("%s changed", name)
				}
			}
			// Without a write-ahead log not even -wal or -shm files may appear. (With one,
			// SQLite needs a -shm to read it; the database and log stay unchanged.)
			if len(before) == 1 && len(after) != 1 {
				t.Errorf("files appeared next to %s: %v", filepath.Base(path), keys(after))
			}
		})
	}
}

// withMigration appends a migration for the duration of the test (tests touching the
// package-level list must not run in parallel).
func withMigration(t *testing.T, m migration) {
	t.Helper()
	saved := migrations
	migrations = append(append([]migration(nil), saved...), m)
	t.Cleanup(func() { migrations = saved })
}

func TestMigrateForward(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	sess := mustSession(t, s, "before the next version")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st1", Message{Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	next := SchemaVersion + 1
	withMigration(t, migration{version: next, name: "a future column",
		up: execSQL(`ALTER TABLE sessions ADD COLUMN future_flag INTEGER NOT NULL DEFAULT 0`)})

	for round := range 2 { // the second open must find nothing to do
		s, err = Open(t.Context(), path)
		if err != nil {
			t.Fatalf("open %d: %v", round, err)
		}
		var v int
		var meta string
		s.r.QueryRow("PRAGMA user_version").Scan(&v)
		s.r.QueryRow("SELECT value FROM meta WHERE key = 'schema_version'").Scan(&meta)
		if v != next || meta != strconv.Itoa(next) {
			t.Errorf("open %d: user_version %d, meta %q; want %d", round, v, meta, next)
		}
		if n := count(t, s, "SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'future_flag'"); n != 1 {
			t.Errorf("open %d: column future_flag missing", round)
		}
		if got := mustGet(t, s, sess.ID); got.Title != "before the next version" || got.ActiveStreamID != "st1" || got.MessageCount != 1 {
			t.Errorf("open %d: session after migration = %+v", round, got)
		}
		s.Close()
	}
}

func TestFailedMigrationLeavesPreviousVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()

	boom := errors.New("boom")
	withMigration(t, migration{version: SchemaVersion + 1, name: "half done", up: func(ctx context.Context, tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE sessions ADD COLUMN half INTEGER`); err != nil {
			return err
		}
		return boom
	}})
	if s, err := Open(t.Context(), path); !errors.Is(err, boom) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open = %v, want the migration's error", err)
	}

	db := rawDB(t, path, "mode=ro")
	var v, half int
	db.QueryRow("PRAGMA user_version").Scan(&v)
	db.QueryRow("SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'half'").Scan(&half)
	if v != SchemaVersion || half != 0 {
		t.Errorf("after a failed migration: user_version %d, half column %d; want %d and 0", v, half, SchemaVersion)
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// Open checks the version before it connects; migrate checks again under the write
// lock, in case another process upgraded the file in between.
func TestMigrateRefusesTooNewUnderLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	writeNewerDatabase(t, path)
	db := rawDB(t, path, "_txlock=immediate")
	err := migrate(t.Context(), db, "test", 0)
	var tooNew *TooNewError
	if !errors.As(err, &tooNew) || tooNew.Have != SchemaVersion+1 {
		t.Fatalf("migrate = %v, want *TooNewError", err)
	}
	var app string
	db.QueryRow("SELECT value FROM meta WHERE key = 'app_version'").Scan(&app)
	if app != "9.9.9" {
		t.Errorf("migrate wrote app_version %q into a newer database", app)
	}
}
