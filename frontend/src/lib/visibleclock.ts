// A clock for what the window shows changing with time (the chats' times, countdowns,
// activity indicators): it ticks only while the page is visible. A hidden or minimised
// window repaints nothing, so nothing need wake it; on showing again it ticks at once,
// so what is shown is current before the first interval passes (issue 24, item 6).

/**
 * Calls `tick` every `ms` milliseconds while `doc` is visible, and once at once each
 * time it becomes visible again. Returns the stop, which removes its listener and timer
 * (calling it again does nothing).
 */
export function everyWhileVisible(tick: () => void, ms: number, doc: Document = document): () => void {
  let timer: ReturnType<typeof setInterval> | null = null;
  const start = () => {
    if (timer === null) timer = setInterval(tick, ms);
  };
  const halt = () => {
    if (timer !== null) clearInterval(timer);
    timer = null;
  };
  const onVisibility = () => {
    if (doc.visibilityState === 'hidden') {
      halt();
      return;
    }
    if (timer === null) {
      tick();
      start();
    }
  };
  doc.addEventListener('visibilitychange', onVisibility);
  if (doc.visibilityState !== 'hidden') start();
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    halt();
    doc.removeEventListener('visibilitychange', onVisibility);
  };
}

/**
 * The longest wait (ms): a timer does not count a machine's suspend, nor a clock set
 * forward, so a far `at` is waited for in steps of 5 min (the caller's labels are then
 * at most that late after a resume), and the window's focus ticks at once.
 */
export const MAX_WAIT_MS = 5 * 60_000;
/** The shortest wait (ms): a clock whose `at` does not move after its tick cannot spin. */
const MIN_WAIT_MS = 1000;

/**
 * Calls `tick` once at epoch ms `at` (null: never) while `doc` is visible, and at once
 * each time it becomes visible again; the caller then computes its next `at` and starts
 * another (a Svelte effect over a derived `at` does both). Unlike everyWhileVisible it
 * sleeps for as long as nothing shown would change: a list of chats whose times read
 * "14:32" or "yesterday" wakes the page at midnight (in steps of MAX_WAIT_MS, which
 * change nothing shown), one of dates never. The window gaining focus ticks at once (after a suspend
 * or a clock change, what the user looks at is current). Returns the stop, which
 * removes its listeners and timer (calling it again does nothing).
 */
export function atWhileVisible(at: number | null, tick: () => void, doc: Document = document): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let stopped = false;
  const arm = () => {
    if (stopped || at === null || !Number.isFinite(at) || timer !== null || doc.visibilityState === 'hidden') return;
    const wait = Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, at - Date.now()));
    timer = setTimeout(() => {
      timer = null;
      tick();
      arm(); // an `at` the tick did not move (a clock set back) is waited for again
    }, wait);
  };
  const halt = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };
  let hidden = doc.visibilityState === 'hidden';
  const onVisibility = () => {
    if (doc.visibilityState === 'hidden') {
      hidden = true;
      halt();
      return;
    }
    if (!hidden) return;
    hidden = false;
    tick();
    arm();
  };
  const onFocus = () => {
    if (stopped || doc.visibilityState === 'hidden') return;
    halt();
    tick();
    arm();
  };
  const win = doc.defaultView;
  doc.addEventListener('visibilitychange', onVisibility);
  win?.addEventListener('focus', onFocus);
  arm();
  return () => {
    if (stopped) return;
    stopped = true;
    halt();
    doc.removeEventListener('visibilitychange', onVisibility);
    win?.removeEventListener('focus', onFocus);
  };
}
