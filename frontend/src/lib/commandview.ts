// How an approval card shows a command: what the agent wants to run, with nothing
// hidden. Runs of white space are collapsed into a marker that says what they were (a
// command padded with hundreds of spaces or blank lines cannot push its dangerous part
// out of view), invisible and direction-changing characters (zero-width spaces, bidi
// overrides, soft hyphens, tag characters, control characters) are shown as named
// markers, and the part the dangerous-command check matched (the frame's span_start /
// span_end, UTF-8 byte offsets) is marked. Pure: tested without a browser.

export type SegmentKind = 'text' | 'space' | 'invisible';

export interface Segment {
  kind: SegmentKind;
  /** What is shown: the text itself, or the marker's label. */
  text: string;
  /** The original characters (for a title/tooltip). */
  raw: string;
  /** Inside the part the check matched. */
  danger: boolean;
}

/** Names of the invisible and direction-changing characters a card makes visible. */
const NAMED: Record<number, string> = {
  0x00ad: 'SOFT HYPHEN',
  0x034f: 'COMBINING GRAPHEME JOINER',
  0x061c: 'ARABIC LETTER MARK',
  0x115f: 'HANGUL CHOSEONG FILLER',
  0x1160: 'HANGUL JUNGSEONG FILLER',
  0x17b4: 'KHMER VOWEL INHERENT AQ',
  0x17b5: 'KHMER VOWEL INHERENT AA',
  0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE',
  0x200c: 'ZERO WIDTH NON-JOINER',
  0x200d: 'ZERO WIDTH JOINER',
  0x200e: 'LEFT-TO-RIGHT MARK',
  0x200f: 'RIGHT-TO-LEFT MARK',
  0x202a: 'LEFT-TO-RIGHT EMBEDDING',
  0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING',
  0x202d: 'LEFT-TO-RIGHT OVERRIDE',
  0x202e: 'RIGHT-TO-LEFT OVERRIDE',
  0x2060: 'WORD JOINER',
  0x2061: 'FUNCTION APPLICATION',
  0x2062: 'INVISIBLE TIMES',
  0x2063: 'INVISIBLE SEPARATOR',
  0x2064: 'INVISIBLE PLUS',
  0x2066: 'LEFT-TO-RIGHT ISOLATE',
  0x2067: 'RIGHT-TO-LEFT ISOLATE',
  0x2068: 'FIRST STRONG ISOLATE',
  0x2069: 'POP DIRECTIONAL ISOLATE',
  0x206a: 'INHIBIT SYMMETRIC SWAPPING',
  0x206b: 'ACTIVATE SYMMETRIC SWAPPING',
  0x206c: 'INHIBIT ARABIC FORM SHAPING',
  0x206d: 'ACTIVATE ARABIC FORM SHAPING',
  0x206e: 'NATIONAL DIGIT SHAPES',
  0x206f: 'NOMINAL DIGIT SHAPES',
  0x3164: 'HANGUL FILLER',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
  0xffa0: 'HALFWIDTH HANGUL FILLER',
  0xfff9: 'INTERLINEAR ANNOTATION ANCHOR',
  0xfffa: 'INTERLINEAR ANNOTATION SEPARATOR',
  0xfffb: 'INTERLINEAR ANNOTATION TERMINATOR',
};

/** Whether a code point is shown as a marker instead of itself. */
export function isInvisible(cp: number): boolean {
  if (cp in NAMED) return true;
  if (cp < 0x20 && cp !== 0x0a && cp !== 0x09 && cp !== 0x20) return true; // C0 controls but \n and \t
  if (cp >= 0x7f && cp <= 0x9f) return true; // DEL and C1 controls
  if (cp >= 0xfe00 && cp <= 0xfe0f) return true; // variation selectors
  if (cp >= 0xe0000 && cp <= 0xe007f) return true; // tag characters
  if (cp >= 0xe0100 && cp <= 0xe01ef) return true; // variation selectors supplement
  return false;
}

/** White space a card collapses when it repeats (and marks even alone when unusual). */
function isSpace(cp: number): boolean {
  return (
    cp === 0x20 || cp === 0x09 || cp === 0x0a || cp === 0x0b || cp === 0x0c || cp === 0x0d || cp === 0xa0 ||
    cp === 0x1680 || (cp >= 0x2000 && cp <= 0x200a) || cp === 0x2028 || cp === 0x2029 || cp === 0x202f ||
    cp === 0x205f || cp === 0x3000
  );
}

