package tools

import (
	"fmt"
	"strings"
)

// A line diff (Myers' O(ND) algorithm) and its unified rendering, for the diffs of
// write_file and patch.

// diffContext is the number of unchanged lines around each hunk.
const diffContext = 3

// maxEditDistance bounds the exact search: past this many inserted plus deleted lines
// (after the common prefix and suffix are set aside) the changed middle is reported as
// one block of deletions followed by one block of insertions. The diff stays correct,
// only not minimal, and memory stays bounded (about maxEditDistance² / 2 int32s).
const maxEditDistance = 2000

type editKind byte

const (
	opEqual  editKind = ' '
	opDelete editKind = '-'
	opInsert editKind = '+'
)

// edit is one line of an edit script: a line of a (equal, delete) or of b (insert).
type edit struct {
	kind editKind
	a, b int // index into a (equal, delete) and into b (equal, insert)
}

// splitLines splits s into lines, each keeping its "\n"; the last may lack one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return lines
}

// diffLines returns an edit script turning a into b.
func diffLines(a, b []string) []edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	out := make([]edit, 0, len(a)+len(b)-pre-suf)
	for i := 0; i < pre; i++ {
		out = append(out, edit{opEqual, i, i})
	}
	am, bm := a[pre:len(a)-suf], b[pre:len(b)-suf]
	// Lines as numbers, so the search compares ints.
	ids := map[string]int32{}
	intern := func(ls []string) []int32 {
		out := make([]int32, len(ls))
		for i, l := range ls {
			id, ok := ids[l]
			if !ok {
				id = int32(len(ids))
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	mid, ok := myers(intern(am), intern(bm), maxEditDistance)
	if !ok {
		mid = mid[:0]
		for i := range am {
			mid = append(mid, edit{opDelete, i, 0})
		}
		for j := range bm {
			mid = append(mid, edit{opInsert, len(am), j})
		}
	}
	for _, e := range mid {
		out = append(out, edit{e.kind, e.a + pre, e.b + pre})
	}
	for i := 0; i < suf; i++ {
		out = append(out, edit{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return out
}

// myers finds a shortest edit script from a to b, or reports false when it needs more
// than limit insertions and deletions.
func myers(a, b []int32, limit int) ([]edit, bool) {
	n, m := len(a), len(b)
	maxD := min(n+m, limit)
	off := maxD + 1
	v := make([]int32, 2*maxD+3)
	// trace[d] is v[-d..d] as it was when step d began.
	var trace [][]int32
	for d := 0; d <= maxD; d++ {
		snap := make([]int32, 2*d+1)
		copy(snap, v[off-d:off+d+1])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = int(v[off+k+1]) // down: an insertion
			} else {
				x = int(v[off+k-1]) + 1 // right: a deletion
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = int32(x)
			if x >= n && y >= m {
				return backtrack(trace, n, m), true
			}
		}
	}
	return nil, false
}

func backtrack(trace [][]int32, n, m int) []edit {
	var rev []edit
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		v := trace[d]
		at := func(k int) int { return int(v[k+d]) }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := 0
		if d > 0 {
			px = at(pk)
		}
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, edit{opEqual, x, y})
		}
		if d > 0 {
			if x == px {
				rev = append(rev, edit{opInsert, x, py})
			} else {
				rev = append(rev, edit{opDelete, px, y})
			}
		}
		x, y = px, py
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// Unified returns the unified diff turning oldText into newText, with 3 lines of
// context and the headers "--- a/<oldName>" and "+++ b/<newName>"; an empty name is
// /dev/null (a created or deleted file). A last line without a newline is followed by
// "\ No newline at end of file". It returns "" when the texts are equal.
func Unified(oldName, newName, oldText, newText string) string {
	if oldText == newText {
		return ""
	}
	a, b := splitLines(oldText), splitLines(newText)
	edits := diffLines(a, b)
	var sb strings.Builder
	header := func(prefix, name string) {
		if name == "" {
			fmt.Fprintf(&sb, "%s /dev/null\n", prefix)
		} else if prefix == "---" {
			fmt.Fprintf(&sb, "--- a/%s\n", name)
		} else {
			fmt.Fprintf(&sb, "+++ b/%s\n", name)
		}
	}
	header("---", oldName)
	header("+++", newName)

	for i := 0; i < len(edits); {
		// Find the next change.
		for i < len(edits) && edits[i].kind == opEqual {
			i++
		}
		if i == len(edits) {
			break
		}
		start := max(0, i-diffContext)
		// Extend the hunk while changes are within 2*context of each other.
		end := i
		for end < len(edits) {
			if edits[end].kind != opEqual {
				end++
				continue
			}
			run := end
			for run < len(edits) && edits[run].kind == opEqual {
				run++
			}
			if run == len(edits) || run-end > 2*diffContext {
				end = min(end+diffContext, len(edits))
				break
			}
			end = run
		}
		writeHunk(&sb, edits[start:end], a, b)
		i = end
	}
	return sb.String()
}

func writeHunk(sb *strings.Builder, h []edit, a, b []string) {
	aStart, bStart := -1, -1
	aCount, bCount := 0, 0
	for _, e := range h {
		if e.kind != opInsert {
			if aStart < 0 {
				aStart = e.a
			}
			aCount++
		}
		if e.kind != opDelete {
			if bStart < 0 {
				bStart = e.b
			}
			bCount++
		}
	}
	// An empty side starts where the hunk's first edit sits.
	if aStart < 0 {
		aStart = h[0].a
	}
	if bStart < 0 {
		bStart = h[0].b
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", hunkRange(aStart, aCount), hunkRange(bStart, bCount))
	for _, e := range h {
		line := ""
		if e.kind == opInsert {
			line = b[e.b]
		} else {
			line = a[e.a]
		}
		sb.WriteByte(byte(e.kind))
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// hunkRange renders a hunk side: "start,count", "start" for one line, and for an empty
// side the line after which it sits.
func hunkRange(start, count int) string {
	switch count {
	case 0:
		return fmt.Sprintf("%d,0", start)
	case 1:
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

// DiffStat counts the added and removed lines of a unified diff ("--- "/"+++ " header
// pairs are not counted).
func DiffStat(diff string) (added, removed int) {
	lines := strings.Split(diff, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			i++
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
	}
	return added, removed
}
