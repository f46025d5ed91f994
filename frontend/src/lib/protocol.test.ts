import { describe, expect, it } from 'vitest';
import { HOST_EVENTS, isKnownEvent, SIDECAR_EVENTS } from './protocol';

// The lists themselves are generated from Go (backend/contract's tests keep them current).
describe('protocol', () => {
  it('has no duplicate names and knows its events', () => {
    const all = [...SIDECAR_EVENTS, ...HOST_EVENTS];
    expect(new Set(all).size).toBe(all.length);
    expect(isKnownEvent('token')).toBe(true);
    expect(isKnownEvent('stream_end')).toBe(true);
    expect(isKnownEvent('steer_queue')).toBe(true);
    // The sidecar's steer_pending never reaches the window: the host answers it with steer_queue.
    expect(isKnownEvent('steer_pending')).toBe(false);
    expect(isKnownEvent('nope')).toBe(false);
  });
});