function hex(cp: number): string {
  return 'U+' + cp.toString(16).toUpperCase().padStart(4, '0');
}

/** The marker of one invisible character, e.g. ⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩. */
export function invisibleLabel(cp: number): string {
  const name = NAMED[cp];
  return name ? `⟨${hex(cp)} ${name}⟩` : `⟨${hex(cp)}⟩`;
}

/** The marker of a run of white space, e.g. ⟨240 spaces⟩ or ⟨3 newlines, 8 spaces⟩. */
export function spaceLabel(run: string): string {
  const counts = new Map<string, number>();
  for (const ch of run) {
    const cp = ch.codePointAt(0)!;
    const name =
      cp === 0x20 ? 'space' : cp === 0x09 ? 'tab' : cp === 0x0a ? 'newline' : cp === 0x0d ? 'carriage return' : cp === 0xa0 ? 'no-break space' : hex(cp);
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const parts = [...counts].map(([name, n]) => `${n} ${name}${n === 1 || name.startsWith('U+') ? '' : 's'}`);
  return `⟨${parts.join(', ')}⟩`;
}

/** Maps UTF-8 byte offsets of s to string (UTF-16) indices; offsets inside a character round down. */
export function byteToIndex(s: string, byte: number): number {
  let bytes = 0;
  let i = 0;
  for (const ch of s) {
    if (bytes >= byte) return i;
    const cp = ch.codePointAt(0)!;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > byte) return i;
    bytes += n;
    i += ch.length;
  }
  return s.length;
}

/**
 * The segments of a command for an approval card. A run of two or more white-space
 * characters, or one unusual one (anything but a space, a tab or a newline), becomes a
 * 'space' marker; a single newline stays (scripts keep their lines) but is repeated
 * after a marker that holds newlines. Invisible characters become 'invisible' markers.
 * spanStart/spanEnd are UTF-8 byte offsets of the matched part (ignored when empty or
 * out of range).
 */
export function commandSegments(command: string, spanStart = 0, spanEnd = 0): Segment[] {
  let from = -1;
  let to = -1;
  if (spanEnd > spanStart && spanStart >= 0) {
    from = byteToIndex(command, spanStart);
    to = byteToIndex(command, spanEnd);
    if (to <= from) from = to = -1;
  }
  const chars = Array.from(command);
  const segs: Segment[] = [];
  let index = 0; // UTF-16 index of chars[i]
  const push = (kind: SegmentKind, text: string, raw: string, danger: boolean) => {
    const last = segs[segs.length - 1];
    if (kind === 'text' && last && last.kind === 'text' && last.danger === danger) {
      last.text += text;
      last.raw += raw;
      return;
    }
    segs.push({ kind, text, raw, danger });
  };
  const inSpan = (at: number) => from >= 0 && at >= from && at < to;
  for (let i = 0; i < chars.length; ) {
    const ch = chars[i];
    const cp = ch.codePointAt(0)!;
    if (isSpace(cp)) {
      let j = i;
      let run = '';
      // A run stops where the matched part begins or ends, so the mark stays exact.
      const danger = inSpan(index);
      let k = index;
      while (j < chars.length && isSpace(chars[j].codePointAt(0)!) && inSpan(k) === danger) {
        run += chars[j];
        k += chars[j].length;
        j++;
      }
      const usual = run === ' ' || run === '\t' || run === '\n';
      if (usual) {
        push('text', run, run, danger);
      } else {
        push('space', spaceLabel(run), run, danger);
        if (run.includes('\n')) push('text', '\n', '', danger);
      }
      index = k;
      i = j;
      continue;
    }
    if (isInvisible(cp)) {
      push('invisible', invisibleLabel(cp), ch, inSpan(index));
    } else {
      push('text', ch, ch, inSpan(index));
    }
    index += ch.length;
    i++;
  }
  return segs;
}

/** Whether the command holds anything a card marks (collapsed space or invisible characters). */
export function hasHidden(segs: Segment[]): boolean {
  return segs.some((s) => s.kind !== 'text');
}

/** The bidi embedding, override and isolate controls (U+202A–U+202E, U+2066–U+2069). */
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;

/**
 * Replaces each bidi control in untrusted text (model output, tool output) by its
 * visible marker, e.g. ⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩, so a name like
 * "report\u202Efdp.exe" cannot pass for "reportexe.pdf". Right-to-left text needs none
 * of them: paragraphs get dir="auto".
 */
export function markBidiControls(s: string): string {
  return s.replace(BIDI_CONTROLS, (c) => invisibleLabel(c.codePointAt(0)!));
}
