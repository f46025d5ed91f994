// @vitest-environment jsdom
// Hermes Agent in the window through App with a fake backend: Settings shows what was
// found and saves the path override and the model (picked from Hermes's own list); the
// "Hermes sessions" list opens a session read-only, and "Continue here" opens a chat.
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { findElement } from '../test/dom';
import { fakeApi, session } from '../test/fakeApi';

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

async function openSettings() {
  const f = fakeApi();
  f.sessions.set('a', session('a', 5, { title: 'Deploy notes', runtime: 'builtin' }));
  render(App, { backend: f.api, armDelayMs: 0 });
  const user = userEvent.setup();
  await waitFor(() => expect(screen.getByRole('heading', { name: 'Deploy notes' })).toBeTruthy());
  await user.click(screen.getAllByRole('button', { name: /settings/i })[0]);
  await findElement('[data-hermes-found]');
  return { f, user };
}

describe('Hermes Agent in Settings', () => {
  it('shows the Hermes found and saves the path override and a model from its list', async () => {
    const { f, user } = await openSettings();
    const found = document.querySelector('[data-hermes-found]')!.textContent!;
    expect(found).toContain('0.19.0');
    expect(found).toContain('3.11.7');
    await user.click(screen.getByLabelText('Hermes path (optional)'));
    await user.paste('/opt/hermes/bin/python');
    await user.click(screen.getByRole('button', { name: 'Models from Hermes' }));
    // Hermes's list came: the model is picked from it.
    await waitFor(() => expect(screen.getByLabelText('Model for Hermes chats').tagName).toBe('SELECT'));
    await user.selectOptions(screen.getByLabelText('Model for Hermes chats'), 'hermes-4-mini');
    await user.click(screen.getByRole('button', { name: 'Save Hermes settings' }));
    await waitFor(() => expect(f.api.saveHermesSettings).toHaveBeenCalledWith({ path: '/opt/hermes/bin/python', home: '', model: 'hermes-4-mini' }));
    // The runtime pickers list what the new settings find.
    await waitFor(() => expect(f.api.listRuntimes.mock.calls.length).toBeGreaterThan(1));
  });

  it('says how to install Hermes when it is missing', async () => {
    const f = fakeApi();
    f.api.getHermesSettings.mockResolvedValue({ path: '', home: '', model: '', install: { python: '', version: '', python_version: '',
      source: '', home: '/home/u/.hermes', profiles: [], problem: 'Hermes Agent was not found on this computer.', hint: 'Install Hermes Agent (pip install hermes-agent).' } });
    f.sessions.set('a', session('a', 5, { title: 'Deploy notes' }));
    render(App, { backend: f.api, armDelayMs: 0 });
    const user = userEvent.setup();
    await user.click((await screen.findAllByRole('button', { name: /settings/i }))[0]);
    await waitFor(() => expect(document.querySelector('[data-hermes-missing]')?.textContent).toContain('not found'));
    expect(screen.getByText(/pip install hermes-agent/)).toBeTruthy();
  });

  it('lists Hermes sessions, opens one read-only, and Continue here opens a chat bound to it', async () => {
    const { f, user } = await openSettings();
    await user.click(screen.getByRole('button', { name: 'Hermes sessions…' }));
    const list = await findElement('[data-hermes-session-list]');
    await user.click(await within(list).findByText('Trip planning'));
    const transcript = await findElement('[data-hermes-transcript]');
    await waitFor(() => {
      expect(transcript.textContent).toContain('plan the trip');
      expect(transcript.querySelector('strong')?.textContent).toBe('the plan');
    });
    expect(transcript.querySelector('textarea, input')).toBeNull(); // read-only
    await user.click(screen.getByRole('button', { name: 'Continue here' }));
    await waitFor(() => {
      expect(f.api.continueHermesSession).toHaveBeenCalledWith('hermes', '20261201_081947_e89317');
      expect(screen.getByRole('heading', { name: 'Trip planning' })).toBeTruthy();
    });
  });
});
