import { vi } from 'vitest';
import { waitOpts } from './wait';

const realSetTimeout = globalThis.setTimeout.bind(globalThis);

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

/**
 * Resolves once every chain of microtasks started so far has run to its end, or to a wait
 * on something else (an answer not given yet, a timer): the microtask queue is emptied
 * before the next macrotask. Not a wait for time, and no wait for an answer: use it
 * after `answered`, to check that what the answer led to did NOT happen.
 */
export function drained(): Promise<void> {
  return new Promise((r) => realSetTimeout(r, 0));
}
