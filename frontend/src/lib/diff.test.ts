import { describe, expect, it } from 'vitest';
import { parseUnifiedDiff } from './diff';

const TWO_FILES = `--- a/main.go
+++ b/main.go
@@ -1,2 +1,4 @@
 package main
-import "fmt"
+import (
+\t"fmt"
+)
\\ No newline at end of file
diff --git a/x.txt b/x.txt
new file mode 100644
--- /dev/null
+++ b/x.txt
@@ -0,0 +1 @@
+hello <b>world</b>
`;

describe('parseUnifiedDiff', () => {
  it('reads files, counts and numbered lines', () => {
    const d = parseUnifiedDiff(TWO_FILES);
    expect(d.added).toBe(4);
    expect(d.removed).toBe(1);
    expect(d.files.map((f) => [f.name, f.added, f.removed])).toEqual([['main.go', 3, 1], ['x.txt', 1, 0]]);
    expect(d.files[0].lines).toEqual([
      { kind: 'hunk', text: '@@ -1,2 +1,4 @@', oldNo: null, newNo: null },
      { kind: 'ctx', text: 'package main', oldNo: 1, newNo: 1 },
      { kind: 'del', text: 'import "fmt"', oldNo: 2, newNo: null },
      { kind: 'add', text: 'import (', oldNo: null, newNo: 2 },
      { kind: 'add', text: '\t"fmt"', oldNo: null, newNo: 3 },
      { kind: 'add', text: ')', oldNo: null, newNo: 4 },
      { kind: 'note', text: 'No newline at end of file', oldNo: null, newNo: null },
    ]);
    // Markup in a diff is just text here.
    expect(d.files[1].lines[1]).toEqual({ kind: 'add', text: 'hello <b>world</b>', oldNo: null, newNo: 1 });
  });

  it('is empty for no diff or text that is not one', () => {
    expect(parseUnifiedDiff('')).toEqual({ files: [], added: 0, removed: 0 });
    expect(parseUnifiedDiff('just some output\n').files).toEqual([]);
  });

  it('caps the rendered lines and counts what it left out', () => {
    const body = Array.from({ length: 50 }, (_, i) => `+line ${i}`).join('\n');
    const d = parseUnifiedDiff(`--- a/f\n+++ b/f\n@@ -0,0 +1,50 @@\n${body}\n`, 10);
    expect(d.files[0].lines).toHaveLength(10);
    expect(d.files[0].omitted).toBe(41);
    expect(d.added).toBe(50);
  });
});
