package turn

import (
	"testing"

	"talaria/backend/store"
)

// MeasuredContext decides from a chat's last rows alone exactly when the provider's count
// after the last turn still holds (ChatFigures then reads no more rows), and says it
// cannot tell when the tail does not reach past that turn.
func TestMeasuredContext(t *testing.T) {
	row := func(stream, kind string) store.Message { return store.Message{StreamID: stream, Kind: kind} }
	last := store.TurnFigures{StreamID: "s2"}
	last.ContextTokens = 1234
	cases := []struct {
		name   string
		tail   []store.Message
		more   bool
		last   store.TurnFigures
		tokens int64
		ok     bool
	}{
		{"the last turn ends the chat", []store.Message{row("s1", ""), row("s2", ""), row("s2", "")}, true, last, 1234, true},
		{"the whole chat is the last turn", []store.Message{row("s2", ""), row("s2", "")}, false, last, 1234, true},
		{"the tail is all the last turn, more before", []store.Message{row("s2", ""), row("s2", "")}, true, last, 0, false},
		{"a summary in the last turn", []store.Message{row("s1", ""), row("s2", store.KindSummary), row("s2", "")}, false, last, 0, false},
		{"rows after the last turn", []store.Message{row("s2", ""), row("s3", "")}, false, last, 0, false},
		{"no count", []store.Message{row("s1", ""), row("s2", "")}, false, store.TurnFigures{StreamID: "s2"}, 0, false},
		{"no rows", nil, false, last, 0, false},
		{"a summary before the last turn does not matter", []store.Message{row("s1", store.KindSummary), row("s2", "")}, false, last, 1234, true},
	}
	for _, c := range cases {
		tokens, ok := MeasuredContext(c.tail, c.more, c.last)
		if tokens != c.tokens || ok != c.ok {
			t.Errorf("%s: MeasuredContext = %d, %v; want %d, %v", c.name, tokens, ok, c.tokens, c.ok)
		}
	}
}
