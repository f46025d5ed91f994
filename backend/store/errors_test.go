//go:build cgo

package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"

	"talaria/sidecar/protocol"
)

func TestClassify(t *testing.T) {
	sqliteErr := func(code sqlite3.ErrNo, ext sqlite3.ErrNoExtended) error {
		return fmt.Errorf("exec: %w", sqlite3.Error{Code: code, ExtendedCode: ext})
	}
	pathErr := func(errno syscall.Errno) error {
		return &fs.PathError{Op: "open", Path: "/x", Err: errno}
	}
	other := errors.New("something else")
	tests := []struct {
		name string
		in   error
		want error // nil: returned unchanged
	}{
		{"SQLITE_READONLY", sqliteErr(sqlite3.ErrReadonly, 0), ErrReadOnly},
		{"SQLITE_PERM", sqliteErr(sqlite3.ErrPerm, 0), ErrReadOnly},
		{"SQLITE_FULL", sqliteErr(sqlite3.ErrFull, 0), ErrDiskFull},
		{"SQLITE_BUSY", sqliteErr(sqlite3.ErrBusy, 0), ErrLocked},
		{"SQLITE_LOCKED", sqliteErr(sqlite3.ErrLocked, 0), ErrLocked},
		{"SQLITE_CORRUPT", sqliteErr(sqlite3.ErrCorrupt, 0), ErrCorrupt},
		{"SQLITE_NOTADB", sqliteErr(sqlite3.ErrNotADB, 0), ErrCorrupt},
		{"primary key", sqliteErr(sqlite3.ErrConstraint, sqlite3.ErrConstraintPrimaryKey), ErrConflict},
		{"unique", sqliteErr(sqlite3.ErrConstraint, sqlite3.ErrConstraintUnique), ErrConflict},
		{"foreign key stays a plain error", sqliteErr(sqlite3.ErrConstraint, sqlite3.ErrConstraintForeignKey), nil},
		{"ENOSPC", pathErr(syscall.ENOSPC), ErrDiskFull},
		{"EACCES", pathErr(syscall.EACCES), ErrReadOnly},
		{"EROFS", pathErr(syscall.EROFS), ErrReadOnly},
		{"unknown", other, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(tt.in)
			if tt.want == nil {
				if got != tt.in {
					t.Errorf("classify changed %v into %v", tt.in, got)
				}
				return
			}
			if !errors.Is(got, tt.want) {
				t.Errorf("classify(%v) = %v, want errors.Is %v", tt.in, got, tt.want)
			}
			if !errors.Is(got, tt.in) && !strings.Contains(got.Error(), tt.in.Error()) {
				t.Errorf("classify lost the original error: %v", got)
			}
		})
	}
	var se sqlite3.Error
	if !errors.As(wrap("op", sqliteErr(sqlite3.ErrFull, 0)), &se) || se.Code != sqlite3.ErrFull {
		t.Error("the sqlite3.Error is no longer reachable with errors.As")
	}
}

func TestErrorMessagesSayWhatToDo(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{ErrReadOnly, "make the data folder writable"},
		{ErrDiskFull, "free some disk space"},
		{ErrLocked, "close other copies of Talaria"},
		{ErrCorrupt, "restore it from a backup"},
		{&TooNewError{Have: 3, Want: 1}, "update Talaria"},
		{&BusyError{SessionID: "s1", StreamID: "st9"}, "stream st9 is still running"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.err.Error(), tt.want) {
			t.Errorf("%q does not contain %q", tt.err.Error(), tt.want)
		}
	}
}

// chmod cannot make a folder read-only for root, so this runs only as another user.
func TestOpenInReadOnlyDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o700) })
	if f, err := os.CreateTemp(dir, "probe"); err == nil {
		f.Close()
		t.Skip("chmod 0500 does not stop this user from writing (running as root); see TestOpenReadOnlyDatabase")
	}
	_, err := Open(t.Context(), filepath.Join(dir, "talaria.db"))
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Open in a read-only folder = %v, want ErrReadOnly", err)
	}
}

// A genuine SQLITE_READONLY without chmod: the write connection is opened with the
// SQLite URI parameter mode=ro, as SQLite does by itself when the file is not writable.
// This stands in for a read-only folder or mount, which root cannot simulate by chmod.
func TestOpenReadOnlyDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenWith(t.Context(), path, Options{writerReadOnly: true})
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded on a read-only database")
	}
	if !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Open = %v, want ErrReadOnly", err)
	}
	var se sqlite3.Error
	if !errors.As(err, &se) || se.Code != sqlite3.ErrReadonly {
		t.Errorf("not a real SQLITE_READONLY: %v", err)
	}
}

