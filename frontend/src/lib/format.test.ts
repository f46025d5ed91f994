import { describe, expect, it } from 'vitest';
import { formatCountdown, formatDate, formatToolDuration, formatUptime, turnFigures } from './format';
import { compactNumber, datePatternOf, formatCost, formatDatePattern, formatTimePattern, timePatternOf, chatTime, chatTimeChangesAt, localTime, formatDuration, formatTps, formatUsage, runStatusText, sidecarText } from './format';
import type { SidecarStatus } from './protocol';

describe('format', () => {
  it('compacts numbers', () => {
    expect(compactNumber(950)).toBe('950');
    expect(compactNumber(12_345)).toBe('12.3k');
    expect(compactNumber(2_000)).toBe('2k');
    expect(compactNumber(2_500_000)).toBe('2.5M');
  });

  it('formats usage, cost, tps and durations', () => {
    expect(formatUsage({ input_tokens: 1200, output_tokens: 340, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 })).toBe('1.2k in · 340 out');
    expect(formatUsage({ input_tokens: 10, output_tokens: 5, cache_read_tokens: 2000, cache_write_tokens: 0, estimated_cost: 0.5 })).toBe('10 in · 5 out · 2k cached · $0.50');
    expect(formatUsage(null)).toBe('');
    expect(formatCost(0.0012)).toBe('$0.0012');
    expect(formatTps(31.49)).toBe('31 tok/s');
    expect(formatTps(4.25)).toBe('4.3 tok/s');
    expect(formatTps(0)).toBe('');
    expect(formatDuration(4.2)).toBe('4.2s');
    expect(formatDuration(75)).toBe('1m 15s');
    expect(formatDuration(null)).toBe('');
  });

  it('describes run status', () => {
    expect(runStatusText(null)).toBe('');
    expect(runStatusText({ status: 'working' })).toBe('Working…');
    expect(runStatusText({ status: 'working', detail: 'Waiting for Hermes to finish the previous turn of this chat…' })).toBe(
      'Waiting for Hermes to finish the previous turn of this chat…',
    );
    expect(runStatusText({ status: 'compressing' })).toBe('Compressing context…');
    expect(runStatusText({ status: 'prompt_reading', progress_percent: 41.6 })).toBe('Reading prompt 42%');
    expect(runStatusText({ status: 'rate_limit_wait', until: 1_012_000 }, 1_000_000)).toBe("Waiting for the provider's rate limit, 12 s");
    expect(runStatusText({ status: 'rate_limit_wait', until: 1_012_000, provider: 'openrouter' }, 1_000_000)).toBe("Waiting for openrouter's rate limit, 12 s");
    expect(runStatusText({ status: 'rate_limit_wait', until: 900_000 }, 1_000_000)).toBe("Waiting for the provider's rate limit, 0 s");
    expect(runStatusText({ status: 'rate_limit_wait' })).toBe("Waiting for the provider's rate limit…");
    expect(runStatusText({ status: 'prompt_reading' })).toBe('Reading prompt…');
  });

  it('describes the sidecar', () => {
    const base: SidecarStatus = { state: 'ready', runtime: 'builtin', agent_version: '1.2', sidecar_version: '1', attempt: 0, next_retry_s: 0, error: '', hint: '', python: '', protocol: 1, pid: 0, restarts: 0, started_at: 0, runtime_id: 'builtin', sandbox: null, capabilities: [] };
    expect(sidecarText(base)).toBe('Agent ready (builtin 1.2)');
    expect(sidecarText({ ...base, connection: 'reconnecting' })).toBe('Connection lost, reconnecting (builtin 1.2); the agent goes on there');
    expect(sidecarText({ ...base, state: 'restarting', attempt: 2, next_retry_s: 1.5 })).toBe('Agent restarting, attempt 2, next try in 2 s');
    expect(sidecarText({ ...base, state: 'restarting', attempt: 3, next_retry_s: 8 }, 5)).toBe('Agent restarting, attempt 3, next try in 3 s');
    expect(sidecarText({ ...base, state: 'restarting', attempt: 3, next_retry_s: 8 }, 9)).toBe('Agent restarting, attempt 3…');
    expect(sidecarText({ ...base, state: 'starting', runtime: '' })).toBe('Agent starting');
    expect(sidecarText({ ...base, state: 'down', error: 'python not found' })).toBe('Agent down: python not found');
    expect(sidecarText({ ...base, state: 'down' })).toBe('Agent down');
    expect(sidecarText(null)).toBe('Agent: unknown');
  });

  it("gives a chat's time: the time of day today, yesterday, else the date", () => {
    const now = new Date(2026, 2, 10, 15, 30).getTime();
    const morning = new Date(2026, 2, 10, 9, 5).getTime();
    expect(chatTime(morning, now)).toBe(localTime(morning));
    expect(chatTime(morning, now)).toBe(new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }).format(morning));
    expect(chatTime(new Date(2026, 2, 10, 0, 0).getTime(), now)).toBe(localTime(new Date(2026, 2, 10, 0, 0).getTime()));
    expect(chatTime(new Date(2026, 2, 9, 23, 59).getTime(), now)).toBe('yesterday');
    expect(chatTime(new Date(2026, 2, 9, 0, 0).getTime(), now)).toBe('yesterday');
    const older = new Date(2026, 2, 8, 23, 59).getTime();
    expect(chatTime(older, now)).toBe(new Intl.DateTimeFormat().format(older));
    expect(chatTime(0, now)).toBe('');
  });

  it("says when a chat's time next reads differently (a midnight), and that an old one never does", () => {
    const now = new Date(2026, 2, 10, 15, 30).getTime();
    const midnight = new Date(2026, 2, 11).getTime();
    // The instant it names is the first at which the label changes, for every kind of label.
    const cases = [new Date(2026, 2, 10, 0, 0), new Date(2026, 2, 10, 15, 29), new Date(2026, 2, 10, 23, 59, 59), new Date(2026, 2, 9, 0, 0), new Date(2026, 2, 9, 18, 0), new Date(2026, 2, 12, 8, 0)];
    for (const d of cases) {
      const ms = d.getTime();
      const at = chatTimeChangesAt(ms, now)!;
      expect(at, d.toString()).toBeGreaterThan(now);
      expect(chatTime(ms, at - 1), d.toString()).toBe(chatTime(ms, now));
      expect(chatTime(ms, at), d.toString()).not.toBe(chatTime(ms, now));
    }
    expect(chatTimeChangesAt(new Date(2026, 2, 10, 9, 0).getTime(), now)).toBe(midnight);
    expect(chatTimeChangesAt(new Date(2026, 2, 8, 23, 59).getTime(), now)).toBeNull();
    expect(chatTimeChangesAt(0, now)).toBeNull();
    // No time a Date can hold (a damaged row): no label, and a clock with nothing to wait for.
    for (const bad of [9e15, -9e15, NaN, Infinity]) {
      expect(chatTime(bad, now)).toBe('');
      expect(chatTimeChangesAt(bad, now)).toBeNull();
    }
    // A time ahead of the clock (another machine's), a later day: a date until that day.
    expect(chatTimeChangesAt(new Date(2026, 2, 12, 8, 0).getTime(), now)).toBe(new Date(2026, 2, 12).getTime());
  });
});

