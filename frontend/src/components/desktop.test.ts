// @vitest-environment jsdom
// The desktop pieces through App with a fake backend: the About view (build, paths
// with Open buttons, libraries and their licence texts), "Start Talaria at login" in
// Settings, and launch actions (the desktop entry's "New chat").
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { fakeApi, message, session } from '../test/fakeApi';
import { answered, drained } from '../test/until';

beforeAll(() => {
  Element.prototype.scrollIntoView ??= function () {};
  const proto = HTMLDialogElement.prototype as HTMLDialogElement & { showModal?: () => void };
  if (typeof proto.showModal !== 'function') {
    proto.showModal = function (this: HTMLDialogElement) {
      this.setAttribute('open', '');
    };
    proto.close = function (this: HTMLDialogElement) {
      this.removeAttribute('open');
    };
  }
});

describe('About', () => {
  it('shows the build, opens the folders and shows a licence', async () => {
    const f = fakeApi();
    render(App, { backend: f.api });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'About' }));
    const dialog = await screen.findByRole('dialog', { name: 'About Talaria' });
    await waitFor(() => expect(within(dialog).getByText('0123456789ab')).toBeTruthy());
    expect(within(dialog).getByText('1 December 2026, 10:05 UTC')).toBeTruthy();
    expect(within(dialog).getByText('/d/logs')).toBeTruthy();
    expect(within(dialog).getByText('Third-party software (3)')).toBeTruthy();

    const opens = within(dialog).getAllByRole('button', { name: 'Open' });
    await user.click(opens[0]);
    await user.click(opens[1]);
    await waitFor(() => {
      expect(f.api.openDataFolder).toHaveBeenCalledTimes(1);
      expect(f.api.openLogsFolder).toHaveBeenCalledTimes(1);
    });

    const go = within(dialog).getByRole('list', { name: 'Go modules' });
    await user.click(within(go).getByRole('button', { name: /go-sqlite3/ }));
    const text = await within(dialog).findByLabelText('Licence of github.com/mattn/go-sqlite3');
    expect(text.textContent).toBe('licence of go:github.com/mattn/go-sqlite3');
    expect(f.api.getLicenseText).toHaveBeenCalledWith('go', 'github.com/mattn/go-sqlite3');

    // Talaria's own licence, beside the libraries'.
    expect(within(dialog).getByText('MIT', { selector: 'dd' })).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: 'Show' }));
    const own = await within(dialog).findByLabelText('Licence of Talaria Desktop');
    expect(own.textContent).toContain('Copyright (c) 2026 The Talaria Desktop authors');
  });

  it('says why when the build information cannot be read', async () => {
    const f = fakeApi();
    f.api.getAbout.mockRejectedValueOnce(new Error('boom'));
    render(App, { backend: f.api });
    await userEvent.setup().click(await screen.findByRole('button', { name: 'About' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Could not read the build information: boom');
  });
});

describe('Start at login', () => {
  it('writes and removes the login entry at once', async () => {
    const f = fakeApi();
    render(App, { backend: f.api });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Settings' }));
    const box = await screen.findByRole('checkbox', { name: 'Start Talaria at login, in the system tray' });
    await waitFor(() => expect((box as HTMLInputElement).disabled).toBe(false));
    expect((box as HTMLInputElement).checked).toBe(false);
    expect(screen.getByText('/home/u/.config/autostart/talaria.desktop')).toBeTruthy();
    await user.click(box);
    // Written: the box shows the host's answer and takes clicks again.
    await waitFor(() => {
      expect(f.api.setAutostart).toHaveBeenCalledWith(true);
      expect((box as HTMLInputElement).checked).toBe(true);
      expect((box as HTMLInputElement).disabled).toBe(false);
    });
    await user.click(box);
    await waitFor(() => expect(f.api.setAutostart).toHaveBeenLastCalledWith(false));
    await waitFor(() => expect((box as HTMLInputElement).checked).toBe(false));
  });

  it('shows the error and the real state when the entry cannot be written', async () => {
    const f = fakeApi();
    f.api.setAutostart.mockRejectedValueOnce(new Error('autostart: cannot write /x/talaria.desktop: read-only file system'));
    render(App, { backend: f.api });
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Settings' }));
    const box = await screen.findByRole('checkbox', { name: 'Start Talaria at login, in the system tray' });
    await waitFor(() => expect((box as HTMLInputElement).disabled).toBe(false));
    await user.click(box);
    expect((await screen.findByText(/read-only file system/)).textContent).toContain('/x/talaria.desktop');
    await waitFor(() => expect((box as HTMLInputElement).checked).toBe(false));
  });
});

describe('Launch actions', () => {
  it('opens a new chat for --new-chat at start and for a later launch, after the newest chat opened; an empty one is reused, and discarded when left', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5, { title: 'Older work' }));
    f.transcripts.set('a', [message('m0', 'user', 'An older question', { position: 0 })]);
    f.launchActions.push('new_chat');
    render(App, { backend: f.api });
    await waitFor(() => expect(f.api.newSession).toHaveBeenCalledTimes(1));
    expect(f.api.getTranscript).toHaveBeenCalledWith('a', -1, expect.any(Number)); // start-up opened the newest chat first
    // The new, empty chat is the one shown, not the older one start-up opened (whose
    // rows, had they come late, are not drawn into another chat).
    await waitFor(() => expect(document.querySelector('[data-session="n2"]')?.getAttribute('aria-current')).toBe('page'));
    await answered(f.api.getTranscript);
    await drained();
    expect(screen.queryByText('An older question')).toBeNull();

    // Still empty: a second New chat is the same chat, not another empty one. The take's
    // answer is acted on at once (New chat decides before any call of its own).
    f.launchActions.push('new_chat');
    f.hooks.launch();
    await waitFor(() => expect(f.api.takeLaunchActions).toHaveBeenCalledTimes(2));
    await answered(f.api.takeLaunchActions);
    await drained();
    expect(f.api.newSession).toHaveBeenCalledTimes(1);

    // Left before its first message, the empty chat is discarded: none piles up.
    await userEvent.setup().click(screen.getByRole('button', { name: 'Older work' }));
    await waitFor(() => expect(f.api.discardIfEmpty).toHaveBeenCalledWith('n2'));
    await waitFor(() => expect(document.querySelector('[data-session="n2"]')).toBeNull());
    expect(document.querySelector('[data-session="a"]')).not.toBeNull();
  });

  it('keeps a chat left with something in it: a row or a draft', async () => {
    const user = userEvent.setup();
    const f = fakeApi();
    f.sessions.set('a', session('a', 5, { title: 'Older work' }));
    f.transcripts.set('a', [message('m0', 'user', 'An older question', { position: 0 })]);
    render(App, { backend: f.api });
    // Up: the older chat is open (a New chat before it would be opened over).
    await waitFor(() => expect(screen.getByRole('button', { name: 'Older work' }).getAttribute('aria-current')).toBe('page'));
    f.launchActions.push('new_chat');
    f.hooks.launch();
    await waitFor(() => {
      expect(f.api.newSession).toHaveBeenCalledTimes(1);
      expect(document.querySelector('[data-session="n2"]')?.getAttribute('aria-current')).toBe('page');
    });
    await user.type(screen.getByLabelText('Message'), 'half a thought');
    await user.click(screen.getByRole('button', { name: 'Older work' }));
    // Left: the draft saved; a chat left empty would be discarded right after the save.
    await waitFor(() => expect(f.api.saveDraft).toHaveBeenCalledWith('n2', 'half a thought'));
    await answered(f.api.saveDraft);
    await drained();
    expect(f.api.discardIfEmpty).not.toHaveBeenCalled();
  });
});
