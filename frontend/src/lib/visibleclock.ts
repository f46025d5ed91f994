// A clock for what the window shows changing with time (relative times, countdowns,
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