describe('turn footer and uptime', () => {
  it('joins the figures, marking an estimated output count', () => {
    const u = { input_tokens: 2400, output_tokens: 180, cache_read_tokens: 1000, cache_write_tokens: 0, estimated_cost: 0.0123 };
    expect(turnFigures(u, 31.5, 12.5)).toBe('2.4k in · 180 out · 1k cached · $0.01 · 32 tok/s · 13s');
    expect(turnFigures(u, null, null, true)).toBe('2.4k in · ~180 out · 1k cached · $0.01');
    expect(turnFigures(null, 0, 0)).toBe('');
  });

  it('formats uptime', () => {
    expect(formatUptime(0)).toBe('');
    expect(formatUptime(45)).toBe('45 s');
    expect(formatUptime(720)).toBe('12 min');
    expect(formatUptime(3 * 3600 + 300)).toBe('3 h 5 min');
    expect(formatUptime(2 * 86400 + 4 * 3600)).toBe('2 d 4 h');
  });
});

describe('formatUsage with nothing used', () => {
  it('is empty', () => {
    expect(formatUsage({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 })).toBe('');
  });
});

describe('card helpers', () => {
  it('formats countdowns', () => {
    expect(formatCountdown(300)).toBe('5:00');
    expect(formatCountdown(4.2)).toBe('0:05');
    expect(formatCountdown(3600)).toBe('1:00:00');
    expect(formatCountdown(3725)).toBe('1:02:05');
    expect(formatCountdown(-3)).toBe('0:00');
  });

  it('formats tool durations and allowlist dates', () => {
    expect(formatToolDuration(0.21)).toBe('0.2s');
    expect(formatToolDuration(0.01)).toBe('<0.1s');
    expect(formatToolDuration(65)).toBe('1m 5s');
    expect(formatToolDuration(null)).toBe('');
    expect(formatDate(0)).toBe('');
    expect(formatDate(1_700_000_000)).toBe(formatDate(1_700_000_000_000));
  });
});

