package tools

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// applyUnified applies a unified diff made by Unified to old, checking every context
// and deleted line; it is the test's independent reading of the format.
func applyUnified(t *testing.T, old, diff string) string {
	t.Helper()
	if diff == "" {
		return old
	}
	a := splitLines(old)
	lines := strings.SplitAfter(diff, "\n")
	if !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		t.Fatalf("bad headers in\n%s", diff)
	}
	hunkRE := regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)
	var out []string
	pos := 0 // next line of a to copy
	for i := 2; i < len(lines) && lines[i] != ""; {
		m := hunkRE.FindStringSubmatch(lines[i])
		if m == nil {
			t.Fatalf("bad hunk header %q in\n%s", lines[i], diff)
		}
		aStart, _ := strconv.Atoi(m[1])
		aCount := 1
		if m[2] != "" {
			aCount, _ = strconv.Atoi(m[2])
		}
		if aCount > 0 {
			aStart--
		}
		if aStart < pos {
			t.Fatalf("overlapping hunks in\n%s", diff)
		}
		out = append(out, a[pos:aStart]...)
		pos = aStart
		i++
		for i < len(lines) && lines[i] != "" && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			body := l[1:]
			if i+1 < len(lines) && lines[i+1] == "\\ No newline at end of file\n" {
				body = strings.TrimSuffix(body, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(a) || a[pos] != body {
					t.Fatalf("line %d: diff says %q, file has %q\n%s", pos, body, a[min(pos, len(a)-1)], diff)
				}
				if l[0] == ' ' {
					out = append(out, body)
				}
				pos++
			case '+':
				out = append(out, body)
			default:
				t.Fatalf("bad diff line %q", l)
			}
			i++
		}
	}
	out = append(out, a[pos:]...)
	return strings.Join(out, "")
}

func TestUnified(t *testing.T) {
	tests := []struct {
		name, a, b, want string
	}{
		{"equal", "x\n", "x\n", ""},
		{"create", "", "a\nb\n", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"one line changed", "1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nFIVE\n6\n7\n8\n9\n",
			"--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+FIVE\n 6\n 7\n 8\n"},
		{"no newline at end", "a\nb", "a\nc", "--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{"newline added at end", "a", "a\n", "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n"},
		{"two hunks", strings.Repeat("x\n", 3) + "a\n" + strings.Repeat("y\n", 10) + "b\n", strings.Repeat("x\n", 3) + "A\n" + strings.Repeat("y\n", 10) + "B\n",
			"--- a/f\n+++ b/f\n@@ -1,7 +1,7 @@\n x\n x\n x\n-a\n+A\n y\n y\n y\n@@ -12,4 +12,4 @@\n y\n y\n y\n-b\n+B\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			oldName := "f"
			if tt.a == "" {
				oldName = ""
			}
			got := Unified(oldName, "f", tt.a, tt.b)
			if got != tt.want {
				t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
			}
			if applied := applyUnified(t, tt.a, got); applied != tt.b {
				t.Fatalf("applying gives %q", applied)
			}
		})
	}
}

// lcs is the textbook dynamic programme, to check the diff is minimal.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func randomText(r *rand.Rand, n int) string {
	var sb strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&sb, "%c\n", 'a'+rune(r.IntN(4)))
	}
	s := sb.String()
	if r.IntN(4) == 0 {
		s = strings.TrimSuffix(s, "\n")
	}
	return s
}

func TestUnifiedRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2000; i++ {
		a, b := randomText(r, r.IntN(30)), randomText(r, r.IntN(30))
		d := Unified("f", "f", a, b)
		if got := applyUnified(t, a, d); got != b {
			t.Fatalf("case %d: applying the diff of %q -> %q gives %q\n%s", i, a, b, got, d)
		}
		added, removed := DiffStat(d)
		common := lcs(splitLines(a), splitLines(b))
		if added != len(splitLines(b))-common || removed != len(splitLines(a))-common {
			t.Fatalf("case %d: +%d -%d is not minimal (lcs %d)", i, added, removed, common)
		}
	}
}

func TestUnifiedLargeFallsBack(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 6000; i++ {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	d := Unified("f", "f", "head\n"+a.String()+"tail\n", "head\n"+b.String()+"tail\n")
	if got := applyUnified(t, "head\n"+a.String()+"tail\n", d); got != "head\n"+b.String()+"tail\n" {
		t.Fatal("the fallback diff does not apply")
	}
	if added, removed := DiffStat(d); added != 6000 || removed != 6000 {
		t.Fatalf("+%d -%d", added, removed)
	}
}

func TestDiffStat(t *testing.T) {
	d := Unified("f", "f", "a\n-- x\nb\n", "a\n--- y\nb\nc\n")
	if added, removed := DiffStat(d); added != 2 || removed != 1 {
		t.Fatalf("+%d -%d in\n%s", added, removed, d)
	}
}
