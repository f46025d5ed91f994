// Small display helpers shared by the components (pure, tested).

import type { RunStatus, SidecarStatus, Usage } from './protocol';

/** 950 → "950", 12_345 → "12.3k", 2_500_000 → "2.5M". */
export function compactNumber(n: number): string {
  if (!Number.isFinite(n)) return '0';
  const a = Math.abs(n);
  if (a < 1000) return String(Math.round(n));
  if (a < 1_000_000) return `${trim1(n / 1000)}k`;
  return `${trim1(n / 1_000_000)}M`;
}

function trim1(x: number): string {
  return x.toFixed(1).replace(/\.0$/, '');
}

export function formatCost(usd: number): string {
  if (!usd || !Number.isFinite(usd)) return '';
  if (usd < 0.01) return `$${usd.toFixed(4)}`;
  return `$${usd.toFixed(2)}`;
}

/** `estimated`: the output count is a guess from token deltas (shown with a ~). */
export function formatUsage(u: Usage | null | undefined, estimated = false): string {
  if (!u || (!u.input_tokens && !u.output_tokens && !u.estimated_cost)) return '';
  const parts = [`${compactNumber(u.input_tokens)} in`, `${estimated ? '~' : ''}${compactNumber(u.output_tokens)} out`];
  if (u.cache_read_tokens) parts.push(`${compactNumber(u.cache_read_tokens)} cached`);
  const cost = formatCost(u.estimated_cost);
  if (cost) parts.push(cost);
  return parts.join(' · ');
}

export function formatTps(tps: number | null | undefined): string {
  if (!tps || !Number.isFinite(tps) || tps <= 0) return '';
  return `${tps < 10 ? tps.toFixed(1) : Math.round(tps)} tok/s`;
}

export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) return '';
  if (seconds < 60) return `${seconds < 10 ? seconds.toFixed(1) : Math.round(seconds)}s`;
  const m = Math.floor(seconds / 60);
  const s = Math.round(seconds % 60);
  return `${m}m ${s}s`;
}

/** The live run status as a short phrase; `now` is epoch ms. */
export function runStatusText(rs: RunStatus | null | undefined, now = Date.now()): string {
  if (!rs) return '';
  switch (rs.status) {
    case 'working':
      // The agent's own status line (Hermes's "Waiting for …", a compaction step) when
      // it sent one.
      return rs.detail || 'Working…';
    case 'compressing':
      return 'Compressing context…';
    case 'prompt_reading':
      return typeof rs.progress_percent === 'number'
        ? `Reading prompt ${Math.round(rs.progress_percent)}%`
        : 'Reading prompt…';
    case 'rate_limit_wait': {
      const who = rs.provider ? `${rs.provider}'s` : "the provider's";
      if (typeof rs.until === 'number') {
        const left = Math.max(0, Math.ceil((rs.until - now) / 1000)); // until: epoch ms
        return `Waiting for ${who} rate limit, ${left} s`;
      }
      return `Waiting for ${who} rate limit…`;
    }
    default:
      return '';
  }
}

/**
 * The agent's state in a few words. `elapsedS`: seconds since the status arrived, so a
 * restart's "next try in" counts down.
 */
export function sidecarText(s: SidecarStatus | null | undefined, elapsedS = 0): string {
  if (!s) return 'Agent: unknown';
  const runtime = s.runtime ? ` (${s.runtime}${s.agent_version ? ` ${s.agent_version}` : ''})` : '';
  switch (s.state) {
    case 'ready':
      // A sidecar on another machine whose ssh connection dropped: it goes on there,
      // and what it says arrives once the link has connected again.
      if (s.connection === 'reconnecting') return `Connection lost, reconnecting${runtime}; the agent goes on there`;
      return `Agent ready${runtime}`;
    case 'starting':
      return `Agent starting${runtime}`;
    case 'restarting': {
      const left = Math.ceil(s.next_retry_s - elapsedS);
      return left > 0 ? `Agent restarting, attempt ${s.attempt}, next try in ${left} s` : `Agent restarting, attempt ${s.attempt}…`;
    }
    case 'down':
      return s.error ? `Agent down: ${s.error}` : 'Agent down';
    default:
      return `Agent ${String(s.state)}`;
  }
}

