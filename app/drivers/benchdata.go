package drivers

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"talaria/backend/store"
	"talaria/backend/turn"
)

// The benchmarks' helpers: waiting for a frame, seeding chats, the answers the scripted
// provider streams, and the statistics of the figures.

// slope is the least-squares slope of ys over xs (units of y per unit of x).
func slope(xs, ys []float64) float64 {
	var mx, my float64
	for k := range xs {
		mx, my = mx+xs[k]/float64(len(xs)), my+ys[k]/float64(len(ys))
	}
	var sxy, sxx float64
	for k := range xs {
		sxy += (xs[k] - mx) * (ys[k] - my)
		sxx += (xs[k] - mx) * (xs[k] - mx)
	}
	if sxx == 0 {
		return 0
	}
	return sxy / sxx
}

// waitFrameWithin is waitFrame with a chosen timeout (waitFrameFor's arguments in the
// benchmarks' order).
func (s *scenario) waitFrameWithin(sessionID, event string, timeout time.Duration, start func() error) (turn.Frame, error) {
	return s.waitFrameFor(sessionID, event, start, timeout)
}

// seedChat stores a session of n messages (user and assistant in turn, the answers in
// Markdown with lists and code) whose last message ends with token.
//
// The sidebar lists only chats with a message, so a chat the benchmark opens has some.
func (s *scenario) seedChat(ctx context.Context, title string, n int, token string) (string, error) {
	sess, err := s.svc.Store.CreateSession(ctx, store.NewSession{Title: title})
	if err != nil {
		return "", err
	}
	if n == 0 {
		return sess.ID, nil
	}
	rows := make([]store.Message, 0, n)
	for i := range n {
		m := store.Message{Role: "user", Content: fmt.Sprintf("Question %d: how do I handle case %d in the parser?", i/2, i)}
		if i%2 == 1 {
			m = store.Message{Role: "assistant", Content: benchMessage(i)}
		}
		if i == n-1 {
			m.Content += "\n\n" + token
		}
		rows = append(rows, m)
	}
	if _, err := s.svc.Store.AppendMessages(ctx, sess.ID, sess.Revision, rows); err != nil {
		return "", err
	}
	return sess.ID, nil
}

// benchMessage is a saved answer of a few hundred bytes: a paragraph, a list with
// inline code and emphasis, and every fourth one a short code block.
func benchMessage(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "For case %d the parser **keeps the token** and moves on; the caller sees the error later.\n\n", i)
	fmt.Fprintf(&b, "- read the next byte with `next()`\n- check it against the table *before* advancing\n- report `ErrSyntax{Pos: %d}` when nothing matches\n", i)
	if i%4 == 1 {
		fmt.Fprintf(&b, "\n```go\nfunc case%d(p *Parser) error {\n\treturn p.expect(%d)\n}\n```\n", i, i)
	}
	return b.String()
}

// BenchAnswer is a Markdown answer of about size bytes: sections with paragraphs,
// lists, tables and fenced code blocks, as a long model answer has.
func BenchAnswer(size int) string {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "## Step %d: the %s pass\n\n", i+1, []string{"lexing", "parsing", "checking", "lowering"}[i%4])
		fmt.Fprintf(&b, "This pass walks the tree once and records what it finds in a table keyed by node id; "+
			"it never allocates per node, so a file of %d lines costs what its bytes cost. "+
			"The **important** part is that errors are *collected*, not thrown, and `Report()` prints them sorted.\n\n", 1000+i)
		b.WriteString("- the input is a `[]byte` read once\n- positions are byte offsets, lines computed on demand\n- every error names its position and the rule it broke\n\n")
		if i%2 == 0 {
			fmt.Fprintf(&b, "```go\nfunc pass%d(t *Tree) (errs []error) {\n\tfor _, n := range t.Nodes {\n\t\tif !n.Valid() {\n\t\t\terrs = append(errs, fmt.Errorf(\"node %%d: %%w\", n.ID, ErrInvalid))\n\t\t}\n\t}\n\treturn errs\n}\n```\n\n", i)
		} else {
			b.WriteString("| rule | cost | note |\n|---|---:|:---:|\n| one pass | O(n) | no allocation |\n| sort errors | O(e log e) | only when any |\n\n")
		}
	}
	return b.String()
}

// BenchCodeAnswer is an answer of about size bytes that is one fenced Go code block,
// left open (a model writing a long file): the worst realistic answer to stream.
func BenchCodeAnswer(size int) string {
	var b strings.Builder
	b.WriteString("Here is the whole file:\n\n```go\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "// pass%d walks the tree once; errors are collected, not thrown.\nfunc pass%d(t *Tree) (errs []error) {\n\tfor _, n := range t.Nodes {\n\t\tif !n.Valid() {\n\t\t\terrs = append(errs, fmt.Errorf(\"node %%d: %%w\", n.ID, ErrInvalid))\n\t\t}\n\t}\n\treturn errs\n}\n\n", i, i)
	}
	return b.String()
}

// splitTokens cuts s into at most n pieces of about 4 bytes (on rune boundaries).
func splitTokens(s string, n int) []string {
	var out []string
	for len(s) > 0 && len(out) < n {
		k := min(4, len(s))
		for k < len(s) && !utf8RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }

func median(v []float64) float64 { return pctl(v, 0.5) }

// pctl is the p-quantile (0..1) of v by the nearest rank; 0 for no values.
func pctl(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	i := int(p*float64(len(s)-1) + 0.5)
	return s[min(max(i, 0), len(s)-1)]
}

// benchEnvInt reads a whole-number setting of the benchmark from the environment: def
// when it is unset; an error naming the variable when it is not a whole number of at
// least min.
func benchEnvInt(name string, def, min int) (int, error) {
	s := os.Getenv(name)
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < min {
		return 0, fmt.Errorf("%s=%q: set it to a whole number of at least %d, or leave it unset for %d", name, s, min, def)
	}
	return v, nil
}