describe('dates written from a kept pattern', () => {
  // The pattern must write exactly what ICU writes, for every date, in each locale it
  // accepts; locales with other numerals or calendars get no pattern (ICU writes them).
  const locales = ['en-US', 'en-GB', 'de-DE', 'fr-FR', 'ja-JP', 'zh-CN', 'ko-KR', 'nl-NL', 'pl-PL', 'ru-RU', 'sv-SE', 'en-CA', 'hu-HU', 'es-ES', 'pt-BR', 'it-IT', 'tr-TR', 'fi-FI', 'en-IN', 'cs-CZ'];
  it.each(locales)('writes %s dates as ICU does', (locale) => {
    const fmt = new Intl.DateTimeFormat(locale);
    const p = datePatternOf(fmt);
    expect(p).not.toBeNull();
    for (let ms = Date.UTC(1999, 0, 1); ms < Date.UTC(2031, 0, 1); ms += 37 * 86_400_000 + 3_600_000) {
      expect(formatDatePattern(p!, ms)).toBe(fmt.format(ms));
    }
  });

  it.each(['ar-EG', 'fa-IR', 'th-TH-u-ca-buddhist', 'ja-JP-u-ca-japanese', 'hi-IN-u-nu-deva'])('leaves %s to ICU', (locale) => {
    expect(datePatternOf(new Intl.DateTimeFormat(locale))).toBeNull();
  });
});

describe('times written from a kept pattern', () => {
  // As dates: the pattern writes exactly what ICU writes, at every minute of a day, in
  // each locale it accepts; locales with other numerals or day periods get none.
  const locales = ['en-US', 'en-GB', 'de-DE', 'fr-FR', 'ja-JP', 'zh-CN', 'ko-KR', 'nl-NL', 'pl-PL', 'ru-RU', 'sv-SE', 'en-CA', 'hu-HU', 'es-ES', 'pt-BR', 'it-IT', 'tr-TR', 'fi-FI', 'en-IN', 'cs-CZ', 'en-AU', 'es-MX'];
  it.each(locales)('writes %s times as ICU does', (locale) => {
    const fmt = new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit' });
    const p = timePatternOf(fmt);
    expect(p).not.toBeNull();
    for (let ms = new Date(2026, 2, 10).getTime(); ms < new Date(2026, 2, 11).getTime(); ms += 7 * 60_000) {
      expect(formatTimePattern(p!, ms)).toBe(fmt.format(ms));
    }
  });

  it.each(['ar-EG', 'fa-IR', 'hi-IN-u-nu-deva'])('leaves %s to ICU', (locale) => {
    expect(timePatternOf(new Intl.DateTimeFormat(locale, { hour: 'numeric', minute: '2-digit' }))).toBeNull();
  });
});
