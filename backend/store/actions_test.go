package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"talaria/sidecar/protocol"
)

func ids(ss []Session) string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Title)
	}
	return strings.Join(out, ",")
}

// turn admits and settles one turn: a user row and an assistant row.
func turn(t *testing.T, s *Store, sessionID, stream, user, answer string) {
	t.Helper()
	if _, err := s.AdmitTurn(t.Context(), sessionID, stream, Message{Content: user}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurn(t.Context(), sessionID, stream, []Message{{Role: "assistant", Content: answer}},
		protocol.Usage{InputTokens: 3, OutputTokens: 4}, TerminalDone); err != nil {
		t.Fatal(err)
	}
}

func TestPinAndArchiveOrderTheLists(t *testing.T) {
	s := openTest(t)
	a := mustSession(t, s, "a")
	b := mustSession(t, s, "b")
	c := mustSession(t, s, "c")
	d := mustSession(t, s, "d")
	steps := []struct {
		name         string
		do           func() (Session, error)
		wantList     string
		wantArchived string
	}{
		{"newest first", nil, "d,c,b,a", ""},
		{"pin a", func() (Session, error) { return s.SetPinned(t.Context(), a.ID, true) }, "a,d,c,b", ""},
		{"pin b: pinned ones newest first", func() (Session, error) { return s.SetPinned(t.Context(), b.ID, true) }, "b,a,d,c", ""},
		{"pin b again changes nothing", func() (Session, error) { return s.SetPinned(t.Context(), b.ID, true) }, "b,a,d,c", ""},
		{"archive d", func() (Session, error) { return s.SetArchived(t.Context(), d.ID, true) }, "b,a,c", "d"},
		{"archive a pinned one", func() (Session, error) { return s.SetArchived(t.Context(), a.ID, true) }, "b,c", "d,a"},
		{"unpin b", func() (Session, error) { return s.SetPinned(t.Context(), b.ID, false) }, "c,b", "d,a"},
		{"unarchive a: pinned again on top", func() (Session, error) { return s.SetArchived(t.Context(), a.ID, false) }, "a,c,b", "d"},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			if st.do != nil {
				before := map[string]Session{}
				for _, x := range []Session{a, b, c, d} {
					before[x.ID] = mustGetAny(t, s, x.ID)
				}
				got, err := st.do()
				if err != nil {
					t.Fatal(err)
				}
				if back := mustGetAny(t, s, got.ID); back != got {
					t.Errorf("returned %+v, stored %+v", got, back)
				}
				if got.UpdatedAt != before[got.ID].UpdatedAt {
					t.Error("pin/archive moved UpdatedAt")
				}
				changed := got.Pinned != before[got.ID].Pinned || (got.ArchivedAt != 0) != (before[got.ID].ArchivedAt != 0)
				if changed != (got.Revision > before[got.ID].Revision) {
					t.Errorf("revision %d -> %d (changed %v)", before[got.ID].Revision, got.Revision, changed)
				}
			}
			list, err := s.ListSessions(t.Context(), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			archived, err := s.ListArchivedSessions(t.Context(), 0, 0)
			if err != nil {
				t.Fatal(err)
			}
			if ids(list) != st.wantList || ids(archived) != st.wantArchived {
				t.Errorf("list %q archived %q; want %q and %q", ids(list), ids(archived), st.wantList, st.wantArchived)
			}
		})
	}
}

// mustGetAny is mustGet that also returns archived sessions (GetSession does).
func mustGetAny(t *testing.T, s *Store, id string) Session { t.Helper(); return mustGet(t, s, id) }

func TestArchivedListNeedsNoSort(t *testing.T) {
	s := openTest(t)
	for _, q := range []string{listSessionsSQL, listArchivedSQL} {
		rows, err := s.r.Query("EXPLAIN QUERY PLAN "+q, 50, 0)
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			rows.Scan(&id, &parent, &notused, &detail)
			plan = append(plan, detail)
		}
		rows.Close()
		if joined := strings.Join(plan, "; "); strings.Contains(joined, "TEMP B-TREE") || !strings.Contains(joined, "USING INDEX") {
			t.Errorf("plan of %q: %s", q, joined)
		}
	}
}

