// Hints from the host name commands between backticks ("Ollama: `ollama serve`"), as
// the host's messages are written. The window shows them as code, never the backticks,
// and never as HTML: a hint is split into text and code spans that are rendered as text.

/** A piece of a hint: plain text, or a command / path to show as code. */
export interface HintPart {
  code: boolean;
  text: string;
}

/**
 * Splits text at backticks: odd pieces are code. An unpaired backtick is kept as text
 * (`it's` is not code). Empty pieces are dropped.
 */
export function hintParts(text: string): HintPart[] {
  const pieces = text.split('`');
  if (pieces.length < 3) return text ? [{ code: false, text }] : [];
  // An even number of backticks pairs them all; with an odd one the last stays text.
  const paired = pieces.length % 2 === 1 ? pieces : [...pieces.slice(0, -2), `${pieces.at(-2)}\`${pieces.at(-1)}`];
  const out: HintPart[] = [];
  paired.forEach((p, i) => {
    if (p) out.push({ code: i % 2 === 1, text: p });
  });
  return out;
}
