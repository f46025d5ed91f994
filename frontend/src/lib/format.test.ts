import { describe, expect, it } from 'vitest';
import { formatCountdown, formatDate, formatToolDuration, formatUptime, turnFigures } from './format';
import { compactNumber, datePatternOf, formatCost, formatDatePattern, formatDuration, formatTps, formatUsage, relativeTime, relativeTimeChangesAt, runStatusText, sidecarText } from './format';
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

  it('gives relative times', () => {
    const now = 10 * 86_400_000;
    expect(relativeTime(now - 5_000, now)).toBe('just now');
    expect(relativeTime(now - 5 * 60_000, now)).toBe('5 min ago');
    expect(relativeTime(now - 3 * 3_600_000, now)).toBe('3 h ago');
    expect(relativeTime(now - 30 * 3_600_000, now)).toBe('yesterday');
  });

  it('says when a relative time next reads differently, and that a date never does', () => {
    const now = 10 * 86_400_000;
    // The instant it names is the first at which the label changes, for every kind of label.
    for (const age of [0, 5_000, 59_999, 60_000, 5 * 60_000 + 1, 3_599_999, 3 * 3_600_000 + 7, 30 * 3_600_000, 2 * 86_400_000 - 1]) {
      const ms = now - age;
      const at = relativeTimeChangesAt(ms, now)!;
      expect(at, `age ${age}`).toBeGreaterThan(now);
      expect(relativeTime(ms, at - 1), `age ${age}`).toBe(relativeTime(ms, now));
      expect(relativeTime(ms, at), `age ${age}`).not.toBe(relativeTime(ms, now));
    }
    expect(relativeTimeChangesAt(now - 3 * 86_400_000, now)).toBeNull();
    expect(relativeTimeChangesAt(0, now)).toBeNull();
    // A time ahead of the clock (another machine's) reads "just now" until a minute after it.
    expect(relativeTimeChangesAt(now + 5_000, now)).toBe(now + 65_000);
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
