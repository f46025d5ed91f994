import { describe, expect, it } from 'vitest';
import { formatCountdown, formatDate, formatToolDuration } from './format';
import { compactNumber, formatCost, formatDuration, formatTps, formatUsage, relativeTime, runStatusText, sidecarText } from './format';
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
    expect(runStatusText({ status: 'compressing' })).toBe('Compressing context…');
    expect(runStatusText({ status: 'prompt_reading', progress_percent: 41.6 })).toBe('Reading prompt 42%');
    expect(runStatusText({ status: 'rate_limit_wait', until: 1010 }, 1_000_000)).toBe('Rate limited, retrying in 10s');
  });

  it('describes the sidecar', () => {
    const base: SidecarStatus = { state: 'ready', runtime: 'builtin', agent_version: '1.2', sidecar_version: '1', attempt: 0, next_retry_s: 0, error: '', hint: '' };
    expect(sidecarText(base)).toBe('Agent ready (builtin 1.2)');
    expect(sidecarText({ ...base, state: 'restarting', attempt: 2, next_retry_s: 1.5 })).toBe('Agent restarting in 2s (attempt 2)');
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