func TestRenameStopsAutomaticTitles(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr error
	}{
		{"  My   project\tnotes ", "My project notes", nil},
		{strings.Repeat("é", MaxTitleRunes+10), strings.Repeat("é", MaxTitleRunes), nil},
		{" \n\t ", "", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.10q", tt.in), func(t *testing.T) {
			s := openTest(t)
			sess := mustSession(t, s, "")
			got, err := s.RenameSession(t.Context(), sess.ID, tt.in)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("RenameSession = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if back := mustGet(t, s, sess.ID); back != sess {
					t.Errorf("a refused rename changed the session: %+v", back)
				}
				return
			}
			if got.Title != tt.want || !got.TitleManual || got.Revision != sess.Revision+1 {
				t.Errorf("renamed = %+v", got)
			}
			if err := s.SetTitle(t.Context(), sess.ID, "automatic", false); err != nil {
				t.Fatal(err)
			}
			if back := mustGet(t, s, sess.ID); back.Title != tt.want {
				t.Errorf("an automatic title replaced the manual one: %q", back.Title)
			}
		})
	}
}

func TestDrafts(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "d")
	other := mustSession(t, s, "o")
	steps := []struct {
		text    string
		want    string
		wantErr error
	}{
		{"", "", nil},
		{"half a thought", "half a thought", nil},
		{"replaced 🙂", "replaced 🙂", nil},
		{strings.Repeat("x", MaxDraftBytes+1), "replaced 🙂", ErrInvalid},
		{"bad \xff utf8", "replaced 🙂", ErrInvalid},
		{"", "", nil}, // cleared
	}
	for i, st := range steps {
		err := s.SaveDraft(t.Context(), sess.ID, st.text)
		if !errors.Is(err, st.wantErr) {
			t.Fatalf("step %d: SaveDraft = %v, want %v", i, err, st.wantErr)
		}
		d, err := s.Draft(t.Context(), sess.ID)
		if err != nil || d.Text != st.want || d.SessionID != sess.ID || (d.UpdatedAt == 0) != (st.want == "") {
			t.Errorf("step %d: Draft = %+v, %v; want %q", i, d, err, st.want)
		}
	}
	if err := s.SaveDraft(t.Context(), other.ID, "keep me"); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, other.ID); got != other {
		t.Errorf("a draft changed the session (revision or UpdatedAt): %+v -> %+v", other, got)
	}
	if err := s.DeleteSession(t.Context(), other.ID); err != nil {
		t.Fatal(err)
	}
	if n := count(t, s, "SELECT count(*) FROM drafts WHERE session_id = ?", other.ID); n != 0 {
		t.Error("the draft of a deleted session was kept")
	}
	if _, err := s.Draft(t.Context(), other.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Draft of a deleted session = %v, want ErrNotFound", err)
	}
}

