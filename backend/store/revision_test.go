package store

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func contents(ms []Message) string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Content)
	}
	return strings.Join(out, ",")
}

func TestAppendAndSplice(t *testing.T) {
	rows := func(texts ...string) []Message {
		var out []Message
		for _, x := range texts {
			out = append(out, Message{Role: "user", Content: x})
		}
		return out
	}
	tests := []struct {
		name       string
		from       int // -1: AppendMessages
		rows       []Message
		want       string
		wantErr    error
		keptPrefix int // rows whose IDs must not change
	}{
		{"append", -1, rows("d", "e"), "a,b,c,d,e", nil, 3},
		{"append nothing still moves the revision", -1, nil, "a,b,c", nil, 3},
		{"splice the tail", 1, rows("B", "C"), "a,B,C", nil, 1},
		{"truncate", 2, nil, "a,b", nil, 2},
		{"replace everything", 0, rows("x"), "x", nil, 0},
		{"splice at the end appends", 3, rows("d"), "a,b,c,d", nil, 3},
		{"past the end", 4, rows("d"), "a,b,c", ErrInvalid, 3},
		{"negative position", -2, rows("d"), "a,b,c", ErrInvalid, 3},
		{"row without role", -1, []Message{{Content: "x"}}, "a,b,c", ErrInvalid, 3},
		{"unknown kind", 1, []Message{{Role: "user", Kind: "zzz"}}, "a,b,c", ErrInvalid, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t)
			sess := mustSession(t, s, "t")
			base, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, rows("a", "b", "c"))
			if err != nil {
				t.Fatal(err)
			}
			before := mustMessages(t, s, sess.ID)
			var saved Saved
			if tt.from == -1 {
				saved, err = s.AppendMessages(t.Context(), sess.ID, base.Session.Revision, tt.rows)
			} else if tt.from == -2 {
				saved, err = s.SpliceMessages(t.Context(), sess.ID, base.Session.Revision, -1, tt.rows)
			} else {
				saved, err = s.SpliceMessages(t.Context(), sess.ID, base.Session.Revision, tt.from, tt.rows)
			}
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			after := mustMessages(t, s, sess.ID)
			if got := contents(after); got != tt.want {
				t.Errorf("rows = %q, want %q", got, tt.want)
			}
			for i := range tt.keptPrefix {
				if after[i].ID != before[i].ID || after[i].Content != before[i].Content || after[i].CreatedAt != before[i].CreatedAt {
					t.Errorf("row %d was rewritten: %+v -> %+v", i, before[i], after[i])
				}
			}
			for p, m := range after {
				if m.Position != p {
					t.Errorf("row %d at position %d", p, m.Position)
				}
			}
			got := mustGet(t, s, sess.ID)
			if got.MessageCount != len(after) {
				t.Errorf("message_count %d, %d rows", got.MessageCount, len(after))
			}
			if tt.wantErr != nil {
				if got.Revision != base.Session.Revision {
					t.Errorf("a refused save moved the revision")
				}
				return
			}
			if got.Revision != base.Session.Revision+1 || saved.Session != got || len(saved.Messages) != len(tt.rows) {
				t.Errorf("saved = %+v, stored %+v", saved, got)
			}
			for i, m := range saved.Messages {
				if m.ID == 0 || m.SessionID != sess.ID || m.CreatedAt == 0 || m.Position != len(after)-len(tt.rows)+i {
					t.Errorf("saved row %d = %+v", i, m)
				}
			}
			checkFTS(t, s)
		})
	}
}

// A save based on a stale read fails with a typed conflict and writes nothing, so a
// second window (or a late edit) never overwrites newer rows.
func TestStaleSaveConflicts(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	first, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, []Message{{Role: "user", Content: "one"}})
	if err != nil {
		t.Fatal(err)
	}
	stale := sess.Revision // a window that read before the first save
	changes := []struct {
		name string
		do   func() error
	}{
		{"append", func() error {
			_, err := s.AppendMessages(t.Context(), sess.ID, stale, []Message{{Role: "user", Content: "late"}})
			return err
		}},
		{"splice", func() error {
			_, err := s.SpliceMessages(t.Context(), sess.ID, stale, 0, []Message{{Role: "user", Content: "late"}})
			return err
		}},
		{"from the future", func() error {
			_, err := s.AppendMessages(t.Context(), sess.ID, first.Session.Revision+5, []Message{{Role: "user", Content: "late"}})
			return err
		}},
	}
	for _, c := range changes {
		t.Run(c.name, func(t *testing.T) {
			err := c.do()
			var conflict *ConflictError
			if !errors.As(err, &conflict) || !errors.Is(err, ErrConflict) {
				t.Fatalf("stale save = %v, want *ConflictError", err)
			}
			if conflict.SessionID != sess.ID || conflict.Have != first.Session.Revision {
				t.Errorf("conflict = %+v", conflict)
			}
			if !strings.Contains(err.Error(), "reload") {
				t.Errorf("message does not say what to do: %q", err)
			}
			if got := contents(mustMessages(t, s, sess.ID)); got != "one" {
				t.Errorf("rows after a refused save = %q", got)
			}
		})
	}
	// Other changes move the revision too: a title, a pin, a turn.
	for i, change := range []func() error{
		func() error { return s.SetTitle(t.Context(), sess.ID, "auto", false) },
		func() error { _, err := s.SetPinned(t.Context(), sess.ID, true); return err },
		func() error { turn(t, s, sess.ID, fmt.Sprint("st", 1), "q", "a"); return nil },
	} {
		rev := mustGet(t, s, sess.ID).Revision
		if err := change(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AppendMessages(t.Context(), sess.ID, rev, nil); !errors.Is(err, ErrConflict) {
			t.Errorf("change %d: a save based on the revision before it = %v, want ErrConflict", i, err)
		}
	}
}

func TestSpliceWhileStreamingIsBusy(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st1", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	rev := mustGet(t, s, sess.ID).Revision
	_, err := s.SpliceMessages(t.Context(), sess.ID, rev, 0, []Message{{Role: "user", Content: "edited"}})
	var busy *BusyError
	if !errors.As(err, &busy) || busy.StreamID != "st1" {
		t.Fatalf("splice during a turn = %v, want *BusyError", err)
	}
	if got := contents(mustMessages(t, s, sess.ID)); got != "q" {
		t.Errorf("rows = %q", got)
	}
}
