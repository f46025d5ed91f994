package store

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"talaria/sidecar/protocol"
)

func TestAdmitTurn(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	row, err := s.AdmitTurn(t.Context(), sess.ID, "st1", Message{Content: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if row.ID == 0 || row.Position != 0 || row.Role != "user" || row.StreamID != "st1" ||
		row.SessionID != sess.ID || row.CreatedAt == 0 || row.Content != "hello" {
		t.Errorf("saved row = %+v", row)
	}
	got := mustGet(t, s, sess.ID)
	if got.ActiveStreamID != "st1" || got.Revision != sess.Revision+1 || got.MessageCount != 1 || got.UpdatedAt <= sess.UpdatedAt {
		t.Errorf("session after admission = %+v", got)
	}
	if ms := mustMessages(t, s, sess.ID); len(ms) != 1 || !reflect.DeepEqual(ms[0], row) {
		t.Errorf("Messages = %+v, want [%+v]", ms, row)
	}
	live, _ := s.LiveStreams(t.Context())
	if len(live) != 1 || live[0].StreamID != "st1" || live[0].SessionID != sess.ID || live[0].StartedAt == 0 {
		t.Errorf("LiveStreams = %+v", live)
	}
}

func TestAdmitTurnBusy(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st1", Message{Content: "first"}); err != nil {
		t.Fatal(err)
	}
	before := mustGet(t, s, sess.ID)

	_, err := s.AdmitTurn(t.Context(), sess.ID, "st2", Message{Content: "second"})
	var busy *BusyError
	if !errors.As(err, &busy) {
		t.Fatalf("second admission = %v, want *BusyError", err)
	}
	if busy.SessionID != sess.ID || busy.StreamID != "st1" {
		t.Errorf("BusyError = %+v", busy)
	}
	if msg := err.Error(); !strings.Contains(msg, "stream st1 is still running") || !strings.Contains(msg, sess.ID) {
		t.Errorf("message does not name the active stream: %q", msg)
	}
	if after := mustGet(t, s, sess.ID); after != before {
		t.Errorf("a refused admission changed the session: %+v -> %+v", before, after)
	}
	if n := count(t, s, "SELECT count(*) FROM streams WHERE stream_id = 'st2'"); n != 0 {
		t.Error("a refused admission inserted its stream")
	}
}

func TestAdmitTurnRejects(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "used", Message{Content: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := s.SettleTurn(t.Context(), sess.ID, "used", nil, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		session string
		stream  string
		row     Message
		wantErr error
	}{
		{"unknown session", "nope", "st", Message{}, ErrNotFound},
		{"empty stream id", sess.ID, "", Message{}, ErrInvalid},
		{"unknown kind", sess.ID, "st", Message{Kind: "weird"}, ErrInvalid},
		{"stream id reused", sess.ID, "used", Message{}, ErrConflict},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count(t, s, "SELECT count(*) FROM messages")
			if _, err := s.AdmitTurn(t.Context(), tt.session, tt.stream, tt.row); !errors.Is(err, tt.wantErr) {
				t.Errorf("AdmitTurn = %v, want %v", err, tt.wantErr)
			}
			if after := count(t, s, "SELECT count(*) FROM messages"); after != before {
				t.Error("a refused admission wrote a row")
			}
		})
	}
}