func TestForkSession(t *testing.T) {
	s := openTest(t)
	src := mustSession(t, s, "source")
	turn(t, s, src.ID, "st1", "first question", "first answer")
	turn(t, s, src.ID, "st2", "second question", "second answer")
	if _, err := s.SetPinned(t.Context(), src.ID, true); err != nil {
		t.Fatal(err)
	}
	srcRows := mustMessages(t, s, src.ID)

	tests := []struct {
		name      string
		req       ForkRequest
		wantRows  int
		wantTitle string
		wantErr   error
	}{
		{"fork after the first answer", ForkRequest{SessionID: src.ID, Through: 1}, 2, "source", nil},
		{"fork at the first message", ForkRequest{SessionID: src.ID, Through: 0, Title: "branch"}, 1, "branch", nil},
		{"duplicate", ForkRequest{SessionID: src.ID, Through: -1, Title: "source (copy)"}, 4, "source (copy)", nil},
		{"position past the end", ForkRequest{SessionID: src.ID, Through: 4}, 0, "", ErrInvalid},
		{"negative position", ForkRequest{SessionID: src.ID, Through: -2}, 0, "", ErrInvalid},
		{"unknown source", ForkRequest{SessionID: "nope", Through: -1}, 0, "", ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sessionsBefore := count(t, s, "SELECT count(*) FROM sessions")
			got, err := s.ForkSession(t.Context(), tt.req)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ForkSession = %v, want %v", err, tt.wantErr)
			}
			if err != nil {
				if n := count(t, s, "SELECT count(*) FROM sessions"); n != sessionsBefore {
					t.Error("a refused fork created a session")
				}
				return
			}
			if got.ID == src.ID || got.ForkedFrom != src.ID || got.Title != tt.wantTitle || got.MessageCount != tt.wantRows ||
				got.Revision != 1 || got.Pinned || got.Usage != (protocol.Usage{}) || got.ActiveStreamID != "" {
				t.Errorf("fork = %+v", got)
			}
			rows := mustMessages(t, s, got.ID)
			if len(rows) != tt.wantRows {
				t.Fatalf("%d rows, want %d", len(rows), tt.wantRows)
			}
			for i, m := range rows {
				w := srcRows[i]
				if m.ID == w.ID || m.SessionID != got.ID || m.Position != i || m.Role != w.Role || m.Content != w.Content ||
					m.StreamID != w.StreamID || m.CreatedAt != w.CreatedAt {
					t.Errorf("row %d = %+v, source %+v", i, m, w)
				}
			}
		})
	}
	if got := mustMessages(t, s, src.ID); len(got) != len(srcRows) {
		t.Error("forking changed the source")
	}
	// The fork is a session of its own: a turn there leaves the source alone.
	fork, err := s.ForkSession(t.Context(), ForkRequest{SessionID: src.ID, Through: 1})
	if err != nil {
		t.Fatal(err)
	}
	turn(t, s, fork.ID, "st3", "other way", "ok")
	if got := mustGet(t, s, fork.ID); got.MessageCount != 4 {
		t.Errorf("fork after a turn: %+v", got)
	}
	if got := mustGet(t, s, src.ID); got.MessageCount != 4 || got.Revision != mustGet(t, s, src.ID).Revision {
		t.Errorf("source after a turn in the fork: %+v", got)
	}
	// The copies are searchable: the source, the two forks through position 1 and the
	// duplicate hold "first answer" (the fork through position 0 does not).
	if hits, _ := s.Search(t.Context(), "first answer", 10); len(hits) != 4 {
		t.Errorf("search finds %d sessions with the copied text, want 4", len(hits))
	}
	checkFTS(t, s)
}