// SQLite reports SQLITE_FULL when the file would grow past max_page_count, exactly as
// when the disk fills up.
func TestDiskFull(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "full")
	var pages int
	if err := s.w.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	big := Message{Content: strings.Repeat("x", 1<<20)}
	_, err := s.AdmitTurn(t.Context(), sess.ID, "st1", big)
	if !errors.Is(err, ErrDiskFull) {
		t.Fatalf("AdmitTurn on a full disk = %v, want ErrDiskFull", err)
	}
	if got := mustGet(t, s, sess.ID); got.ActiveStreamID != "" || got.MessageCount != 0 {
		t.Errorf("a failed admission left state behind: %+v", got)
	}
	if _, err := s.w.Exec("PRAGMA max_page_count = 1000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st1", big); err != nil {
		t.Fatalf("after space was freed: %v", err)
	}
}

func TestLockedByAnotherProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	s, err := OpenWith(t.Context(), path, Options{BusyTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// Another program takes the write lock and keeps it.
	other := rawDB(t, path, "")
	conn, err := other.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(t.Context(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	start := time.Now()
	_, err = s.CreateSession(t.Context(), NewSession{Title: "t"})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("CreateSession while locked = %v, want ErrLocked", err)
	}
	if waited := time.Since(start); waited < 90*time.Millisecond {
		t.Errorf("gave up after %v, before the busy timeout", waited)
	}
	_, err = OpenWith(t.Context(), path, Options{BusyTimeout: 50 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Errorf("Open while locked = %v, want ErrLocked", err)
	}

	if _, err := conn.ExecContext(t.Context(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if _, err := s.CreateSession(t.Context(), NewSession{Title: "t"}); err != nil {
		t.Fatalf("after the lock was released: %v", err)
	}
}

func TestOpenCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "talaria.db")
	junk := []byte(strings.Repeat("this is not a database\n", 100))
	if err := os.WriteFile(path, junk, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(t.Context(), path)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open on junk = %v, want ErrCorrupt", err)
	}
	if b, _ := os.ReadFile(path); string(b) != string(junk) {
		t.Error("Open modified a file that is not a database")
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := Open(t.Context(), ""); !errors.Is(err, ErrInvalid) {
		t.Errorf("Open(\"\") = %v, want ErrInvalid", err)
	}
}

// A full disk during settlement: SettleTurn fails with ErrDiskFull and a message that
// says what to do, nothing of it is written, every earlier row is intact, and once
// space is freed the same settlement succeeds.
func TestDiskFullDuringSettle(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "full")
	turn(t, s, sess.ID, "st1", "first question", "first answer")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st2", Message{Content: "second question"}); err != nil {
		t.Fatal(err)
	}
	before := mustMessages(t, s, sess.ID)
	sessBefore := mustGet(t, s, sess.ID)

	var pages int
	if err := s.w.QueryRow("PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	if _, err := s.w.Exec(fmt.Sprintf("PRAGMA max_page_count = %d", pages)); err != nil {
		t.Fatal(err)
	}
	answer := []Message{{Role: "assistant", Content: strings.Repeat("a long answer ", 1<<16)}}
	err := s.SettleTurn(t.Context(), sess.ID, "st2", answer, protocol.Usage{OutputTokens: 7}, TerminalDone)
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "free some disk space") {
		t.Fatalf("SettleTurn on a full disk = %v, want ErrDiskFull saying what to do", err)
	}
	after := mustMessages(t, s, sess.ID)
	if len(after) != len(before) {
		t.Fatalf("%d rows after the failed settlement, %d before", len(after), len(before))
	}
	for i := range before {
		if after[i].ID != before[i].ID || after[i].Content != before[i].Content {
			t.Errorf("row %d changed: %+v -> %+v", i, before[i], after[i])
		}
	}
	if got := mustGet(t, s, sess.ID); got != sessBefore {
		t.Errorf("session changed: %+v -> %+v", sessBefore, got)
	}
	if live, _ := s.LiveStreams(t.Context()); len(live) != 1 || live[0].StreamID != "st2" {
		t.Errorf("the turn is no longer live (it could not be settled later): %+v", live)
	}
	// Other writes fail the same way and leave the file consistent.
	if _, err := s.CreateSession(t.Context(), NewSession{Title: strings.Repeat("t", 1<<16)}); !errors.Is(err, ErrDiskFull) {
		t.Errorf("CreateSession on a full disk = %v", err)
	}
	var ok string
	if err := s.w.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
	checkFTS(t, s)

	if _, err := s.w.Exec("PRAGMA max_page_count = 1000000"); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurn(t.Context(), sess.ID, "st2", answer, protocol.Usage{OutputTokens: 7}, TerminalDone); err != nil {
		t.Fatalf("after space was freed: %v", err)
	}
	if got := mustMessages(t, s, sess.ID); len(got) != len(before)+1 || got[len(got)-1].Content != answer[0].Content {
		t.Errorf("rows after the retry: %d", len(got))
	}
}
