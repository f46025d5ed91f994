// @vitest-environment jsdom
// A turn that ends with an error shows it once: in the banner (with its hint and its
// action) while it is up, its saved row then showing only the marker and Retry; once
// the banner is dismissed, or the chat is read again, on the row.
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { fakeApi, frame, message, session } from '../test/fakeApi';
import { answered, drained } from '../test/until';

const ERR = { type: 'rate_limit' as const, label: 'Rate limited', message: 'the provider refused: too many requests', hint: 'Wait a minute, then retry.' };

describe('the error a turn ended with', () => {
  it('is shown once after the turn ends, with its hint and Retry', async () => {
    const user = userEvent.setup();
    const f = fakeApi();
    f.sessions.set('s', session('s', 1, { active_stream_id: 'st' }));
    f.transcripts.set('s', [message('u1', 'user', 'Summarise the logs', { stream_id: 'st', position: 1 })]);
    f.journals.set('st', [frame('s', 'st', 1, 'run_status', { status: 'working' })]);
    render(App, { backend: f.api, armDelayMs: 0 });
    // Up: the busy chat is open and its stream replayed.
    await waitFor(() => {
      expect(screen.getByText('Summarise the logs')).toBeTruthy();
      expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    });
    f.emit(frame('s', 'st', 2, 'apperror', ERR));
    await waitFor(() => expect(screen.getAllByText(ERR.message)).toHaveLength(1));
    // What the host saved: the error row with its apperror.
    f.transcripts.set('s', [
      message('u1', 'user', 'Summarise the logs', { stream_id: 'st', position: 1 }),
      message('e1', 'assistant', `${ERR.label}: ${ERR.message}`, { stream_id: 'st', position: 2, kind: 'error', error: ERR }),
    ]);
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st', 3, 'stream_end'));
    // The saved rows are read and drawn: once all that settled, the error shows once.
    await waitFor(() => expect(f.api.getTranscriptFrom).toHaveBeenCalled());
    await answered(f.api.getTranscriptFrom);
    await waitFor(() => expect(document.querySelector('[aria-busy="true"]')).toBeNull());
    await drained();
    expect(screen.getAllByText(ERR.message)).toHaveLength(1);
    expect(screen.getAllByText(ERR.hint)).toHaveLength(1);
    expect(screen.getAllByRole('alert')).toHaveLength(1);
    expect(screen.getByText('Ended with an error')).toBeTruthy();
    // Dismissed: the row shows it (still once).
    await user.click(screen.getByRole('button', { name: 'Dismiss' }));
    await waitFor(() => expect(screen.getAllByText(ERR.message)).toHaveLength(1));
    expect(screen.getAllByText(ERR.hint)).toHaveLength(1);
    await user.click(screen.getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(f.api.retry).toHaveBeenCalledWith('s', ''));
  });
});
