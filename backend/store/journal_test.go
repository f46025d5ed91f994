package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"talaria/sidecar/protocol"
)

func frame(sessionID, streamID string, seq int64) JournalFrame {
	return JournalFrame{StreamID: streamID, SessionID: sessionID, Seq: seq, Event: "token",
		Data: json.RawMessage(fmt.Sprintf(`{"text":"t%d"}`, seq))}
}

func TestJournalOrderingAndSince(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "j")
	// Frames arrive in any order and from two streams; a batch and single appends mix.
	if err := s.AppendJournalBatch(t.Context(), []JournalFrame{
		frame(sess.ID, "st1", 3), frame(sess.ID, "st1", 1), frame(sess.ID, "st2", 1), frame(sess.ID, "st1", 2),
	}); err != nil {
		t.Fatal(err)
	}
	noData := JournalFrame{StreamID: "st1", SessionID: sess.ID, Seq: 4, Event: "stream_end", CreatedAt: 42}
	if err := s.AppendJournal(t.Context(), noData); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendJournal(t.Context(), frame(sess.ID, "st1", 10)); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		stream   string
		after    int64
		wantSeqs []int64
	}{
		{"st1", 0, []int64{1, 2, 3, 4, 10}},
		{"st1", 2, []int64{3, 4, 10}},
		{"st1", 4, []int64{10}},
		{"st1", 10, nil},
		{"st1", -1, []int64{1, 2, 3, 4, 10}},
		{"st2", 0, []int64{1}},
		{"unknown", 0, nil},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s after %d", tt.stream, tt.after), func(t *testing.T) {
			got, err := s.JournalSince(t.Context(), tt.stream, tt.after)
			if err != nil {
				t.Fatal(err)
			}
			if got == nil {
				t.Error("nil slice; want an empty one")
			}
			var seqs []int64
			for _, f := range got {
				seqs = append(seqs, f.Seq)
				if f.StreamID != tt.stream || f.SessionID != sess.ID || f.CreatedAt == 0 {
					t.Errorf("frame = %+v", f)
				}
			}
			if fmt.Sprint(seqs) != fmt.Sprint(tt.wantSeqs) {
				t.Errorf("seqs = %v, want %v", seqs, tt.wantSeqs)
			}
		})
	}

	all, _ := s.JournalSince(t.Context(), "st1", 0)
	if string(all[0].Data) != `{"text":"t1"}` || all[0].Event != "token" {
		t.Errorf("first frame = %+v", all[0])
	}
	if all[3].Data != nil || all[3].CreatedAt != 42 || all[3].Event != "stream_end" {
		t.Errorf("frame without data = %+v (data %q)", all[3], all[3].Data)
	}
}

func TestJournalBatchIsAllOrNothing(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "j")
	gone := mustSession(t, s, "gone")
	if err := s.AppendJournal(t.Context(), frame(sess.ID, "st1", 1)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(t.Context(), gone.ID); err != nil {
		t.Fatal(err)
	}
	bad := frame(sess.ID, "st1", 7)
	bad.Data = json.RawMessage(`{not json`)
	tests := []struct {
		name  string
		batch []JournalFrame
		want  error
	}{
		{"duplicate seq", []JournalFrame{frame(sess.ID, "st1", 2), frame(sess.ID, "st1", 1)}, ErrConflict},
		{"duplicate within the batch", []JournalFrame{frame(sess.ID, "st1", 5), frame(sess.ID, "st1", 5)}, ErrConflict},
		{"data not JSON", []JournalFrame{frame(sess.ID, "st1", 6), bad}, ErrInvalid},
		{"no event", []JournalFrame{{StreamID: "st1", SessionID: sess.ID, Seq: 8}}, ErrInvalid},
		{"no stream", []JournalFrame{{SessionID: sess.ID, Seq: 8, Event: "x"}}, ErrInvalid},
		{"deleted session", []JournalFrame{frame(sess.ID, "st1", 9), frame(gone.ID, "st9", 1)}, ErrNotFound},
		{"unknown session", []JournalFrame{frame("nope", "st9", 1)}, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := s.AppendJournalBatch(t.Context(), tt.batch); !errors.Is(err, tt.want) {
				t.Errorf("AppendJournalBatch = %v, want %v", err, tt.want)
			}
			if n := count(t, s, "SELECT count(*) FROM journal"); n != 1 {
				t.Errorf("%d frames stored, want the 1 from before", n)
			}
		})
	}
	if err := s.AppendJournalBatch(t.Context(), nil); err != nil {
		t.Errorf("empty batch = %v", err)
	}
}

func TestPruneJournal(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "j")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "old", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendJournalBatch(t.Context(), []JournalFrame{frame(sess.ID, "old", 1), frame(sess.ID, "old", 2)}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurn(t.Context(), sess.ID, "old", nil, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "live", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendJournal(t.Context(), frame(sess.ID, "live", 1)); err != nil {
		t.Fatal(err)
	}
	n, err := s.PruneJournal(t.Context(), s.now()+1)
	if err != nil || n != 2 {
		t.Fatalf("PruneJournal = %d, %v; want 2", n, err)
	}
	if fs, _ := s.JournalSince(t.Context(), "live", 0); len(fs) != 1 {
		t.Errorf("the live stream lost frames: %+v", fs)
	}
	if ms := mustMessages(t, s, sess.ID); len(ms) != 2 {
		t.Errorf("pruning touched the transcript: %d rows", len(ms))
	}
}
