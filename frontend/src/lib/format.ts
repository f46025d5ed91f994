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

/**
 * A numeric date's pattern as the locale's default formatter writes it: the fields in
 * order with their padding, and the text between them (en-US: M/D/YYYY, de: D.M.YYYY).
 */
export type DatePattern = ({ field: 'day' | 'month' | 'year'; digits: 1 | 2 | 4 } | { text: string })[];

/**
 * A time of day's pattern as the locale's formatter of hours and minutes writes it: the
 * fields in order, the text between them, the clock (12 or 24 hours) with the hour's
 * padding, and a 12-hour clock's two day periods (en-US: h:mm AM, de: HH:mm).
 */
export type TimePattern = (
  | { field: 'hour'; cycle: 12 | 24; digits: 1 | 2 }
  | { field: 'minute' }
  | { field: 'dayPeriod'; am: string; pm: string }
  | { text: string }
)[];

// The first Intl formatter of a page costs 10–30 ms in WebKitGTK (ICU sets up its
// data), and a sidebar showing an old chat needed one inside the window's first frame
// (issue 16). Each locale's pattern is kept between runs (localStorage, under the
// locale's name); a start with a kept pattern writes dates and times without ICU, and
// checks the pattern against ICU once the window is up (a changed one is kept for the
// next start). One formatter is made for each kind, when needed: `toLocaleDateString()`
// builds a new one on each call (about 2 ms in WebKitGTK).

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

/** One kind of local text (dates, times): its formatter, and its pattern kept between runs. */
class LocalePattern<P> {
  private format: Intl.DateTimeFormat | null = null;
  /** The kept pattern, read once (undefined: not read yet). */
  private kept: P | null | undefined;
  private keptFor: Intl.DateTimeFormat | null = null;

  constructor(
    /** The localStorage key. */
    private readonly key: string,
    private readonly options: Intl.DateTimeFormatOptions | undefined,
    private readonly patternOf: (fmt: Intl.DateTimeFormat) => P | null,
    private readonly valid: (p: unknown) => p is P,
    private readonly write: (p: P, ms: number) => string,
  ) {}

  /** ms (epoch) as the locale writes it: with the kept pattern until a formatter exists. */
  text(ms: number): string {
    if (!this.format) {
      const kept = this.keptPattern();
      if (kept) return this.write(kept, ms);
    }
    this.format ??= new Intl.DateTimeFormat(undefined, this.options);
    this.keep(this.format);
    return this.format.format(ms);
  }

  private keptPattern(): P | null {
    if (this.kept !== undefined) return this.kept;
    this.kept = null;
    const st = storage();
    if (!st) return this.kept;
    try {
      const v = JSON.parse(st.getItem(this.key) ?? 'null') as { locale?: unknown; pattern?: unknown } | null;
      if (!v || v.locale !== localeKey() || !this.valid(v.pattern)) return this.kept;
      this.kept = v.pattern;
    } catch {
      return this.kept;
    }
    // ICU's own pattern, once the window is up: a locale whose format changed (an ICU
    // update) writes its next texts as ICU does, and the next start keeps that.
    setTimeout(() => {
      this.format ??= new Intl.DateTimeFormat(undefined, this.options);
      this.keep(this.format);
    }, 3000);
    return this.kept;
  }

