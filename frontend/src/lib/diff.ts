// Unified diff → rows for DiffView, parsed by parse-diff. The rows are plain text; the
// component renders them as text nodes (never HTML).

import parseDiff from 'parse-diff';

export type DiffLineKind = 'add' | 'del' | 'ctx' | 'hunk' | 'note';

export interface DiffLine {
  kind: DiffLineKind;
  /** The line without its +/-/space prefix. */
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

export interface DiffFile {
  name: string;
  added: number;
  removed: number;
  lines: DiffLine[];
  /** Lines left out past the cap. */
  omitted: number;
}

export interface ParsedDiff {
  files: DiffFile[];
  added: number;
  removed: number;
}

/** The most lines a card renders per diff (a huge diff would swamp the window). */
export const MAX_DIFF_LINES = 2000;

export function parseUnifiedDiff(text: string, maxLines = MAX_DIFF_LINES): ParsedDiff {
  if (!text || !text.trim()) return { files: [], added: 0, removed: 0 };
  let files: parseDiff.File[];
  try {
    files = parseDiff(text);
  } catch {
    return { files: [], added: 0, removed: 0 };
  }
  let budget = maxLines;
  let added = 0;
  let removed = 0;
  const out: DiffFile[] = [];
  for (const f of files) {
    const name = fileName(f);
    const lines: DiffLine[] = [];
    let omitted = 0;
    let fa = 0;
    let fr = 0;
    for (const chunk of f.chunks) {
      const rows: DiffLine[] = [{ kind: 'hunk', text: chunk.content, oldNo: null, newNo: null }];
      for (const c of chunk.changes) {
        if (c.content.startsWith('\\')) {
          rows.push({ kind: 'note', text: c.content.replace(/^\\\s?/, ''), oldNo: null, newNo: null });
        } else if (c.type === 'add') {
          fa++;
          rows.push({ kind: 'add', text: c.content.slice(1), oldNo: null, newNo: c.ln });
        } else if (c.type === 'del') {
          fr++;
          rows.push({ kind: 'del', text: c.content.slice(1), oldNo: c.ln, newNo: null });
        } else {
          rows.push({ kind: 'ctx', text: c.content.slice(1), oldNo: c.ln1, newNo: c.ln2 });
        }
      }
      for (const r of rows) {
        if (budget > 0) {
          lines.push(r);
          budget--;
        } else if (r.kind !== 'hunk') {
          omitted++;
        }
      }
    }
    added += fa;
    removed += fr;
    if (f.chunks.length > 0 || name) out.push({ name, added: fa, removed: fr, lines, omitted });
  }
  return { files: out, added, removed };
}

function fileName(f: parseDiff.File): string {
  const to = f.to && f.to !== '/dev/null' ? f.to : '';
  const from = f.from && f.from !== '/dev/null' ? f.from : '';
  if (to && from && to !== from) return `${from} → ${to}`;
  return to || from;
}
