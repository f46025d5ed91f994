// Performance marks the window benchmark reads (app/bench.go): `markPainted(name)` sets
// the mark once the change just made has been painted (a task queued from
// requestAnimationFrame runs after the rendering update).

const marked = new Set<string>();

/** Marks `name` (once per page) after the next paint. */
export function markPainted(name: string): void {
  if (marked.has(name) || typeof requestAnimationFrame !== 'function' || typeof performance?.mark !== 'function') return;
  marked.add(name);
  requestAnimationFrame(() => setTimeout(() => performance.mark(name), 0));
}