  private keep(fmt: Intl.DateTimeFormat): void {
    if (this.keptFor === fmt) return;
    this.keptFor = fmt;
    const st = storage();
    if (!st) return;
    try {
      const pattern = this.patternOf(fmt);
      const v = JSON.stringify({ locale: localeKey(), pattern });
      if (pattern && st.getItem(this.key) !== v) st.setItem(this.key, v);
      if (!pattern) st.removeItem(this.key);
    } catch {
      // storage full or refused: ICU writes the texts
    }
  }
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

/**
 * A kept pattern's part: 'text' (a text of at most 8 characters), 'field' (checked by the
 * caller), or null (not an object, or a `text` that is not such a text: a field part
 * carrying one would be written as that text).
 */
function partKind(part: unknown): 'text' | 'field' | null {
  if (typeof part !== 'object' || part === null) return null;
  if (!('text' in part)) return 'field';
  const text = (part as { text: unknown }).text;
  return typeof text === 'string' && text.length <= 8 ? 'text' : null;
}

function validPattern(p: unknown): p is DatePattern {
  if (!Array.isArray(p) || p.length > 9) return false;
  const fields = new Set<string>();
  for (const part of p as Record<string, unknown>[]) {
    const kind = partKind(part);
    if (kind === 'text') continue;
    if (kind === null) return false;
    if (!['day', 'month', 'year'].includes(part?.field as string) || ![1, 2, 4].includes(part?.digits as number)) return false;
    fields.add(part.field as string);
  }
  return fields.size === 3;
}

/** The options of the times shown: hours and minutes, in the locale's clock. */
const TIME_OPTIONS: Intl.DateTimeFormatOptions = { hour: 'numeric', minute: '2-digit' };

/**
 * The pattern of fmt's times, from the parts it writes for 14:05, 9:05 and 0:05, or null
 * when they are not plain Latin digits in an hour (0-23, or 1-12 with two day periods
 * that are the same all morning and all afternoon) and a padded minute (then only ICU
 * writes them: other numerals, clocks, or day periods such as "in the night").
 */
export function timePatternOf(fmt: Intl.DateTimeFormat): TimePattern | null {
  if (fmt.resolvedOptions().numberingSystem !== 'latn') return null;
  const at = (h: number) => fmt.formatToParts(new Date(2001, 1, 3, h, 5));
  const pm = at(14);
  const am = at(9);
  const midnight = at(0);
  if (pm.length > 9 || am.length !== pm.length || midnight.length !== pm.length) return null;
  const hour = (parts: Intl.DateTimeFormatPart[]) => parts.find((p) => p.type === 'hour')?.value;
  const cycle = hour(pm) === '14' && ['0', '00'].includes(hour(midnight) ?? '') ? 24 : ['2', '02'].includes(hour(pm) ?? '') && hour(midnight) === '12' ? 12 : null;
  const digits = hour(am) === '09' ? 2 : hour(am) === '9' ? 1 : null;
  if (cycle === null || digits === null) return null;
  const out: TimePattern = [];
  const seen = new Set<string>();
  for (let i = 0; i < pm.length; i++) {
    const p = pm[i];
    if (am[i].type !== p.type || midnight[i].type !== p.type || seen.has(p.type)) return null;
    if (p.type === 'literal') {
      if (p.value.length > 8 || am[i].value !== p.value || midnight[i].value !== p.value) return null;
      out.push({ text: p.value });
      continue;
    }
    seen.add(p.type);
    if (p.type === 'hour') out.push({ field: 'hour', cycle, digits });
    else if (p.type === 'minute' && p.value === '05') out.push({ field: 'minute' });
    else if (p.type === 'dayPeriod' && cycle === 12 && midnight[i].value === am[i].value && am[i].value !== p.value && Math.max(am[i].value.length, p.value.length) <= 12) {
      out.push({ field: 'dayPeriod', am: am[i].value, pm: p.value });
    } else return null;
  }
  if (!seen.has('hour') || !seen.has('minute') || seen.has('dayPeriod') !== (cycle === 12)) return null;
  // Some engines write a narrow no-break space before the day period in the parts and a
  // plain one in format() (web compatibility): the pattern writes what format() does.
  const samples = [14, 9, 0].map((h) => new Date(2001, 1, 3, h, 5).getTime());
  const writes = (p: TimePattern) => samples.every((ms) => formatTimePattern(p, ms) === fmt.format(ms));
  if (writes(out)) return out;
  const plain = out.map((part) => ('text' in part ? { text: part.text.replace(/\u202f/g, ' ') } : part));
  return writes(plain) ? plain : null;
}

/** ms (epoch) as a local time of day written with pattern p. */
export function formatTimePattern(p: TimePattern, ms: number): string {
  const d = new Date(ms);
  const h = d.getHours();
  let out = '';
  for (const part of p) {
    if ('text' in part) out += part.text;
    else if (part.field === 'minute') out += String(d.getMinutes()).padStart(2, '0');
    else if (part.field === 'dayPeriod') out += h < 12 ? part.am : part.pm;
    else {
      const v = part.cycle === 12 ? h % 12 || 12 : h;
      out += part.digits === 2 ? String(v).padStart(2, '0') : String(v);
    }
  }
  return out;
}

function validTimePattern(p: unknown): p is TimePattern {
  if (!Array.isArray(p) || p.length > 9) return false;
  const fields = new Set<string>();
  let cycle = 0;
  for (const part of p as Record<string, unknown>[]) {
    const kind = partKind(part);
    if (kind === 'text') continue;
    if (kind === null) return false;
    const f = part.field;
    if (f === 'hour') {
      if (![12, 24].includes(part.cycle as number) || ![1, 2].includes(part.digits as number)) return false;
      cycle = part.cycle as number;
    } else if (f === 'dayPeriod') {
      if (typeof part.am !== 'string' || typeof part.pm !== 'string' || part.am.length > 12 || part.pm.length > 12) return false;
    } else if (f !== 'minute') return false;
    if (fields.has(f)) return false;
    fields.add(f);
  }
  return fields.has('hour') && fields.has('minute') && fields.has('dayPeriod') === (cycle === 12);
}

const dates = new LocalePattern<DatePattern>('talaria.datePattern', undefined, datePatternOf, validPattern, formatDatePattern);
const times = new LocalePattern<TimePattern>('talaria.timePattern', TIME_OPTIONS, timePatternOf, validTimePattern, formatTimePattern);

/** ms (epoch) as a local date ("3/7/2025", "7.3.2025"). */
function localDate(ms: number): string {
  return dates.text(ms);
}

/** ms (epoch) as a local time of day ("2:32 PM", "14:32"). */
export function localTime(ms: number): string {
  return times.text(ms);
}

/** Whether ms (epoch) is a time a Date can hold, other than 0 (no time). */
function isTime(ms: number): boolean {
  return ms !== 0 && Math.abs(ms) <= 8.64e15; // false for NaN too
}

/** The local midnight that starts the day of ms (epoch ms); daylight saving is the local clock's. */
function dayStart(ms: number): number {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate()).getTime();
}