// One formatter for every date shown: `toLocaleDateString()` builds a new ICU formatter on
// each call (about 2 ms in WebKitGTK), which made a sidebar of old chats slow to paint.
let dateFormat: Intl.DateTimeFormat | null = null;
function localDate(ms: number): string {
  if (!dateFormat) {
    const kept = keptDatePattern();
    if (kept) return formatDatePattern(kept, ms);
  }
  dateFormat ??= new Intl.DateTimeFormat();
  keepDatePattern(dateFormat);
  return dateFormat.format(ms);
}

/**
 * A numeric date's pattern as the locale's default formatter writes it: the fields in
 * order with their padding, and the text between them (en-US: M/D/YYYY, de: D.M.YYYY).
 */
export type DatePattern = ({ field: 'day' | 'month' | 'year'; digits: 1 | 2 | 4 } | { text: string })[];

// The first Intl formatter of a page costs 10–30 ms in WebKitGTK (ICU sets up its
// data), and a sidebar showing an old chat needed one inside the window's first frame
// (issue 16). The locale's pattern is kept between runs (localStorage, under the
// locale's name); a start with a kept pattern writes dates without ICU, and checks the
// pattern against ICU once the window is up (a changed one is kept for the next dates).
const PATTERN_KEY = 'talaria.datePattern';

function storage(): Storage | null {
  try {
    return typeof window !== 'undefined' && window.localStorage ? window.localStorage : null;
  } catch {
    return null; // storage refused (a private or broken profile)
  }
}

function localeKey(): string {
  return typeof navigator !== 'undefined' ? (navigator.languages?.join(',') || navigator.language || '') : '';
}

/**
 * The pattern of fmt's dates, from the parts it writes for 3 February 2001, or null when
 * they are not plain Latin digits in a Gregorian day, month and year (then only ICU
 * writes them: other numerals, calendars or fields).
 */
export function datePatternOf(fmt: Intl.DateTimeFormat): DatePattern | null {
  const o = fmt.resolvedOptions();
  if (o.calendar !== 'gregory' || o.numberingSystem !== 'latn') return null;
  const out: DatePattern = [];
  const seen = new Set<string>();
  for (const p of fmt.formatToParts(new Date(2001, 1, 3))) {
    if (p.type === 'literal') {
      if (p.value.length > 8) return null;
      out.push({ text: p.value });
      continue;
    }
    if (p.type !== 'day' && p.type !== 'month' && p.type !== 'year') return null;
    const want = p.type === 'day' ? ['3', '03'] : p.type === 'month' ? ['2', '02'] : ['2001', '01'];
    if (!want.includes(p.value) || seen.has(p.type)) return null;
    seen.add(p.type);
    out.push({ field: p.type, digits: p.value.length === 4 ? 4 : p.value.length === 2 ? 2 : 1 });
  }
  return seen.size === 3 ? out : null;
}

/** ms (epoch) as a local date written with pattern p. */
export function formatDatePattern(p: DatePattern, ms: number): string {
  const d = new Date(ms);
  let out = '';
  for (const part of p) {
    if ('text' in part) {
      out += part.text;
      continue;
    }
    const v = part.field === 'day' ? d.getDate() : part.field === 'month' ? d.getMonth() + 1 : d.getFullYear();
    out += part.digits === 4 ? String(v) : part.digits === 2 ? String(v % 100).padStart(2, '0') : String(v);
  }
  return out;
}

// The kept pattern, read once (undefined: not read yet).
let kept: DatePattern | null | undefined;
function keptDatePattern(): DatePattern | null {
  if (kept !== undefined) return kept;
  kept = null;
  const st = storage();
  if (!st) return kept;
  try {
    const v = JSON.parse(st.getItem(PATTERN_KEY) ?? 'null') as { locale?: unknown; pattern?: unknown } | null;
    if (!v || v.locale !== localeKey() || !validPattern(v.pattern)) return kept;
    kept = v.pattern;
  } catch {
    return kept;
  }
  // ICU's own pattern, once the window is up: a locale whose format changed (an ICU
  // update) writes its next dates as ICU does, and the next start keeps that.
  setTimeout(() => {
    dateFormat ??= new Intl.DateTimeFormat();
    keepDatePattern(dateFormat);
  }, 3000);
  return kept;
}

