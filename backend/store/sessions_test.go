package store

import (
	"errors"
	"strings"
	"testing"
)

func TestCreateAndGetSession(t *testing.T) {
	s := openTest(t)
	got, err := s.CreateSession(t.Context(), NewSession{Title: "T", Model: "gpt", Workspace: "/home/u/p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.ID) != 36 || got.Revision != 1 || got.CreatedAt == 0 || got.CreatedAt != got.UpdatedAt {
		t.Errorf("created = %+v", got)
	}
	if back := mustGet(t, s, got.ID); back != got {
		t.Errorf("GetSession = %+v, want %+v", back, got)
	}
}

func TestListSessions(t *testing.T) {
	s := openTest(t)
	a := mustSession(t, s, "a")
	b := mustSession(t, s, "b")
	c := mustSession(t, s, "c")
	d := mustSession(t, s, "d")
	if err := s.DeleteSession(t.Context(), d.ID); err != nil {
		t.Fatal(err)
	}
	// Activity on a moves it to the top; renaming c does not.
	if _, err := s.AdmitTurn(t.Context(), a.ID, "st-a", Message{Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetTitle(t.Context(), c.ID, "c renamed", true); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name          string
		limit, offset int
		want          []string
	}{
		{"all", 0, 0, []string{a.ID, c.ID, b.ID}},
		{"limit", 2, 0, []string{a.ID, c.ID}},
		{"offset", 2, 1, []string{c.ID, b.ID}},
		{"past the end", 10, 3, nil},
		{"negative offset", -1, -5, []string{a.ID, c.ID, b.ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.ListSessions(t.Context(), tt.limit, tt.offset)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Error("nil slice; want an empty one")
			}
			var ids []string
			for _, sess := range got {
				ids = append(ids, sess.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tt.want, ",") {
				t.Errorf("ids = %v, want %v", ids, tt.want)
			}
		})
	}
	list, _ := s.ListSessions(t.Context(), 1, 0)
	if list[0] != mustGet(t, s, a.ID) {
		t.Errorf("listed metadata %+v differs from GetSession", list[0])
	}
}

// ListSessions must stay cheap however long the transcripts are: its query reads the
// sessions table through the list index and nothing else.
func TestListSessionsReadsNoMessageBodies(t *testing.T) {
	s := openTest(t)
	for _, col := range []string{"messages", "content", "reasoning", "tool_calls", "journal"} {
		if strings.Contains(listSessionsSQL, col) {
			t.Errorf("list query mentions %q:\n%s", col, listSessionsSQL)
		}
	}
	rows, err := s.r.Query("EXPLAIN QUERY PLAN "+listSessionsSQL, 50, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	joined := strings.Join(plan, "; ")
	if !strings.Contains(joined, "sessions_list") {
		t.Errorf("plan does not use the list index: %s", joined)
	}
	for _, bad := range []string{"messages", "journal", "TEMP B-TREE"} {
		if strings.Contains(joined, bad) {
			t.Errorf("plan contains %q: %s", bad, joined)
		}
	}
}

func TestGetSessionNotFound(t *testing.T) {
	s := openTest(t)
	gone := mustSession(t, s, "gone")
	if err := s.DeleteSession(t.Context(), gone.ID); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{"missing": "no-such-id", "deleted": gone.ID} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.GetSession(t.Context(), id); !errors.Is(err, ErrNotFound) {
				t.Errorf("GetSession = %v, want ErrNotFound", err)
			}
			if _, err := s.Messages(t.Context(), id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Messages = %v, want ErrNotFound", err)
			}
		})
	}
}

func TestSetTitle(t *testing.T) {
	type write struct {
		title  string
		manual bool
	}
	tests := []struct {
		name       string
		writes     []write
		wantTitle  string
		wantManual bool
		wantRev    int64
	}{
		{"automatic", []write{{"auto", false}}, "auto", false, 2},
		{"automatic twice", []write{{"auto1", false}, {"auto2", false}}, "auto2", false, 3},
		{"manual wins over a later automatic", []write{{"mine", true}, {"auto", false}}, "mine", true, 2},
		{"manual after automatic", []write{{"auto", false}, {"mine", true}}, "mine", true, 3},
		{"manual twice", []write{{"mine", true}, {"mine too", true}}, "mine too", true, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t)
			sess := mustSession(t, s, "")
			for _, w := range tt.writes {
				if err := s.SetTitle(t.Context(), sess.ID, w.title, w.manual); err != nil {
					t.Fatal(err)
				}
			}
			got := mustGet(t, s, sess.ID)
			if got.Title != tt.wantTitle || got.TitleManual != tt.wantManual || got.Revision != tt.wantRev {
				t.Errorf("got title %q manual %v revision %d; want %q %v %d",
					got.Title, got.TitleManual, got.Revision, tt.wantTitle, tt.wantManual, tt.wantRev)
			}
			if got.UpdatedAt != sess.UpdatedAt {
				t.Error("SetTitle changed UpdatedAt")
			}
		})
	}
	s := openTest(t)
	gone := mustSession(t, s, "")
	s.DeleteSession(t.Context(), gone.ID)
	if err := s.SetTitle(t.Context(), gone.ID, "x", true); !errors.Is(err, ErrNotFound) {
		t.Errorf("SetTitle on a deleted session = %v, want ErrNotFound", err)
	}
}

func TestDeleteSession(t *testing.T) {
	s := openTest(t)
	keep := mustSession(t, s, "keep")
	gone := mustSession(t, s, "gone")
	for _, id := range []string{keep.ID, gone.ID} {
		if _, err := s.AdmitTurn(t.Context(), id, "st-"+id, Message{Content: "q"}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendJournal(t.Context(), JournalFrame{StreamID: "st-" + id, SessionID: id, Seq: 1, Event: "token"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteSession(t.Context(), gone.ID); err != nil {
		t.Fatal(err)
	}

	// The tombstone stays, everything under it is purged; the other session is intact.
	if n := count(t, s, "SELECT count(*) FROM sessions WHERE id = ? AND deleted_at IS NOT NULL", gone.ID); n != 1 {
		t.Error("no tombstone")
	}
	for _, table := range []string{"messages", "journal", "streams"} {
		if n := count(t, s, "SELECT count(*) FROM "+table+" WHERE session_id = ?", gone.ID); n != 0 {
			t.Errorf("%d %s rows left for the deleted session", n, table)
		}
		if n := count(t, s, "SELECT count(*) FROM "+table+" WHERE session_id = ?", keep.ID); n != 1 {
			t.Errorf("%s of the other session: %d rows, want 1", table, n)
		}
	}
	live, _ := s.LiveStreams(t.Context())
	if len(live) != 1 || live[0].SessionID != keep.ID {
		t.Errorf("LiveStreams = %+v", live)
	}

	// Every later write for it is refused.
	if err := s.DeleteSession(t.Context(), gone.ID); err != nil {
		t.Errorf("second delete = %v, want nil (a no-op)", err)
	}
	if err := s.DeleteSession(t.Context(), "never-existed"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete unknown = %v, want ErrNotFound", err)
	}
	if _, err := s.AdmitTurn(t.Context(), gone.ID, "st-new", Message{Content: "q"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AdmitTurn = %v, want ErrNotFound", err)
	}
	if err := s.AppendJournal(t.Context(), JournalFrame{StreamID: "st-" + gone.ID, SessionID: gone.ID, Seq: 2, Event: "token"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AppendJournal = %v, want ErrNotFound", err)
	}
	if n := count(t, s, "SELECT count(*) FROM journal WHERE session_id = ?", gone.ID); n != 0 {
		t.Error("a refused journal frame was written")
	}
}
