package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

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

// PruneJournal's retention: the frames of settled streams older than the cut-off go,
// except each session's newest keep; recent streams, live streams, other sessions'
// newest streams, the transcript and the streams rows stay. More old streams than one
// batch are all pruned, and a second prune finds nothing.
func TestPruneJournal(t *testing.T) {
	s := openTest(t)
	ctx := t.Context()
	const day = int64(24 * time.Hour / time.Millisecond)
	now := int64(1_780_000_000_000)
	clock := now
	s.now = func() int64 { clock++; return clock }
	turn := func(sess, stream string, endedDaysAgo int64) {
		t.Helper()
		clock = now - endedDaysAgo*day
		if _, err := s.AdmitTurn(ctx, sess, stream, Message{Content: "q " + stream}); err != nil {
			t.Fatal(err)
		}
		if err := s.AppendJournalBatch(ctx, []JournalFrame{frame(sess, stream, 1), frame(sess, stream, 2)}); err != nil {
			t.Fatal(err)
		}
		if err := s.SettleTurn(ctx, sess, stream, []Message{{Role: "assistant", Content: "a"}}, protocol.Usage{}, TerminalDone); err != nil {
			t.Fatal(err)
		}
	}
	frames := func(stream string) int {
		t.Helper()
		fs, err := s.JournalSince(ctx, stream, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(fs)
	}
	const keep = 5
	// a: 8 old streams (a0 oldest) and a recent one: a0..a3 go (not among the newest 5).
	a := mustSession(t, s, "a").ID
	for i := range 8 {
		turn(a, fmt.Sprintf("a%d", i), 60-int64(i))
	}
	turn(a, "a-recent", 1)
	// b: 3 old streams, all among its newest 5: kept.
	b := mustSession(t, s, "b").ID
	for i := range 3 {
		turn(b, fmt.Sprintf("b%d", i), 90)
	}
	// c: 8 recent streams: none old enough.
	c := mustSession(t, s, "c").ID
	for i := range 8 {
		turn(c, fmt.Sprintf("c%d", i), 29)
	}
	// d: more old streams than one batch: all but the newest 5 go.
	d := mustSession(t, s, "d").ID
	for i := range pruneBatch + 12 {
		turn(d, fmt.Sprintf("d%03d", i), 400-int64(i))
	}
	// A live stream that started long ago keeps its frames.
	clock = now - 100*day
	if _, err := s.AdmitTurn(ctx, b, "live", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendJournal(ctx, frame(b, "live", 1)); err != nil {
		t.Fatal(err)
	}

	n, err := s.PruneJournal(ctx, now-30*day, keep)
	wantStreams := 4 + pruneBatch + 12 - keep
	if err != nil || n != int64(2*wantStreams) {
		t.Fatalf("PruneJournal = %d, %v; want %d frames", n, err, 2*wantStreams)
	}
	for i := range 8 {
		if got, want := frames(fmt.Sprintf("a%d", i)), map[bool]int{true: 0, false: 2}[i < 4]; got != want {
			t.Errorf("a%d has %d frames, want %d", i, got, want)
		}
	}
	for _, id := range []string{"a-recent", "b0", "b1", "b2", "c0", "c7", "d061", "d057"} {
		if frames(id) != 2 {
			t.Errorf("%s lost its frames", id)
		}
	}
	if frames("d056") != 0 || frames("d000") != 0 {
		t.Error("d's old streams beyond the newest 5 kept their frames")
	}
	if frames("live") != 1 {
		t.Error("the live stream lost its frames")
	}
	if ms := mustMessages(t, s, d); len(ms) != 2*(pruneBatch+12) {
		t.Errorf("pruning touched the transcript: %d rows", len(ms))
	}
	if turns, err := s.SessionTurns(ctx, d); err != nil || len(turns) != pruneBatch+12 {
		t.Errorf("pruning touched the streams: %d, %v", len(turns), err)
	}
	if n, err := s.PruneJournal(ctx, now-30*day, keep); err != nil || n != 0 {
		t.Errorf("second prune = %d, %v; want nothing left to do", n, err)
	}
	// keep 0: every old settled stream goes.
	if n, err := s.PruneJournal(ctx, now-30*day, 0); err != nil || n != 2*(4+3+keep) {
		t.Errorf("prune keeping none = %d, %v; want %d", n, err, 2*(4+3+keep))
	}
}
