package store

import (
	"database/sql"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
)

// openTest opens a fresh store in t.TempDir with a clock that advances 1 ms per call,
// so orderings by time are deterministic.
func openTest(t *testing.T) *Store {
	t.Helper()
	s, err := OpenWith(t.Context(), filepath.Join(t.TempDir(), "talaria.db"), Options{AppVersion: "test"})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	var clock atomic.Int64
	clock.Store(1_700_000_000_000)
	s.now = func() int64 { return clock.Add(1) }
	return s
}

func mustSession(t *testing.T, s *Store, title string) Session {
	t.Helper()
	sess, err := s.CreateSession(t.Context(), NewSession{Title: title, Model: "m", Workspace: "/w"})
	if err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	return sess
}

func mustGet(t *testing.T, s *Store, id string) Session {
	t.Helper()
	sess, err := s.GetSession(t.Context(), id)
	if err != nil {
		t.Fatalf("GetSession(%s): %v", id, err)
	}
	return sess
}

func mustMessages(t *testing.T, s *Store, id string) []Message {
	t.Helper()
	ms, err := s.Messages(t.Context(), id)
	if err != nil {
		t.Fatalf("Messages(%s): %v", id, err)
	}
	return ms
}

// count runs a COUNT query on the write connection (it sees everything committed).
func count(t *testing.T, s *Store, query string, args ...any) int {
	t.Helper()
	var n int
	if err := s.w.QueryRowContext(t.Context(), query, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// rawDB opens path with the driver directly, bypassing the store.
func rawDB(t *testing.T, path, query string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, fileURI(path, query))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// snapshotDir returns every file in dir with its contents.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}