// Many admissions race for one idle session: exactly one wins.
func TestAdmitTurnRaceOneWinner(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = s.AdmitTurn(t.Context(), sess.ID, fmt.Sprintf("st%d", i), Message{Content: "go"})
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		var busy *BusyError
		switch {
		case err == nil:
			won++
		case !errors.As(err, &busy):
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 || mustGet(t, s, sess.ID).MessageCount != 1 {
		t.Errorf("%d admissions won, want 1", won)
	}
}

func TestSettleAppendsWithoutRewriting(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	call := protocol.ToolCall{ID: "c1", Type: "function", Function: protocol.ToolFunction{Name: "sh", Arguments: `{"cmd":"ls"}`}}
	turns := []struct {
		stream   string
		user     string
		rows     []Message
		usage    protocol.Usage
		terminal string
	}{
		{"st1", "list files", []Message{
			{Role: "assistant", Reasoning: "use sh", ToolCalls: []protocol.ToolCall{call}},
			{Role: "tool", Content: "a.go", ToolCallID: "c1", Name: "sh"},
			{Role: "assistant", Content: "a.go"},
		}, protocol.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 5, CacheWriteTokens: 1, EstimatedCost: 0.25}, TerminalDone},
		{"st2", "and now?", []Message{
			{Role: "assistant", Content: "partial"},
			{Role: "assistant", Kind: KindCancelled},
		}, protocol.Usage{InputTokens: 50, OutputTokens: 2, EstimatedCost: 0.125}, TerminalCancel},
		{"st3", "again", []Message{{Role: "assistant", Kind: KindError, Content: "provider_error"}}, protocol.Usage{}, TerminalAppError},
	}
	earlier := []Message{}
	var total protocol.Usage
	for i, turn := range turns {
		if _, err := s.AdmitTurn(t.Context(), sess.ID, turn.stream, Message{Content: turn.user}); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		rows := append([]Message(nil), turn.rows...)
		if err := s.SettleTurn(t.Context(), sess.ID, turn.stream, rows, turn.usage, turn.terminal); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
		if !reflect.DeepEqual(rows, turn.rows) {
			t.Errorf("turn %d: SettleTurn modified the caller's rows", i)
		}
		total = total.Add(turn.usage)

		ms := mustMessages(t, s, sess.ID)
		if !reflect.DeepEqual(ms[:len(earlier)], earlier) {
			t.Fatalf("turn %d rewrote earlier rows:\nbefore %+v\nafter  %+v", i, earlier, ms[:len(earlier)])
		}
		added := ms[len(earlier):]
		if len(added) != 1+len(turn.rows) || added[0].Content != turn.user {
			t.Fatalf("turn %d appended %+v", i, added)
		}
		for j, want := range turn.rows {
			got := added[1+j]
			if got.Role != want.Role || got.Content != want.Content || got.Reasoning != want.Reasoning ||
				got.Kind != want.Kind || got.ToolCallID != want.ToolCallID || got.Name != want.Name ||
				!reflect.DeepEqual(got.ToolCalls, want.ToolCalls) || got.StreamID != turn.stream {
				t.Errorf("turn %d row %d = %+v, want %+v", i, j, got, want)
			}
		}
		for p, m := range ms {
			if m.Position != p {
				t.Errorf("row %d has position %d", p, m.Position)
			}
		}
		earlier = ms

		got := mustGet(t, s, sess.ID)
		if got.ActiveStreamID != "" || got.MessageCount != len(ms) || got.Usage != total {
			t.Errorf("turn %d: session = %+v, want idle, %d messages, usage %+v", i, got, len(ms), total)
		}
		var terminal string
		var ended int64
		s.w.QueryRow("SELECT terminal, ended_at FROM streams WHERE stream_id = ?", turn.stream).Scan(&terminal, &ended)
		if terminal != turn.terminal || ended == 0 {
			t.Errorf("turn %d: stream terminal %q ended %d", i, terminal, ended)
		}
	}
	if live, _ := s.LiveStreams(t.Context()); len(live) != 0 {
		t.Errorf("LiveStreams after settling = %+v", live)
	}
}

func TestSettleAfterDeleteWritesNothing(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st1", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSession(t.Context(), sess.ID); err != nil {
		t.Fatal(err)
	}
	var revBefore int64
	s.w.QueryRow("SELECT revision FROM sessions WHERE id = ?", sess.ID).Scan(&revBefore)

	err := s.SettleTurn(t.Context(), sess.ID, "st1", []Message{{Role: "assistant", Content: "late"}},
		protocol.Usage{InputTokens: 10}, TerminalDone)
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("SettleTurn after delete = %v, want ErrNotFound", err)
	}
	var rev, input int64
	s.w.QueryRow("SELECT revision, input_tokens FROM sessions WHERE id = ?", sess.ID).Scan(&rev, &input)
	if rev != revBefore || input != 0 {
		t.Errorf("tombstone changed: revision %d -> %d, input_tokens %d", revBefore, rev, input)
	}
	for _, table := range []string{"messages", "streams", "journal"} {
		if n := count(t, s, "SELECT count(*) FROM "+table); n != 0 {
			t.Errorf("%d rows in %s", n, table)
		}
	}
}

func TestSettleMismatchedStreamKeepsActive(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "current", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	// A late settlement of some other stream of this session (for instance one already
	// recovered after a crash) must not end the current turn.
	if err := s.SettleTurn(t.Context(), sess.ID, "stale", []Message{{Role: "assistant", Content: "late"}},
		protocol.Usage{OutputTokens: 3}, TerminalInterrupted); err != nil {
		t.Fatal(err)
	}
	got := mustGet(t, s, sess.ID)
	if got.ActiveStreamID != "current" {
		t.Errorf("active stream = %q, want current", got.ActiveStreamID)
	}
	live, _ := s.LiveStreams(t.Context())
	if len(live) != 1 || live[0].StreamID != "current" {
		t.Errorf("LiveStreams = %+v", live)
	}
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "next", Message{Content: "q2"}); !errors.As(err, new(*BusyError)) {
		t.Errorf("admission while current is live = %v, want *BusyError", err)
	}
	if err := s.SettleTurn(t.Context(), sess.ID, "current", nil, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, s, sess.ID); got.ActiveStreamID != "" || got.Usage.OutputTokens != 3 {
		t.Errorf("after settling current: %+v", got)
	}
}

