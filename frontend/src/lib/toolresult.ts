// How a tool card shows what a tool answered. A tool's result is a JSON object the
// model reads (a saved tool row's content; tool_complete's raw_result while it runs):
// shown as it is, that is raw JSON with Go's \u003c escapes and literal \n. Instead a
// command (the terminal tool's {output, exit_code, error, ...}) shows its output as
// text, its exit code and its error apart; any other object shows its fields, strings
// as text and nested values indented; anything else is text. Terminal colours (ANSI
// escape sequences) are taken out: the card shows text, never markup.

import stripAnsiCodes from 'strip-ansi';
import { markBidiControls } from './commandview';

/** Tool output as the user reads it: no ANSI escapes, bidi controls made visible. */
function stripAnsi(s: string): string {
  return markBidiControls(stripAnsiCodes(s));
}

/** One field of a tool's result. */
export interface ResultField {
  key: string;
  /** The key for people: `exit_code` → `exit code`. */
  label: string;
  text: string;
  /** Shown as a block (several lines, or long); else inline beside its label. */
  block: boolean;
}

export type ToolResultView =
  | {
      kind: 'terminal';
      /** What the command printed (stdout and stderr), colours removed. */
      output: string;
      /** null when the result did not say. */
      exitCode: number | null;
      /** Why the command did not run or finish ("" when it ran to its end). */
      error: string;
      timedOut: boolean;
      truncated: boolean;
      /** How it was confined ("" when not said). */
      sandbox: string;
      /** Other fields the result carries (a sandbox note, ...). */
      fields: ResultField[];
    }
  | { kind: 'fields'; fields: ResultField[] }
  | { kind: 'text'; text: string };

// Fields a card shows elsewhere: the diff (DiffView) and the todo list (its panel).
const SHOWN_ELSEWHERE = new Set(['diff', 'todos']);
const TERMINAL_KEYS = new Set(['output', 'exit_code', 'error', 'timed_out', 'truncated', 'sandbox']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return !!v && typeof v === 'object' && !Array.isArray(v);
}

/** A JSON text's value, or undefined when it is not JSON. */
function parseJSON(text: string): unknown {
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    return undefined;
  }
}

function valueText(v: unknown): string {
  if (typeof v === 'string') return stripAnsi(v);
  if (v === null || v === undefined) return '';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v, null, 2);
}

function fieldsOf(r: Record<string, unknown>, skip: Set<string> = new Set()): ResultField[] {
  const out: ResultField[] = [];
  for (const [key, v] of Object.entries(r)) {
    if (skip.has(key) || SHOWN_ELSEWHERE.has(key) || v === null || v === undefined || v === '') continue;
    const text = valueText(v);
    out.push({ key, label: key.replace(/_/g, ' '), text, block: text.includes('\n') || text.length > 80 });
  }
  return out;
}

/**
 * What a tool card shows for a result: `result` is the result object when known
 * (raw_result, or null), `output` the card's text (the live preview, or the saved row's
 * content, itself often the result object as JSON).
 */
export function toolResultView(result: Record<string, unknown> | null | undefined, output: string): ToolResultView {
  let r = isRecord(result) ? result : null;
  if (!r) {
    const parsed = parseJSON(output);
    if (isRecord(parsed)) r = parsed;
    else if (parsed !== undefined) return { kind: 'text', text: valueText(parsed) };
    else return { kind: 'text', text: stripAnsi(output) };
  }
  if (typeof r.exit_code === 'number' || (typeof r.output === 'string' && 'exit_code' in r)) {
    return {
      kind: 'terminal',
      // raw_result caps each string at 8 KiB, as the preview does; the preview has the
      // error appended, so the result's own output is the one shown.
      output: stripAnsi(typeof r.output === 'string' ? r.output : ''),
      exitCode: typeof r.exit_code === 'number' ? r.exit_code : null,
      error: typeof r.error === 'string' ? stripAnsi(r.error) : r.error ? valueText(r.error) : '',
      timedOut: r.timed_out === true,
      truncated: r.truncated === true,
      sandbox: typeof r.sandbox === 'string' ? r.sandbox : '',
      fields: fieldsOf(r, TERMINAL_KEYS),
    };
  }
  const fields = fieldsOf(r);
  if (fields.length === 0) return { kind: 'text', text: stripAnsi(output) };
  return { kind: 'fields', fields };
}

/**
 * True when a tool ended without the user's answer it waited for: a clarify that timed
 * out or was dismissed ({answered: false} with no error; an error is a failure). Such a
 * card is not "done".
 */
export function unanswered(result: Record<string, unknown> | null | undefined, output: string): boolean {
  const r = isRecord(result) ? result : parseJSON(output);
  if (!isRecord(r) || r.answered !== false) return false;
  return r.error === undefined || r.error === null || r.error === '';
}

/**
 * Why a tool call did not run when the approval rules stopped it, from its result's
 * error ("denied: the user did not allow this…", "refused: this command …"; the
 * runtimes' gate words them so): 'denied' (the user, or nobody in time), 'refused' (a
 * command never allowed), or '' for anything else, a real failure included. Such a
 * card says so instead of "failed".
 */
export function refusalOf(result: Record<string, unknown> | null | undefined, output: string): '' | 'denied' | 'refused' {
  const r = isRecord(result) ? result : parseJSON(output);
  const e = isRecord(r) && typeof r.error === 'string' ? r.error : output;
  const t = e.trimStart();
  if (t.startsWith('denied:')) return 'denied';
  if (t.startsWith('refused:')) return 'refused';
  return '';
}
