// Performance marks the window benchmark reads (app/drivers/bench.go): `markPainted(name)` sets
// the mark once the change just made has been painted (a task queued from
// requestAnimationFrame runs after the rendering update).

const marked = new Set<string>();

/** Marks `name` (once per page) after the next paint. */
export function markPainted(name: string): void {
  if (marked.has(name) || typeof requestAnimationFrame !== 'function' || typeof performance?.mark !== 'function') return;
  marked.add(name);
  requestAnimationFrame(() => setTimeout(() => performance.mark(name), 0));
}

/**
 * Resolves after the next paint, or after `atMostMs` (a hidden window, as one started in
 * the tray, does not paint; at once where nothing paints, as in tests without frames).
 */
export function afterNextPaint(atMostMs = 100): Promise<void> {
  if (typeof requestAnimationFrame !== 'function') return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, atMostMs);
    requestAnimationFrame(() =>
      setTimeout(() => {
        clearTimeout(timer);
        resolve();
      }, 0),
    );
  });
}

/** Marks `name` (once per page) at `startTime` (ms since the page's time origin), a moment already past. */
export function markAt(name: string, startTime: number): void {
  if (marked.has(name) || typeof performance?.mark !== 'function') return;
  marked.add(name);
  try {
    performance.mark(name, { startTime });
  } catch {
    performance.mark(name);
  }
}
