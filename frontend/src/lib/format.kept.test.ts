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
    expect(first.relativeTime(old)).toBe(want);
    const kept = JSON.parse(localStorage.getItem('talaria.datePattern') ?? 'null');
    expect(kept).toMatchObject({ locale: navigator.languages.join(',') || navigator.language });
    expect(kept.pattern).toEqual(first.datePatternOf(new Intl.DateTimeFormat()));

    const want2 = new Intl.DateTimeFormat().format(old - 86_400_000 * 40);
    vi.resetModules();
    vi.useFakeTimers();
    const made = vi.spyOn(Intl, 'DateTimeFormat');
    const next = await import('./format');
    expect(next.relativeTime(old)).toBe(want);
    expect(next.relativeTime(old - 86_400_000 * 40)).toBe(want2);
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
    expect(f.relativeTime(old)).toBe(new Intl.DateTimeFormat().format(old));
    localStorage.setItem('talaria.datePattern', JSON.stringify({ locale: navigator.languages.join(',') || navigator.language, pattern: [{ field: 'day', digits: 7 }] }));
    vi.resetModules();
    f = await import('./format');
    expect(f.relativeTime(old)).toBe(new Intl.DateTimeFormat().format(old));
  });
});
