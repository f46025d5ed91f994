import { vi } from 'vitest';
import { waitOpts } from './wait';

/**
 * Waits until `check` passes (returns without throwing, e.g. a block of expects), up to
 * the suite's one deadline; returns what it returned. For tests without a DOM (the
 * store's): Testing Library's waitFor needs a document. With faked timers, vi.waitFor
 * moves the fake clock by its interval at each check.
 */
export function until<T>(check: () => T | Promise<T>): Promise<T> {
  return vi.waitFor(check, waitOpts);
}

/**
 * Waits until every answer a fake's call has given so far has settled (and so the code
 * that awaited it, which registered first, has run on). The calls are the event: wait
 * for the call with `until` first.
 */
export async function answered(fn: { mock: { results: { value: unknown }[] } }): Promise<void> {
  await Promise.allSettled(fn.mock.results.map((r) => r.value));
}
