// @vitest-environment jsdom
// A live answer's keyed notices: shown until their expires_at, one per key.
import { render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { tick } from 'svelte';
import KeyedNotices from './KeyedNotices.svelte';

afterEach(() => vi.useRealTimers());

describe('KeyedNotices', () => {
  it('hides a notice once it expires and keeps one without expiry', async () => {
    vi.useFakeTimers();
    let t = 1_000_000;
    render(KeyedNotices, {
      notices: [
        { key: 'quota', text: 'Quota at 90 %', level: 'warning', expiresAt: t + 5000 },
        { key: 'model', text: 'Using hermes-4', level: 'info', expiresAt: 0 },
        { key: 'old', text: 'Already over', level: 'info', expiresAt: t - 1 },
      ],
      now: () => t,
    });
    expect(screen.getByText('Quota at 90 %').getAttribute('data-notice')).toBe('quota');
    expect(screen.getByText('Using hermes-4')).toBeTruthy();
    expect(screen.queryByText('Already over')).toBeNull();
    t += 5100;
    vi.advanceTimersByTime(5100);
    await tick();
    expect(screen.queryByText('Quota at 90 %')).toBeNull();
    expect(screen.getByText('Using hermes-4')).toBeTruthy();
  });

  it('an error notice is an alert', () => {
    render(KeyedNotices, { notices: [{ key: 'e', text: 'Gateway lost', level: 'error', expiresAt: 0 }] });
    expect(screen.getByRole('alert').textContent).toBe('Gateway lost');
  });
});
