package builtin

import (
	"strings"
	"testing"
)

// TestThinkSplit: an inline reasoning block at the start of the answer is reasoning,
// wherever the stream's pieces cut it (every cut in two, and byte by byte); anything
// else is the answer, whole, with nothing held back at the end.
func TestThinkSplit(t *testing.T) {
	tests := []struct {
		name, in, reasoning, answer string
	}{
		{"block then answer", "<think>\nThe user greets me.\n</think>\n\nHello!", "\nThe user greets me.\n", "Hello!"},
		{"white space before the block", "\n  <think>plan</think>Hi", "plan", "Hi"},
		{"empty block (reasoning off)", "<think>\n\n</think>\n\nHi", "\n\n", "Hi"},
		{"no block", "Hello <think> is a tag", "", "Hello <think> is a tag"},
		{"a block later in the answer is the answer's", "Use <think>x</think> tags.", "", "Use <think>x</think> tags."},
		{"another tag first", "<thinking>no</thinking>", "", "<thinking>no</thinking>"},
		{"a tag's beginning only", "<thi", "", "<thi"},
		{"white space only", "  \n", "", "  \n"},
		{"unclosed block (cut by the length limit)", "<think>still thinking </th", "still thinking </th", ""},
		{"a closing tag's look-alike inside", "<think>a </thin b</think>c", "a </thin b", "c"},
		{"answer with markup", "<think>r</think><b>x</b>", "r", "<b>x</b>"},
		{"unicode", "<think>日本語で考える</think>\nこんにちは", "日本語で考える", "こんにちは"},
	}
	split := func(pieces []string) (string, string) {
		var k thinkSplit
		var r, a strings.Builder
		for _, p := range pieces {
			x, y := k.feed(p)
			r.WriteString(x)
			a.WriteString(y)
		}
		x, y := k.flush()
		r.WriteString(x)
		a.WriteString(y)
		return r.String(), a.String()
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, a := splitThink(tt.in); r != tt.reasoning || a != tt.answer {
				t.Fatalf("whole: reasoning %q answer %q, want %q %q", r, a, tt.reasoning, tt.answer)
			}
			for i := 0; i <= len(tt.in); i++ {
				if r, a := split([]string{tt.in[:i], tt.in[i:]}); r != tt.reasoning || a != tt.answer {
					t.Fatalf("cut at %d: reasoning %q answer %q, want %q %q", i, r, a, tt.reasoning, tt.answer)
				}
			}
			var bytes []string
			for i := range len(tt.in) {
				bytes = append(bytes, tt.in[i:i+1])
			}
			if r, a := split(bytes); r != tt.reasoning || a != tt.answer {
				t.Fatalf("byte by byte: reasoning %q answer %q, want %q %q", r, a, tt.reasoning, tt.answer)
			}
		})
	}
}

// TestThinkSplitLongLead: white space before the answer is held only so long; a long run
// of it is the answer.
func TestThinkSplitLongLead(t *testing.T) {
	var k thinkSplit
	lead := strings.Repeat(" ", thinkLead+1)
	if r, a := k.feed(lead); r != "" || a != lead {
		t.Fatalf("reasoning %q answer %q", r, a)
	}
	if r, a := k.feed("<think>x</think>"); r != "" || a != "<think>x</think>" {
		t.Fatalf("after: reasoning %q answer %q", r, a)
	}
}

// splitThink (a title, a whole answer) splits at a </think> the model's template
// opened, unless the tag is in code or follows a <think> of the answer's own.
func TestSplitThinkCloseOnly(t *testing.T) {
	for _, c := range []struct{ in, reasoning, answer string }{
		{"Okay, a title.\n</think>\n\nTrip planning", "Okay, a title.\n", "Trip planning"},
		{"<think>r</think>Title", "r", "Title"},
		{"Use `</think>` here", "", "Use `</think>` here"},
		{"```\n</think>\n```", "", "```\n</think>\n```"},
		{"a <think> b </think> c", "", "a <think> b </think> c"},
		{"Just a title", "", "Just a title"},
	} {
		r, a := splitThink(c.in)
		if r != c.reasoning || a != c.answer {
			t.Errorf("splitThink(%q) = %q, %q; want %q, %q", c.in, r, a, c.reasoning, c.answer)
		}
	}
}
