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

  it('draws the sidebar from the sessions that came with the page, then reads them again', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5, { title: 'From the host' }));
    f.sessions.set('b', session('b', 3, { title: 'Made since' }));
    const boot = document.createElement('script');
    boot.type = 'application/json';
    boot.id = 'talaria-boot';
    boot.textContent = JSON.stringify({ sessions: [session('a', 5, { title: 'From the host' })], limit: 100 });
    document.head.append(boot);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => (release = r));
    f.api.listSessionsPage.mockImplementation(async () => {
      await gate; // the host is slow to answer: the sidebar does not wait for it
      return [...f.sessions.values()];
    });
    render(App, { backend: f.api, armDelayMs: 0 });
    expect(await screen.findByRole('button', { name: 'From the host' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Made since' })).toBeNull();
    expect(document.getElementById('talaria-boot')).toBeNull();
    release(); // read again after the paint: a chat made meanwhile shows
    expect(await screen.findByRole('button', { name: 'Made since' })).toBeTruthy();
    expect(f.api.listSessionsPage).toHaveBeenCalled();
  });

  it('draws the first screenful of rows with the list: the tallest window\'s, no more', async () => {
    const f = fakeApi();
    const list = Array.from({ length: 40 }, (_, i) => session('s' + i, 100 - i, { title: 'Chat ' + i }));
    for (const s of list) f.sessions.set(s.id, s);
    const boot = document.createElement('script');
    boot.type = 'application/json';
    boot.id = 'talaria-boot';
    boot.textContent = JSON.stringify({ sessions: list, limit: 100 });
    document.head.append(boot);
    const avail = Object.getOwnPropertyDescriptor(window.screen, 'availHeight');
    Object.defineProperty(window.screen, 'availHeight', { configurable: true, get: () => 900 });
    try {
      render(App, { backend: f.api, armDelayMs: 0 });
      expect(await screen.findByRole('button', { name: 'Chat 0' })).toBeTruthy();
      // (900 - 150) / 52 rows cover a 900 px window's list (rows of 57 px under 185 px
      // of the sidebar's other parts); the rest are drawn as the list scrolls.
      expect(document.querySelectorAll('nav [data-session]').length).toBe(15);
    } finally {
      if (avail) Object.defineProperty(window.screen, 'availHeight', avail);
      else delete (window.screen as unknown as Record<string, unknown>).availHeight;
    }
  });

  it('draws the first chat from the rows that came with the page, without asking for them', async () => {
    const f = fakeApi();
    const a = session('a', 5, { title: 'From the host' });
    f.sessions.set('a', a);
    f.transcripts.set('a', [message('m0', 'user', 'asked again', { position: 0 })]);
    const boot = document.createElement('script');
    boot.type = 'application/json';
    boot.id = 'talaria-boot';
    boot.textContent = JSON.stringify({
      sessions: [a],
      limit: 100,
      transcript: { session: a, messages: [message('m0', 'user', 'came with the page', { position: 0 })], before: false, after: false },
    });
    document.head.append(boot);
    render(App, { backend: f.api, armDelayMs: 0 });
    expect(await screen.findByText('came with the page')).toBeTruthy();
    await waitFor(() => expect(f.api.windowPainted).toHaveBeenCalledTimes(1));
    expect(f.api.getTranscript).not.toHaveBeenCalled();
  });

  it('draws the first chat\'s rows from the page in the render that mounts the app, with the sidebar', async () => {
    const f = fakeApi();
    const a = session('a', 5, { title: 'The newest chat' });
    f.sessions.set('a', a);
    const boot = document.createElement('script');
    boot.type = 'application/json';
    boot.id = 'talaria-boot';
    boot.textContent = JSON.stringify({
      sessions: [a],
      limit: 100,
      transcript: { session: a, messages: [message('m0', 'user', 'in the first pass', { position: 0 })], before: false, after: false },
    });
    document.head.append(boot);
    render(App, { backend: f.api, armDelayMs: 0 });
    // No await: the mount's own pass drew both (one pass of the window's effects
    // before the first frame, not a second one for the rows; issue 24).
    expect(screen.queryByText('in the first pass')).toBeTruthy();
    expect(screen.queryAllByText('The newest chat').length).toBeGreaterThan(0);
    await waitFor(() => expect(f.api.windowPainted).toHaveBeenCalledTimes(1));
    expect(f.api.getTranscript).not.toHaveBeenCalled();
  });

  it('asks for the first chat when the rows that came with the page are another chat\'s', async () => {
    const f = fakeApi();
    const a = session('a', 5, { title: 'Newest' });
    f.sessions.set('a', a);
    f.transcripts.set('a', [message('m0', 'user', 'read from the host', { position: 0 })]);
    const boot = document.createElement('script');
    boot.type = 'application/json';
    boot.id = 'talaria-boot';
    boot.textContent = JSON.stringify({
      sessions: [a],
      limit: 100,
      transcript: { session: session('zz', 1), messages: [message('x', 'user', 'not this chat', { position: 0 })], before: false, after: false },
    });
    document.head.append(boot);
    render(App, { backend: f.api, armDelayMs: 0 });
    expect(await screen.findByText('read from the host')).toBeTruthy();
    expect(screen.queryByText('not this chat')).toBeNull();
    expect(f.api.getTranscript).toHaveBeenCalled();
  });

  it('asks for the sessions when the page brought none it can read', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5, { title: 'Asked for' }));
    const boot = document.createElement('script');
    boot.type = 'application/json';
    boot.id = 'talaria-boot';
    boot.textContent = '{"sessions": not json';
    document.head.append(boot);
    render(App, { backend: f.api, armDelayMs: 0 });
    expect(await screen.findByRole('button', { name: 'Asked for' })).toBeTruthy();
    expect(f.api.listSessionsPage).toHaveBeenCalled();
  });
});