func TestForkIsIdempotentByKey(t *testing.T) {
	s := openTest(t)
	src := mustSession(t, s, "source")
	turn(t, s, src.ID, "st1", "q", "a")
	first, err := s.ForkSession(t.Context(), ForkRequest{SessionID: src.ID, Through: 0, Key: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.ForkSession(t.Context(), ForkRequest{SessionID: src.ID, Through: 0, Key: "k1"})
	if err != nil || again != first {
		t.Fatalf("replay = %+v, %v; want the first fork %+v", again, err, first)
	}
	if n := count(t, s, "SELECT count(*) FROM sessions WHERE forked_from = ?", src.ID); n != 1 {
		t.Errorf("%d forks after a replay, want 1", n)
	}
	if _, err := s.ForkSession(t.Context(), ForkRequest{SessionID: src.ID, Through: 1, Key: "k1"}); !errors.Is(err, ErrConflict) {
		t.Errorf("same key, other position = %v, want ErrConflict", err)
	}
	if err := s.DeleteSession(t.Context(), first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ForkSession(t.Context(), ForkRequest{SessionID: src.ID, Through: 0, Key: "k1"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("replay of a deleted fork = %v, want ErrNotFound", err)
	}
	if _, err := s.ForkSession(t.Context(), ForkRequest{SessionID: src.ID, Through: 0, Key: "k2"}); err != nil {
		t.Errorf("a new key: %v", err)
	}
}

// A deleted session stays deleted: no late write of any kind brings it, or any of its
// text, back.
func TestDeletedSessionCannotBeResurrected(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "secret plans")
	turn(t, s, sess.ID, "st1", "the launch code", "is hunter2")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st2", Message{Content: "a turn still running"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveDraft(t.Context(), sess.ID, "unsent"); err != nil {
		t.Fatal(err)
	}
	rev := mustGet(t, s, sess.ID).Revision
	if err := s.DeleteSession(t.Context(), sess.ID); err != nil {
		t.Fatal(err)
	}
	tombstone := func() string {
		var row string
		s.w.QueryRow(`SELECT printf('%s|%d|%s|%d|%d|%d', title, revision, COALESCE(active_stream_id,''), message_count,
			input_tokens, pinned) FROM sessions WHERE id = ?`, sess.ID).Scan(&row)
		return row
	}
	before := tombstone()
	if !strings.HasPrefix(before, "|"+fmt.Sprint(rev+1)+"||0|") {
		t.Errorf("tombstone = %q, want a blank title and no rows", before)
	}

	late := []struct {
		name string
		do   func() error
	}{
		{"settle the running turn", func() error {
			return s.SettleTurn(t.Context(), sess.ID, "st2", []Message{{Role: "assistant", Content: "late answer"}},
				protocol.Usage{InputTokens: 9}, TerminalDone)
		}},
		{"automatic title", func() error { return s.SetTitle(t.Context(), sess.ID, "late title", false) }},
		{"manual title", func() error { return s.SetTitle(t.Context(), sess.ID, "late title", true) }},
		{"rename", func() error { _, err := s.RenameSession(t.Context(), sess.ID, "x"); return err }},
		{"pin", func() error { _, err := s.SetPinned(t.Context(), sess.ID, true); return err }},
		{"archive", func() error { _, err := s.SetArchived(t.Context(), sess.ID, true); return err }},
		{"draft", func() error { return s.SaveDraft(t.Context(), sess.ID, "late draft") }},
		{"journal", func() error {
			return s.AppendJournal(t.Context(), JournalFrame{StreamID: "st2", SessionID: sess.ID, Seq: 99, Event: "token"})
		}},
		{"append", func() error {
			_, err := s.AppendMessages(t.Context(), sess.ID, rev+1, []Message{{Role: "user"}})
			return err
		}},
		{"splice", func() error {
			_, err := s.SpliceMessages(t.Context(), sess.ID, rev+1, 0, []Message{{Role: "user"}})
			return err
		}},
		{"new turn", func() error { _, err := s.AdmitTurn(t.Context(), sess.ID, "st3", Message{Content: "q"}); return err }},
		{"fork", func() error {
			_, err := s.ForkSession(t.Context(), ForkRequest{SessionID: sess.ID, Through: -1})
			return err
		}},
		{"export", func() error { _, err := s.ExportSession(t.Context(), sess.ID, "test"); return err }},
	}
	for _, l := range late {
		t.Run(l.name, func(t *testing.T) {
			if err := l.do(); !errors.Is(err, ErrNotFound) {
				t.Errorf("%s after delete = %v, want ErrNotFound", l.name, err)
			}
			if after := tombstone(); after != before {
				t.Errorf("tombstone changed: %q -> %q", before, after)
			}
		})
	}
	for _, table := range []string{"messages", "journal", "streams", "drafts"} {
		if n := count(t, s, "SELECT count(*) FROM "+table+" WHERE session_id = ?", sess.ID); n != 0 {
			t.Errorf("%d %s rows of the deleted session", n, table)
		}
	}
	for _, q := range []string{"secret", "launch", "hunter2", "late"} {
		if hits, err := s.Search(t.Context(), q, 10); err != nil || len(hits) != 0 {
			t.Errorf("Search(%q) = %+v, %v; want nothing", q, hits, err)
		}
	}
	if list, _ := s.ListSessions(t.Context(), 0, 0); len(list) != 0 {
		t.Errorf("listed: %+v", list)
	}
	checkFTS(t, s)
}

// checkFTS runs FTS5's own integrity check of both indexes against their content.
func checkFTS(t *testing.T, s *Store) {
	t.Helper()
	for _, q := range []string{
		`INSERT INTO messages_fts(messages_fts, rank) VALUES('integrity-check', 1)`,
		`INSERT INTO sessions_fts(sessions_fts) VALUES('integrity-check')`,
	} {
		if _, err := s.w.Exec(q); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
	if n := count(t, s, `SELECT count(*) FROM sessions s LEFT JOIN sessions_fts f ON f.session_id = s.id
		WHERE f.title IS NOT s.title`); n != 0 {
		t.Errorf("%d titles differ between sessions and sessions_fts", n)
	}
	if a, b := count(t, s, `SELECT count(*) FROM sessions`), count(t, s, `SELECT count(*) FROM sessions_fts`); a != b {
		t.Errorf("%d sessions, %d rows in sessions_fts", a, b)
	}
}
