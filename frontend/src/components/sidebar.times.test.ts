// @vitest-environment jsdom
// The sidebar's clock covers every row it shows: archived chats too, when shown.
import { render, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import Sidebar from './Sidebar.svelte';
import { session } from '../test/fakeApi';
import { localTime } from '../lib/format';

describe('the sidebar clock', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('turns an archived chat of today to "yesterday" after midnight', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    vi.setSystemTime(new Date(2026, 2, 10, 23, 58));
    const at = Date.now();
    const old = new Date(2026, 1, 1, 9, 0).getTime();
    render(Sidebar, {
      props: {
        sessions: [session('a', old)],
        archived: [session('b', at, { archived_at: at })],
        showArchived: true,
        activeId: null,
        onselect: () => {},
        onnew: () => {},
        onsettings: () => {},
      },
    });
    const meta = () => document.getElementById('meta-b')!.textContent!.trim();
    await waitFor(() => expect(meta()).toBe(localTime(at)));
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    await waitFor(() => expect(meta()).toBe('yesterday'));
  });
});
