// Search hits mark the matched terms of a snippet or title between U+0002 and U+0003
// (backend/store/search.go). splitMarks turns such a string into runs the Highlight
// component renders as text nodes, the matched ones inside <mark>; the text itself is
// never parsed as HTML. An unpaired marker is dropped.

import { MARK_END, MARK_START } from './protocol';

export interface MarkRun {
  text: string;
  mark: boolean;
}

export function splitMarks(s: string): MarkRun[] {
  const out: MarkRun[] = [];
  let inMark = false;
  let buf = '';
  const push = (mark: boolean) => {
    if (!buf) return;
    const last = out[out.length - 1];
    if (last && last.mark === mark) last.text += buf;
    else out.push({ text: buf, mark });
    buf = '';
  };
  for (const ch of s ?? '') {
    if (ch === MARK_START) {
      if (!inMark) {
        push(false);
        inMark = true;
      }
    } else if (ch === MARK_END) {
      if (inMark) {
        push(true);
        inMark = false;
      }
    } else {
      buf += ch;
    }
  }
  // An opening marker with no end: its text is plain.
  push(false);
  return out;
}

/** The string without its markers. */
export function stripMarks(s: string): string {
  return splitMarks(s)
    .map((r) => r.text)
    .join('');
}