function validPattern(p: unknown): p is DatePattern {
  if (!Array.isArray(p) || p.length > 9) return false;
  const fields = new Set<string>();
  for (const part of p as Record<string, unknown>[]) {
    if (typeof part?.text === 'string' && part.text.length <= 8) continue;
    if (!['day', 'month', 'year'].includes(part?.field as string) || ![1, 2, 4].includes(part?.digits as number)) return false;
    fields.add(part.field as string);
  }
  return fields.size === 3;
}

let keptFor: Intl.DateTimeFormat | null = null;
function keepDatePattern(fmt: Intl.DateTimeFormat): void {
  if (keptFor === fmt) return;
  keptFor = fmt;
  const st = storage();
  if (!st) return;
  try {
    const pattern = datePatternOf(fmt);
    const v = JSON.stringify({ locale: localeKey(), pattern });
    if (pattern && st.getItem(PATTERN_KEY) !== v) st.setItem(PATTERN_KEY, v);
    if (!pattern) st.removeItem(PATTERN_KEY);
  } catch {
    // storage full or refused: ICU writes the dates
  }
}

/** "just now", "5 min ago", "3 h ago", "yesterday", or a date. `now` is epoch ms. */
export function relativeTime(ms: number, now = Date.now()): string {
  if (!ms) return '';
  const d = Math.max(0, now - ms) / 1000;
  if (d < 60) return 'just now';
  if (d < 3600) return `${Math.floor(d / 60)} min ago`;
  if (d < 86400) return `${Math.floor(d / 3600)} h ago`;
  if (d < 2 * 86400) return 'yesterday';
  return localDate(ms);
}

/**
 * When `relativeTime(ms, t)` next reads differently from `relativeTime(ms, now)`: epoch
 * ms, or null when it never will (no time, or old enough to show as a date). A clock
 * that sleeps until then repaints nothing while no label would change.
 */
export function relativeTimeChangesAt(ms: number, now = Date.now()): number | null {
  if (!ms) return null;
  const d = Math.max(0, now - ms);
  if (d < 60_000) return ms + 60_000;
  if (d < 3_600_000) return ms + (Math.floor(d / 60_000) + 1) * 60_000;
  if (d < 86_400_000) return ms + (Math.floor(d / 3_600_000) + 1) * 3_600_000;
  if (d < 2 * 86_400_000) return ms + 2 * 86_400_000;
  return null;
}

/** Seconds left as m:ss or h:mm:ss ("4:05", "1:00:00"); never negative. */
export function formatCountdown(seconds: number): string {
  const s = Math.max(0, Math.ceil(Number.isFinite(seconds) ? seconds : 0));
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

/** A tool's run time: "0.2s", "12s", "1m 5s"; "" when unknown. */
export function formatToolDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return '';
  if (seconds < 0.05) return '<0.1s';
  return formatDuration(seconds);
}

/** An allowlist date (epoch ms, or seconds when small) as a local date. */
export function formatDate(t: number): string {
  if (!t || !Number.isFinite(t)) return '';
  const ms = t < 1e11 ? t * 1000 : t;
  return localDate(ms);
}

/** Seconds of uptime as "45 s", "12 min", "3 h 5 min", "2 d 4 h"; "" when unknown. */
export function formatUptime(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds <= 0) return '';
  const s = Math.floor(seconds);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** The figures of a turn's footer, joined: tokens in/out/cache, cost, tps, duration. */
export function turnFigures(
  usage: Usage | null | undefined,
  tps: number | null | undefined,
  durationS: number | null | undefined,
  estimated = false,
): string {
  return [formatUsage(usage, estimated), formatTps(tps), formatDuration(durationS)].filter(Boolean).join(' · ');
}