/** The local midnight after the day of ms (epoch ms). */
function nextDayStart(ms: number): number {
  const d = new Date(ms);
  return new Date(d.getFullYear(), d.getMonth(), d.getDate() + 1).getTime();
}

/**
 * When a chat last changed, as a list shows it: the time of day for today ("2:32 PM",
 * "14:32"), "yesterday", else the date. `ms` and `now` are epoch ms; '' for no time.
 * Unlike "5 min ago" it reads the same all day: a list of chats changes at midnight,
 * and an idle window is not woken every minute to rewrite a label (issue 24, item 6).
 */
export function chatTime(ms: number, now = Date.now()): string {
  if (!isTime(ms)) return '';
  const today = dayStart(now);
  if (ms >= today && ms < nextDayStart(now)) return localTime(ms);
  if (ms >= dayStart(today - 1) && ms < today) return 'yesterday';
  return localDate(ms);
}

/**
 * When `chatTime(ms, t)` next reads differently from `chatTime(ms, now)`: a local
 * midnight (epoch ms), or null when it never will (no time, or before yesterday). A
 * time ahead of the clock (another machine's) reads as a date until its day comes.
 */
export function chatTimeChangesAt(ms: number, now = Date.now()): number | null {
  if (!isTime(ms)) return null;
  const tomorrow = nextDayStart(now);
  if (ms >= tomorrow) return dayStart(ms);
  if (ms >= dayStart(dayStart(now) - 1)) return tomorrow;
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
