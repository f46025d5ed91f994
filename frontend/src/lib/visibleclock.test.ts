// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { atWhileVisible, everyWhileVisible, MAX_WAIT_MS } from './visibleclock';

let state: DocumentVisibilityState = 'visible';
function setVisibility(s: DocumentVisibilityState) {
  state = s;
  document.dispatchEvent(new Event('visibilitychange'));
}

beforeEach(() => {
  vi.useFakeTimers();
  state = 'visible';
  vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => state);
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('everyWhileVisible', () => {
  it('ticks every interval while visible, not at all while hidden, and at once on showing again', () => {
    const tick = vi.fn();
    const stop = everyWhileVisible(tick, 60_000);
    vi.advanceTimersByTime(180_000);
    expect(tick).toHaveBeenCalledTimes(3);
    setVisibility('hidden');
    vi.advanceTimersByTime(3_600_000);
    expect(tick).toHaveBeenCalledTimes(3);
    expect(vi.getTimerCount()).toBe(0);
    setVisibility('visible');
    expect(tick).toHaveBeenCalledTimes(4);
    vi.advanceTimersByTime(60_000);
    expect(tick).toHaveBeenCalledTimes(5);
    // A second visibilitychange while visible does not start a second timer.
    setVisibility('visible');
    expect(vi.getTimerCount()).toBe(1);
    stop();
    stop();
    expect(vi.getTimerCount()).toBe(0);
    setVisibility('hidden');
    setVisibility('visible');
    vi.advanceTimersByTime(600_000);
    expect(tick).toHaveBeenCalledTimes(5); // nothing after stop
  });

  it('started hidden, it waits for the page to show', () => {
    state = 'hidden';
    const tick = vi.fn();
    const stop = everyWhileVisible(tick, 1000);
    vi.advanceTimersByTime(10_000);
    expect(tick).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
    setVisibility('visible');
    vi.advanceTimersByTime(1000);
    expect(tick).toHaveBeenCalledTimes(2);
    stop();
  });

  it('leaves no listener behind when stopped', () => {
    const add = vi.spyOn(document, 'addEventListener');
    const remove = vi.spyOn(document, 'removeEventListener');
    for (let i = 0; i < 50; i++) everyWhileVisible(() => {}, 1000)();
    expect(add).toHaveBeenCalledTimes(50);
    expect(remove).toHaveBeenCalledTimes(50);
    expect(remove.mock.calls.map((c) => c[1])).toEqual(add.mock.calls.map((c) => c[1]));
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('the activity indicators’ clock (useTicker)', () => {
  it('one timer for every indicator, none while hidden, none once the last is gone', async () => {
    const { useTicker, ticker, PULSE_MS } = await import('./ticker.svelte');
    const a = useTicker();
    const b = useTicker();
    expect(vi.getTimerCount()).toBe(1);
    const n = ticker.n;
    vi.advanceTimersByTime(3 * PULSE_MS);
    expect(ticker.n).toBe(n + 3);
    setVisibility('hidden');
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(3_600_000);
    expect(ticker.n).toBe(n + 3);
    setVisibility('visible');
    expect(ticker.n).toBe(n + 4);
    a();
    a();
    expect(vi.getTimerCount()).toBe(1);
    b();
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe('atWhileVisible', () => {
  it('ticks once at its time, not before; sleeps while hidden and ticks at once on showing again', () => {
    const tick = vi.fn();
    const stop = atWhileVisible(Date.now() + 90_000, tick);
    vi.advanceTimersByTime(89_999);
    expect(tick).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(tick).toHaveBeenCalledTimes(1);
    setVisibility('hidden');
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(3_600_000);
    expect(tick).toHaveBeenCalledTimes(1);
    setVisibility('visible');
    expect(tick).toHaveBeenCalledTimes(2);
    // Showing while already shown is not a change.
    setVisibility('visible');
    expect(tick).toHaveBeenCalledTimes(2);
    stop();
    stop();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('never ticks for a time that never comes, and cannot spin on a time already past', () => {
    const never = vi.fn();
    const stopNever = atWhileVisible(null, never);
    vi.advanceTimersByTime(86_400_000);
    expect(never).not.toHaveBeenCalled();
    expect(vi.getTimerCount()).toBe(0);
    stopNever();
    // A caller whose time does not move after its tick (the clock set back) is woken at
    // most once a second.
    const past = vi.fn();
    const stopPast = atWhileVisible(Date.now() - 5_000, past);
    vi.advanceTimersByTime(10_000);
    expect(past).toHaveBeenCalledTimes(10);
    stopPast();
    // Nor on a time that is not a number (NaN waited 0 ms, the minimum skipped).
    const nan = vi.fn();
    const stopNaN = atWhileVisible(NaN, nan);
    vi.advanceTimersByTime(10_000);
    expect(nan).not.toHaveBeenCalled();
    stopNaN();
  });

  it('started hidden, it waits for the page to show', () => {
    state = 'hidden';
    const tick = vi.fn();
    const stop = atWhileVisible(Date.now() + 1000, tick);
    vi.advanceTimersByTime(10_000);
    expect(tick).not.toHaveBeenCalled();
    setVisibility('visible');
    expect(tick).toHaveBeenCalledTimes(1);
    stop();
  });

  it('wakes at least every MAX_WAIT_MS, and at once when the window gains focus (a suspend, a clock set forward)', () => {
    const tick = vi.fn();
    const stop = atWhileVisible(Date.now() + 3_600_000, tick);
    vi.advanceTimersByTime(MAX_WAIT_MS);
    expect(tick).toHaveBeenCalledTimes(1);
    window.dispatchEvent(new Event('focus'));
    expect(tick).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(1); // the wait started again, not a second one
    stop();
    window.dispatchEvent(new Event('focus'));
    expect(tick).toHaveBeenCalledTimes(2);
    expect(vi.getTimerCount()).toBe(0);
  });
});
