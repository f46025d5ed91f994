// @vitest-environment jsdom
// A start with a kept date pattern writes the sidebar's dates without ICU (issue 16):
// the first start keeps the locale's pattern, the next one uses it and makes no
// formatter before the window is up.
import { afterEach, describe, expect, it, vi } from 'vitest';

const old = Date.UTC(2025, 2, 7, 12); // far more than two days ago

afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
  localStorage.clear();
});

describe('the kept date pattern', () => {
  it('is kept by the first start and used by the next, which makes no formatter', async () => {
    vi.resetModules();
    const first = await import('./format');
    const want = new Intl.DateTimeFormat().format(old);
    expect(first.chatTime(old)).toBe(want);
    const kept = JSON.parse(localStorage.getItem('talaria.datePattern') ?? 'null');
    expect(kept).toMatchObject({ locale: navigator.languages.join(',') || navigator.language });
    expect(kept.pattern).toEqual(first.datePatternOf(new Intl.DateTimeFormat()));

    const want2 = new Intl.DateTimeFormat().format(old - 86_400_000 * 40);
    vi.resetModules();
    vi.useFakeTimers();
    const made = vi.spyOn(Intl, 'DateTimeFormat');
    const next = await import('./format');
    expect(next.chatTime(old)).toBe(want);
    expect(next.chatTime(old - 86_400_000 * 40)).toBe(want2);
    expect(made).not.toHaveBeenCalled();
    // ICU's pattern is checked once the window is up.
    vi.advanceTimersByTime(3000);
    expect(made).toHaveBeenCalledTimes(1);
  });

  it('is not used for another locale, nor when it does not read as a pattern', async () => {
    const other = { locale: 'xx-YY', pattern: [{ field: 'year', digits: 4 }, { text: '~' }, { field: 'month', digits: 2 }, { text: '~' }, { field: 'day', digits: 2 }] };
    localStorage.setItem('talaria.datePattern', JSON.stringify(other));
    vi.resetModules();
    let f = await import('./format');
    expect(f.chatTime(old)).toBe(new Intl.DateTimeFormat().format(old));
    localStorage.setItem('talaria.datePattern', JSON.stringify({ locale: navigator.languages.join(',') || navigator.language, pattern: [{ field: 'day', digits: 7 }] }));
    vi.resetModules();
    f = await import('./format');
    expect(f.chatTime(old)).toBe(new Intl.DateTimeFormat().format(old));
  });

  it('keeps the time pattern too: the next start writes today\'s times without a formatter', async () => {
    const noon = new Date(2026, 2, 10, 12, 41).getTime();
    const now = new Date(2026, 2, 10, 18, 0).getTime();
    vi.resetModules();
    const first = await import('./format');
    const want = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }).format(noon);
    expect(first.chatTime(noon, now)).toBe(want);
    const kept = JSON.parse(localStorage.getItem('talaria.timePattern') ?? 'null');
    expect(kept).toMatchObject({ locale: navigator.languages.join(',') || navigator.language });

    vi.resetModules();
    vi.useFakeTimers();
    const made = vi.spyOn(Intl, 'DateTimeFormat');
    const next = await import('./format');
    expect(next.chatTime(noon, now)).toBe(want);
    expect(next.chatTime(noon + 9 * 60_000, now)).toBe(new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }).format(noon + 9 * 60_000));
    expect(made).toHaveBeenCalledTimes(1); // the line above's own
    vi.advanceTimersByTime(3000);
    expect(made).toHaveBeenCalledTimes(2);
  });

  it('rejects a kept pattern whose field parts also carry a text (it would be written as the text)', async () => {
    const loc = navigator.languages.join(',') || navigator.language;
    const noon = new Date(2026, 2, 10, 12, 41).getTime();
    const now = new Date(2026, 2, 10, 18, 0).getTime();
    const icu = (ms: number) => new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' }).format(ms);
    for (const pattern of [
      [{ field: 'hour', cycle: 24, digits: 2 }, { text: ':' }, { field: 'minute', text: ['x'.repeat(100_000)] }],
      [{ field: 'hour', cycle: 24, digits: 2, text: null }, { text: ':' }, { field: 'minute' }],
      [null, { field: 'hour', cycle: 24, digits: 2 }, { text: ':' }, { field: 'minute' }],
    ]) {
      localStorage.setItem('talaria.timePattern', JSON.stringify({ locale: loc, pattern }));
      vi.resetModules();
      const f = await import('./format');
      expect(f.chatTime(noon, now)).toBe(icu(noon));
    }
    const day = [{ field: 'day', digits: 1, text: ['y'.repeat(50_000)] }, { text: '/' }, { field: 'month', digits: 1 }, { text: '/' }, { field: 'year', digits: 4 }];
    localStorage.setItem('talaria.datePattern', JSON.stringify({ locale: loc, pattern: day }));
    vi.resetModules();
    const f = await import('./format');
    expect(f.chatTime(old, now)).toBe(new Intl.DateTimeFormat().format(old));
  });
});
