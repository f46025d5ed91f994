package store

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"talaria/sidecar/protocol"
)

// Many sessions run turns at once (admit, journal batches, settle) while readers list,
// load and catch up. With one write connection and WAL nothing may surface
// SQLITE_BUSY, and every session must end up with a gap-free transcript.
func TestConcurrentTurns(t *testing.T) {
	s := openTest(t)
	const (
		sessions = 8
		turns    = 8
		batches  = 3
		perBatch = 8
	)
	ids := make([]string, sessions)
	for i := range ids {
		ids[i] = mustSession(t, s, fmt.Sprintf("s%d", i)).ID
	}

	errc := make(chan error, 64)
	report := func(err error) {
		select {
		case errc <- err:
		default:
		}
	}
	var writers sync.WaitGroup
	for i, id := range ids {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for turn := range turns {
				stream := fmt.Sprintf("st-%d-%d", i, turn)
				if _, err := s.AdmitTurn(t.Context(), id, stream, Message{Content: "q"}); err != nil {
					report(err)
					return
				}
				seq := int64(0)
				for range batches {
					fs := make([]JournalFrame, perBatch)
					for k := range fs {
						seq++
						fs[k] = frame(id, stream, seq)
					}
					if err := s.AppendJournalBatch(t.Context(), fs); err != nil {
						report(err)
						return
					}
				}
				rows := []Message{{Role: "assistant", Content: "a"}, {Role: "tool", Content: "t", ToolCallID: "c"}}
				if err := s.SettleTurn(t.Context(), id, stream, rows, protocol.Usage{InputTokens: 1, OutputTokens: 2}, TerminalDone); err != nil {
					report(err)
					return
				}
			}
		}()
	}

	done := make(chan struct{})
	var readers sync.WaitGroup
	for r := range 3 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				id := ids[(r+i)%sessions]
				if _, err := s.ListSessions(t.Context(), 50, 0); err != nil {
					report(err)
				}
				if _, err := s.GetSession(t.Context(), id); err != nil {
					report(err)
				}
				if _, err := s.Messages(t.Context(), id); err != nil {
					report(err)
				}
				if _, err := s.JournalSince(t.Context(), fmt.Sprintf("st-%d-0", (r+i)%sessions), 0); err != nil {
					report(err)
				}
				if _, err := s.LiveStreams(t.Context()); err != nil {
					report(err)
				}
			}
		}()
	}
	writers.Wait()
	close(done)
	readers.Wait()
	close(errc)
	for err := range errc {
		if errors.Is(err, ErrLocked) {
			t.Errorf("SQLITE_BUSY surfaced: %v", err)
		} else {
			t.Errorf("unexpected error: %v", err)
		}
	}

	for _, id := range ids {
		sess := mustGet(t, s, id)
		ms := mustMessages(t, s, id)
		if sess.MessageCount != turns*3 || len(ms) != turns*3 || sess.ActiveStreamID != "" ||
			sess.Usage.InputTokens != turns || sess.Usage.OutputTokens != 2*turns {
			t.Errorf("session %s: %+v with %d rows", id, sess, len(ms))
		}
		for p, m := range ms {
			if m.Position != p {
				t.Fatalf("session %s: row %d at position %d", id, p, m.Position)
			}
		}
	}
	if n := count(t, s, "SELECT count(*) FROM journal"); n != sessions*turns*batches*perBatch {
		t.Errorf("%d journal frames, want %d", n, sessions*turns*batches*perBatch)
	}
	if live, _ := s.LiveStreams(t.Context()); len(live) != 0 {
		t.Errorf("LiveStreams = %+v", live)
	}
}
