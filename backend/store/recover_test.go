package store

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	fixtureSessions = 120
	fixtureRows     = 25
)

// fixtureText is the content of row j of session i: unique, so every recovered row can
// be checked against what was written.
func fixtureText(i, j int) string {
	return fmt.Sprintf("s%03d m%03d %s", i, j, strings.Repeat("lorem ipsum dolor ", 8))
}

// buildRecoveryFixture writes a closed database (no -wal) with fixtureSessions
// sessions of fixtureRows rows each, a tombstone, settings and a draft, and returns
// the session ids in creation order.
func buildRecoveryFixture(t *testing.T, path string) []string {
	t.Helper()
	s, err := OpenWith(t.Context(), path, Options{AppVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range fixtureSessions {
		sess, err := s.CreateSession(t.Context(), NewSession{Title: fmt.Sprintf("session %03d", i), Model: "m"})
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]Message, fixtureRows)
		for j := range rows {
			rows[j] = Message{Role: []string{"user", "assistant"}[j%2], Content: fixtureText(i, j)}
		}
		if _, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, rows); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, sess.ID)
	}
	gone, _ := s.CreateSession(t.Context(), NewSession{Title: "deleted"})
	if err := s.DeleteSession(t.Context(), gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.SetSetting(t.Context(), "model", "kept-model"); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveDraft(t.Context(), ids[0], "unsent words"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPinned(t.Context(), ids[1], true); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if fileExists(path + "-wal") {
		t.Fatal("setup: the write-ahead log was not checkpointed at close")
	}
	return ids
}

// tableLeaves walks the table b-tree rooted at root in the database file (see
// https://www.sqlite.org/fileformat.html) and returns its leaf pages in key order with
// the number of rows on each.
func tableLeaves(t *testing.T, file []byte, root int) (pages, rows []int) {
	t.Helper()
	pageSize := int(binary.BigEndian.Uint16(file[16:18]))
	if pageSize == 1 {
		pageSize = 65536
	}
	var walk func(pg int)
	walk = func(pg int) {
		p := file[(pg-1)*pageSize : pg*pageSize]
		hdr := 0
		if pg == 1 {
			hdr = 100
		}
		cells := int(binary.BigEndian.Uint16(p[hdr+3:]))
		switch p[hdr] {
		case 0x0d: // table leaf
			pages, rows = append(pages, pg), append(rows, cells)
		case 0x05: // table interior: child pointers, then the right-most one
			for c := range cells {
				off := int(binary.BigEndian.Uint16(p[hdr+12+2*c:]))
				walk(int(binary.BigEndian.Uint32(p[off:])))
			}
			walk(int(binary.BigEndian.Uint32(p[hdr+8:])))
		default:
			t.Fatalf("page %d has type %#x, not a table b-tree page", pg, p[hdr])
		}
	}
	walk(root)
	return pages, rows
}

// damagePages overwrites whole pages with random bytes, as a failing disk might.
func damagePages(t *testing.T, path string, pages ...int) {
	t.Helper()
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pageSize := int(binary.BigEndian.Uint16(file[16:18]))
	rng := rand.New(rand.NewPCG(1, 2))
	for _, pg := range pages {
		p := file[(pg-1)*pageSize : pg*pageSize]
		for i := range p {
			p[i] = byte(rng.Uint32())
		}
		p[0] = 0xff // never a valid page type
	}
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
}

func rootPage(t *testing.T, path, table string) int {
	t.Helper()
	var root int
	if err := rawDB(t, path, "mode=ro").QueryRow(`SELECT rootpage FROM sqlite_schema WHERE name = ?`, table).Scan(&root); err != nil {
		t.Fatal(err)
	}
	return root
}

func TestRecoverDamagedPages(t *testing.T) {
	tests := []struct {
		name  string
		table string
		pick  func(n int) []int // indexes of the leaves to damage
	}{
		{"messages: one page", "messages", func(n int) []int { return []int{n / 3} }},
		{"messages: pages here and there", "messages", func(n int) []int { return []int{1, n / 2, n/2 + 1, n - 2} }},
		{"messages: the first and the last page", "messages", func(n int) []int { return []int{0, n - 1} }},
		{"sessions: one page", "sessions", func(n int) []int { return []int{n / 2} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "talaria.db")
			ids := buildRecoveryFixture(t, path)
			file, _ := os.ReadFile(path)
			leaves, perLeaf := tableLeaves(t, file, rootPage(t, path, tt.table))
			if len(leaves) < 3 {
				t.Fatalf("setup: only %d leaves in %s", len(leaves), tt.table)
			}
			lost := 0
			var damaged []int
			for _, i := range tt.pick(len(leaves)) {
				damaged = append(damaged, leaves[i])
				lost += perLeaf[i]
			}
			damagePages(t, path, damaged...)
			damagedBytes, _ := os.ReadFile(path)

			rep, err := CheckAndRecover(t.Context(), path)
			if err != nil {
				t.Fatal(err)
			}
			if !rep.Recovered || len(rep.Problems) == 0 || rep.At == 0 {
				t.Fatalf("report = %+v", rep)
			}
			if b, err := os.ReadFile(rep.BackupPath); err != nil || !bytes.Equal(b, damagedBytes) {
				t.Errorf("backup %s is not the damaged file: %v", rep.BackupPath, err)
			}
			if !strings.HasPrefix(filepath.Base(rep.BackupPath), "talaria.db.damaged-") || filepath.Dir(rep.BackupPath) != dir {
				t.Errorf("backup path %s", rep.BackupPath)
			}
			for _, want := range []string{"damaged", rep.BackupPath, fmt.Sprint(rep.Messages, " messages")} {
				if !strings.Contains(rep.Message, want) {
					t.Errorf("message %q lacks %q", rep.Message, want)
				}
			}
			for _, leftover := range []string{recoveringSuffix, recoveredSuffix, recoveringSuffix + "-wal"} {
				if fileExists(path + leftover) {
					t.Errorf("%s left behind", leftover)
				}
			}

			s, err := OpenWith(t.Context(), path, Options{AppVersion: "test"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			checkCurrentSchemaQuiet(t, s)
			wantMessages := fixtureSessions * fixtureRows
			wantPlaceholders := 0
			if tt.table == "messages" {
				wantMessages -= lost
			} else {
				wantPlaceholders = lost // their rows survive under a placeholder session
			}
			st, _ := s.Stats(t.Context())
			if rep.Messages != wantMessages || st.Messages != int64(wantMessages) {
				t.Errorf("recovered %d messages (stored %d), want %d (%d were on damaged pages)",
					rep.Messages, st.Messages, wantMessages, lost)
			}
			if rep.Sessions != fixtureSessions || st.Sessions != fixtureSessions {
				t.Errorf("recovered %d sessions (stored %d), want %d", rep.Sessions, st.Sessions, fixtureSessions)
			}
			if n := count(t, s, "SELECT count(*) FROM sessions WHERE title = 'Recovered conversation'"); n != wantPlaceholders {
				t.Errorf("%d placeholder sessions, want %d", n, wantPlaceholders)
			}
			// Every recovered row is exactly what was written, in order, without gaps.
			for i, id := range ids {
				sess, err := s.GetSession(t.Context(), id)
				if err != nil {
					t.Fatalf("session %d: %v", i, err)
				}
				rows := mustMessages(t, s, id)
				if sess.MessageCount != len(rows) || sess.ActiveStreamID != "" {
					t.Errorf("session %d = %+v with %d rows", i, sess, len(rows))
				}
				last := -1
				for p, m := range rows {
					var si, sj int
					fmt.Sscanf(m.Content, "s%03d m%03d", &si, &sj)
					if m.Position != p || si != i || sj <= last || m.Content != fixtureText(si, sj) ||
						m.Role != []string{"user", "assistant"}[sj%2] {
						t.Fatalf("session %d row %d = %+v", i, p, m)
					}
					last = sj
				}
			}
			if v, ok, _ := s.Setting(t.Context(), "model"); !ok || v != "kept-model" {
				t.Errorf("setting lost: %q", v)
			}
			if tt.table == "messages" {
				if d, _ := s.Draft(t.Context(), ids[0]); d.Text != "unsent words" {
					t.Errorf("draft lost: %+v", d)
				}
				if got := mustGet(t, s, ids[1]); !got.Pinned || got.Title != "session 001" {
					t.Errorf("session 1 = %+v", got)
				}
			}
			if hits, err := s.Search(t.Context(), "lorem", 5); err != nil || len(hits) != 5 {
				t.Errorf("search after recovery: %d hits, %v", len(hits), err)
			}
			if n := count(t, s, "SELECT count(*) FROM sessions WHERE deleted_at IS NOT NULL OR title = 'deleted'"); n != 0 {
				t.Error("the tombstone was recovered")
			}

			// The report waits for the window, then goes when dismissed.
			saved, ok, err := s.RecoveryReport(t.Context())
			if err != nil || !ok || saved.BackupPath != rep.BackupPath || saved.Messages != rep.Messages {
				t.Errorf("saved report = %+v, %v, %v", saved, ok, err)
			}
			if err := s.DismissRecoveryReport(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, ok, _ := s.RecoveryReport(t.Context()); ok {
				t.Error("the report is still there after dismissing it")
			}
			s.Close()
			// The next start finds a healthy file.
			if rep, err := CheckAndRecover(t.Context(), path); err != nil || rep.Recovered {
				t.Errorf("second check = %+v, %v", rep, err)
			}
		})
	}
}

// checkCurrentSchemaQuiet is checkCurrentSchema without the app version check.
func checkCurrentSchemaQuiet(t *testing.T, s *Store) {
	t.Helper()
	var ok string
	if err := s.w.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
	checkFTS(t, s)
}

func TestCheckLeavesOtherFilesAlone(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, path string)
	}{
		{"no file", func(t *testing.T, path string) {}},
		{"empty file", func(t *testing.T, path string) { os.WriteFile(path, nil, 0o600) }},
		{"healthy", func(t *testing.T, path string) { buildRecoveryFixture(t, path) }},
		{"healthy, rows only in the write-ahead log", func(t *testing.T, path string) {
			// As a crash leaves it (the connection stays open until the test ends).
			buildRecoveryFixture(t, path)
			db := rawDB(t, path, "_journal_mode=WAL")
			if _, err := db.Exec("PRAGMA wal_autocheckpoint = 0; INSERT INTO settings VALUES('in-wal', 'x')"); err != nil {
				t.Fatal(err)
			}
		}},
		{"written by a newer Talaria", func(t *testing.T, path string) { writeNewerDatabase(t, path) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "talaria.db")
			tt.prepare(t, path)
			before := snapshotDir(t, filepath.Dir(path))
			rep, err := CheckAndRecover(t.Context(), path)
			if err != nil || rep.Recovered || rep.BackupPath != "" {
				t.Fatalf("CheckAndRecover = %+v, %v", rep, err)
			}
			after := snapshotDir(t, filepath.Dir(path))
			for name, b := range before {
				if strings.HasSuffix(name, "-shm") {
					continue // a reader may rebuild the shared-memory index
				}
				if after[name] != b {
					t.Errorf("%s changed", name)
				}
			}
			for name := range after {
				if _, ok := before[name]; !ok && !strings.HasSuffix(name, "-shm") && !strings.HasSuffix(name, "-wal") {
					t.Errorf("%s appeared", name)
				}
			}
		})
	}
}

func TestRecoverFileThatIsNotADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	junk := []byte(strings.Repeat("this is not a database\n", 300))
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	rep, err := CheckAndRecover(t.Context(), path)
	if err != nil || !rep.Recovered || rep.Sessions != 0 || rep.Messages != 0 {
		t.Fatalf("report = %+v, %v", rep, err)
	}
	if b, _ := os.ReadFile(rep.BackupPath); !bytes.Equal(b, junk) {
		t.Error("the backup is not the original file")
	}
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open after recovery: %v", err)
	}
	defer s.Close()
	if _, ok, _ := s.RecoveryReport(t.Context()); !ok {
		t.Error("no saved report")
	}
}

// A crash after the rebuilt file was complete but before it replaced the damaged one:
// the next check finishes the swap, and the damaged file's stale -wal is never applied
// to the new file.
func TestRecoverFinishesAnInterruptedSwap(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "talaria.db")
	buildRecoveryFixture(t, path)
	damagePages(t, path, 2)
	if err := os.WriteFile(path+"-wal", []byte("stale log of the damaged file"), 0o600); err != nil {
		t.Fatal(err)
	}
	ready := filepath.Join(t.TempDir(), "ready.db")
	s, err := Open(t.Context(), ready)
	if err != nil {
		t.Fatal(err)
	}
	mustSession(t, s, "from the rebuilt file")
	s.Close()
	if err := selfContained(t.Context(), ready); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(ready)
	if err := os.WriteFile(path+recoveredSuffix, b, 0o600); err != nil {
		t.Fatal(err)
	}

	rep, err := CheckAndRecover(t.Context(), path)
	if err != nil || rep.Recovered {
		t.Fatalf("CheckAndRecover = %+v, %v; want the finished swap to be healthy", rep, err)
	}
	if fileExists(path+recoveredSuffix) || fileExists(path+"-wal") {
		t.Error("swap left files behind")
	}
	s, err = Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if list, _ := s.ListSessions(t.Context(), 0, 0); len(list) != 1 || list[0].Title != "from the rebuilt file" {
		t.Errorf("sessions after the swap: %+v", list)
	}
}