func TestSettleRejects(t *testing.T) {
	s := openTest(t)
	sess := mustSession(t, s, "t")
	other := mustSession(t, s, "o")
	if _, err := s.AdmitTurn(t.Context(), sess.ID, "st1", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AdmitTurn(t.Context(), other.ID, "st-other", Message{Content: "q"}); err != nil {
		t.Fatal(err)
	}
	ok := []Message{{Role: "assistant", Content: "fine"}}
	tests := []struct {
		name     string
		session  string
		stream   string
		rows     []Message
		terminal string
		want     error
	}{
		{"unknown terminal", sess.ID, "st1", ok, "finished", ErrInvalid},
		{"empty terminal", sess.ID, "st1", ok, "", ErrInvalid},
		{"row without role", sess.ID, "st1", []Message{{Content: "x"}}, TerminalDone, ErrInvalid},
		{"unknown kind", sess.ID, "st1", []Message{{Role: "assistant", Kind: "oops"}}, TerminalDone, ErrInvalid},
		{"empty stream id", sess.ID, "", ok, TerminalDone, ErrInvalid},
		{"stream of another session", sess.ID, "st-other", ok, TerminalDone, ErrInvalid},
		{"unknown session", "nope", "st1", ok, TerminalDone, ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := count(t, s, "SELECT count(*) FROM messages")
			err := s.SettleTurn(t.Context(), tt.session, tt.stream, tt.rows, protocol.Usage{InputTokens: 1}, tt.terminal)
			if !errors.Is(err, tt.want) {
				t.Errorf("SettleTurn = %v, want %v", err, tt.want)
			}
			if after := count(t, s, "SELECT count(*) FROM messages"); after != before {
				t.Error("a refused settlement wrote rows")
			}
		})
	}
	if got := mustGet(t, s, sess.ID); got.ActiveStreamID != "st1" || got.Usage.InputTokens != 0 {
		t.Errorf("refused settlements changed the session: %+v", got)
	}

	// Settling twice never appends twice.
	if err := s.SettleTurn(t.Context(), sess.ID, "st1", ok, protocol.Usage{}, TerminalDone); err != nil {
		t.Fatal(err)
	}
	n := len(mustMessages(t, s, sess.ID))
	err := s.SettleTurn(t.Context(), sess.ID, "st1", ok, protocol.Usage{InputTokens: 9}, TerminalDone)
	if !errors.Is(err, ErrStreamEnded) {
		t.Errorf("second settlement = %v, want ErrStreamEnded", err)
	}
	if got := mustGet(t, s, sess.ID); got.MessageCount != n || got.Usage.InputTokens != 0 {
		t.Errorf("second settlement wrote: %+v", got)
	}
}

// After a crash the app finds the streams that were live and settles them.
func TestCrashRecoveryThroughLiveStreams(t *testing.T) {
	s := openTest(t)
	a := mustSession(t, s, "a")
	b := mustSession(t, s, "b")
	for _, id := range []string{a.ID, b.ID} {
		if _, err := s.AdmitTurn(t.Context(), id, "st-"+id, Message{Content: "q"}); err != nil {
			t.Fatal(err)
		}
	}
	live, err := s.LiveStreams(t.Context())
	if err != nil || len(live) != 2 || live[0].SessionID != a.ID || live[1].SessionID != b.ID {
		t.Fatalf("LiveStreams = %+v, %v", live, err)
	}
	for _, l := range live {
		marker := []Message{{Role: "assistant", Kind: KindInterrupted}}
		if err := s.SettleTurn(t.Context(), l.SessionID, l.StreamID, marker, protocol.Usage{}, TerminalInterrupted); err != nil {
			t.Fatal(err)
		}
	}
	if live, _ := s.LiveStreams(t.Context()); len(live) != 0 {
		t.Errorf("still live: %+v", live)
	}
	if ms := mustMessages(t, s, a.ID); ms[len(ms)-1].Kind != KindInterrupted {
		t.Errorf("no interrupted marker: %+v", ms)
	}
}
