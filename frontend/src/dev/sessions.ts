// DEV ONLY: full-text search of the fake backend and the conversations of the search
// scenario (`?scenario=search`). The search follows backend/store/search.go closely
// enough for the window: every word must occur (case ignored), the last one also as a
// prefix; title matches first; one hit per session with a snippet around the match;
// matched terms between U+0002 and U+0003.

import type { MessageView, SearchHit, SessionInfo } from '../lib/protocol';

const S = '\u0002';
const E = '\u0003';
const WORD = /[\p{L}\p{N}_]+/gu;

function words(query: string): { list: string[]; prefixLast: boolean } {
  const list = (query.toLowerCase().match(WORD) ?? []).slice(0, 32);
  return { list, prefixLast: !/\s$/.test(query) };
}

function matches(token: string, q: { list: string[]; prefixLast: boolean }): boolean {
  const t = token.toLowerCase();
  return q.list.some((w, i) => t === w || (i === q.list.length - 1 && q.prefixLast && t.startsWith(w)));
}

function hasAll(text: string, q: { list: string[]; prefixLast: boolean }): boolean {
  const tokens = (text.toLowerCase().match(WORD) ?? []) as string[];
  return q.list.every((w, i) => tokens.some((t) => t === w || (i === q.list.length - 1 && q.prefixLast && t.startsWith(w))));
}

function mark(text: string, q: { list: string[]; prefixLast: boolean }): string {
  return text.replace(WORD, (t) => (matches(t, q) ? `${S}${t}${E}` : t));
}

/** About 16 words around the first match, marked, with … where it was cut. */
function snippet(text: string, q: { list: string[]; prefixLast: boolean }): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const spans = [...flat.matchAll(WORD)];
  const first = spans.findIndex((m) => matches(m[0], q));
  if (first < 0) return '';
  const from = Math.max(0, first - 6);
  const to = Math.min(spans.length - 1, first + 10);
  const start = spans[from].index ?? 0;
  const end = (spans[to].index ?? 0) + spans[to][0].length;
  return `${from > 0 ? '…' : ''}${mark(flat.slice(start, end), q)}${to < spans.length - 1 ? '…' : ''}`;
}

export function search(
  sessions: readonly SessionInfo[],
  messages: ReadonlyMap<string, readonly MessageView[]>,
  query: string,
  limit = 20,
): SearchHit[] {
  const q = words(query);
  if (q.list.length === 0) return [];
  const hits: SearchHit[] = [];
  for (const s of sessions) {
    const titleHit = hasAll(s.title, q);
    const rows = (messages.get(s.id) ?? []).filter((m) => m.role !== 'system' && m.content);
    const best = rows.find((m) => hasAll(m.content, q));
    if (!titleHit && !best) continue;
    const titleHighlight = titleHit ? mark(s.title, q) : '';
    hits.push({
      session_id: s.id,
      title: s.title,
      title_highlight: titleHighlight,
      message_id: best ? Number(String(best.id).replace(/\D/g, '')) || 1 : 0,
      position: best ? best.position : -1,
      role: best ? best.role : '',
      snippet: best ? snippet(best.content, q) : titleHighlight,
      rank: titleHit ? -10 : -1 - (best ? best.content.length % 7 : 0),
      updated_at: s.updated_at,
      archived: !!s.archived_at,
    });
  }
  hits.sort((a, b) => Number(!!b.title_highlight) - Number(!!a.title_highlight) || a.rank - b.rank);
  return hits.slice(0, limit);
}

type Row = [MessageView['role'], string];

/** Conversations with enough text to search (the search scenario). */
export const SEARCH_SEED: Array<{ id: string; title: string; daysAgo: number; archived?: boolean; pinned?: boolean; rows: Row[] }> = [
  {
    id: 'q1', title: 'Why is the SQLite file locked?', daysAgo: 1, pinned: true,
    rows: [
      ['user', 'The app says "database is locked" when two turns finish at once. What is going on with the file?'],
      ['assistant', 'Two writers raced. In WAL mode readers never block, but a second writer waits up to busy_timeout; with the default of 0 it fails at once. Set `PRAGMA busy_timeout = 5000` and keep one place that owns writes.'],
    ],
  },
  {
    id: 'q2', title: 'Parsing the config file', daysAgo: 3,
    rows: [
      ['user', 'Load config.yaml, but fall back to defaults when the file is missing.'],
      ['assistant', 'Use os.ReadFile and check errors.Is(err, fs.ErrNotExist): a missing file returns the defaults, any other error is reported with the path.'],
      ['user', 'And an empty file?'],
      ['assistant', 'An empty file decodes to the zero Config; merge it over the defaults so nothing required is lost.'],
    ],
  },
  {
    id: 'q3', title: 'Rate limits on OpenRouter', daysAgo: 12, archived: true,
    rows: [
      ['user', 'We hit 429s during long agent runs.'],
      ['assistant', 'Honour Retry-After, back off exponentially, and show the wait in the status bar so nobody thinks the app hung.'],
    ],
  },
  {
    id: 'q4', title: 'Tail a log file in Python', daysAgo: 20,
    rows: [
      ['user', 'How do I follow a growing log file like tail -f?'],
      ['assistant', 'Open the file, seek to the end, then read lines in a loop and sleep briefly when readline() returns an empty string.'],
    ],
  },
];
