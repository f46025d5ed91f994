// @vitest-environment jsdom
// Start-up through App with a fake backend (issue 16): the sidebar and the newest chat
// do not wait for the settings (which read the keyring, locked keyrings ask the user
// first) or the status, and the host is told once the first screen has painted, so it
// starts the agent's sidecar and the tray icon then.
import { render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { fakeApi, message, session } from '../test/fakeApi';

describe('start-up', () => {
  it('shows the sidebar and the newest chat while the settings and the status are still on their way', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5, { title: 'Reading files in Go' }));
    f.transcripts.set('a', [message('m0', 'user', 'How do I read a file?', { position: 0 }), message('m1', 'assistant', 'Use **bufio**.', { position: 1 })]);
    const never = new Promise<never>(() => {});
    f.api.getSettings.mockImplementation(() => never);
    f.api.getStatus.mockImplementation(() => never);
    render(App, { backend: f.api, armDelayMs: 0 });
    expect(await screen.findByRole('button', { name: 'Reading files in Go' })).toBeTruthy();
    await waitFor(() => expect(f.api.windowPainted).toHaveBeenCalledTimes(1));
    expect(await screen.findByText('bufio')).toBeTruthy();
    expect(f.api.windowPainted).toHaveBeenCalledTimes(1);
  });

  it('tells the host once even when the list fails', async () => {
    const f = fakeApi();
    f.api.listSessionsPage.mockImplementation(async () => {
      throw new Error('database is locked');
    });
    render(App, { backend: f.api, armDelayMs: 0 });
    await waitFor(() => expect(f.api.windowPainted).toHaveBeenCalledTimes(1));
    expect(await screen.findByText(/database is locked/)).toBeTruthy();
  });
});
