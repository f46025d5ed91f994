package store

import (
	"errors"
	"fmt"
	"testing"

	"talaria/sidecar/protocol"
)

// pagedSession stores rows: user, assistant(calls two tools), tool, tool, assistant,
// repeated n times (5 rows per round), and returns the session id.
func pagedSession(t *testing.T, s *Store, n int) string {
	t.Helper()
	sess := mustSession(t, s, "paged")
	var rows []Message
	for i := range n {
		rows = append(rows,
			Message{Role: "user", Content: fmt.Sprintf("q%d", i)},
			Message{Role: "assistant", ToolCalls: []protocol.ToolCall{{ID: fmt.Sprintf("a%d", i), Type: "function"}, {ID: fmt.Sprintf("b%d", i), Type: "function"}}},
			Message{Role: "tool", ToolCallID: fmt.Sprintf("a%d", i), Content: "ra"},
			Message{Role: "tool", ToolCallID: fmt.Sprintf("b%d", i), Content: "rb"},
			Message{Role: "assistant", Content: fmt.Sprintf("answer %d", i)},
		)
	}
	if _, err := s.AppendMessages(t.Context(), sess.ID, sess.Revision, rows); err != nil {
		t.Fatal(err)
	}
	return sess.ID
}

func positions(ms []Message) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.Position
	}
	return out
}

func TestMessagesBeforePagesFromTheEnd(t *testing.T) {
	s := openTest(t)
	id := pagedSession(t, s, 4) // positions 0..19

	p, err := s.MessagesBefore(t.Context(), id, -1, 3)
	if err != nil {
		t.Fatal(err)
	}
	// The last 3 rows are tool, tool, assistant: stretched back to the calling row.
	if got := fmt.Sprint(positions(p.Messages)); got != "[16 17 18 19]" || !p.Before || p.After {
		t.Fatalf("last page %s before=%v after=%v", got, p.Before, p.After)
	}
	p, err = s.MessagesBefore(t.Context(), id, 16, 6)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(positions(p.Messages)); got != "[10 11 12 13 14 15]" || !p.Before || !p.After {
		t.Fatalf("older page %s before=%v after=%v", got, p.Before, p.After)
	}
	p, err = s.MessagesBefore(t.Context(), id, 3, 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(positions(p.Messages)); got != "[0 1 2]" || p.Before || !p.After {
		t.Fatalf("first page %s before=%v after=%v", got, p.Before, p.After)
	}
	// Every row once, in order, by walking back from the end.
	var all []int
	for before := -1; ; {
		p, err := s.MessagesBefore(t.Context(), id, before, 4)
		if err != nil {
			t.Fatal(err)
		}
		all = append(positions(p.Messages), all...)
		if !p.Before {
			break
		}
		before = p.Messages[0].Position
	}
	if len(all) != 20 {
		t.Fatalf("walked %v", all)
	}
	for i, pos := range all {
		if pos != i {
			t.Fatalf("walked %v", all)
		}
	}
}

func TestMessagesFromStretchesOverToolRows(t *testing.T) {
	s := openTest(t)
	id := pagedSession(t, s, 4)
	// From a tool row: back to its caller; a page ending on a caller: on to its results.
	p, err := s.MessagesFrom(t.Context(), id, 7, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(positions(p.Messages)); got != "[6 7 8]" || !p.Before || !p.After {
		t.Fatalf("page %s before=%v after=%v", got, p.Before, p.After)
	}
	p, err = s.MessagesFrom(t.Context(), id, 5, 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(positions(p.Messages)); got != "[5 6 7 8]" {
		t.Fatalf("page %s", got)
	}
	p, err = s.MessagesFrom(t.Context(), id, 18, 50)
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(positions(p.Messages)); got != "[16 17 18 19]" || p.After {
		t.Fatalf("end page %s after=%v", got, p.After)
	}
	p, err = s.MessagesFrom(t.Context(), id, 20, 50)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Messages) != 0 || !p.Before || p.After {
		t.Fatalf("past the end: %+v", p)
	}
}

func TestMessagePagesOfAMissingSession(t *testing.T) {
	s := openTest(t)
	if _, err := s.MessagesBefore(t.Context(), "nope", -1, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("MessagesBefore: %v", err)
	}
	id := pagedSession(t, s, 1)
	if err := s.DeleteSession(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MessagesFrom(t.Context(), id, 0, 10); !errors.Is(err, ErrNotFound) {
		t.Fatalf("MessagesFrom after delete: %v", err)
	}
	empty := mustSession(t, s, "empty")
	p, err := s.MessagesBefore(t.Context(), empty.ID, -1, 10)
	if err != nil || len(p.Messages) != 0 || p.Before || p.After || p.Messages == nil {
		t.Fatalf("empty session: %+v %v", p, err)
	}
}
