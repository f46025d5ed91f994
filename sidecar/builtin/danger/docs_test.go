package danger

import (
	"os"
	"strings"
	"testing"
)

// TestDocsListTheTable: docs/sandbox.md shows every row of the table as it is (key,
// hardline mark, description, example, near miss), in order.
func TestDocsListTheTable(t *testing.T) {
	b, err := os.ReadFile("../../../docs/sandbox.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	esc := func(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", `\n`) }
	last := 0
	for _, p := range Patterns() {
		h := " "
		if p.Hardline {
			h = "**hardline**"
		}
		row := "| `" + p.Key + "` | " + h + " | " + esc(p.Description) + " | `" + esc(p.Example) + "` | `" + esc(p.NearMiss) + "` |"
		i := strings.Index(doc, row)
		if i < 0 {
			t.Errorf("docs/sandbox.md lacks (or has another text for) the row:\n%s", row)
			continue
		}
		if i < last {
			t.Errorf("docs/sandbox.md lists %s out of the table's order", p.Key)
		}
		last = i
	}
}
