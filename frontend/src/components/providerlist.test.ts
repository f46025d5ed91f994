// @vitest-environment jsdom
// WebKit's type-ahead on the closed provider list changes the option shown with an
// input event only (change comes on blur, after a Save by Enter): the provider saved
// is the one shown, and the form follows it at once.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { fakeApi, session } from '../test/fakeApi';
import { answered, drained } from '../test/until';

beforeAll(() => {
  // jsdom has no modal dialogs.
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
  const user = userEvent.setup();
  const f = fakeApi();
  f.sessions.set('s', session('s', 1));
  f.api.saveSettings.mockImplementation(async () => await f.api.getSettings());
  render(App, { backend: f.api, armDelayMs: 0 });
  await user.click(await screen.findByRole('button', { name: /Settings/ }));
  const list = (await screen.findByLabelText('Provider')) as HTMLSelectElement;
  // The form shows the saved settings (read on open): a choice made before would be
  // replaced by them.
  await waitFor(() => {
    expect(f.api.getSettings).toHaveBeenCalled();
    expect(list.value).toBe('ollama');
    expect((screen.getByLabelText('Base URL') as HTMLInputElement).value).toBe('http://127.0.0.1:11434/v1');
  });
  await answered(f.api.getSettings);
  await drained();
  return { f, user, list };
}

describe('the provider list', () => {
  it('type-ahead (an input event, no change) updates the form and saves that provider', async () => {
    const { f, user, list } = await openSettings();
    list.value = 'openrouter';
    await fireEvent.input(list);
    const url = screen.getByLabelText('Base URL') as HTMLInputElement;
    await waitFor(() => expect(url.value).toBe('https://openrouter.ai/api/v1'));
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(f.api.saveSettings).toHaveBeenCalled());
    expect(f.api.saveSettings.mock.calls.at(-1)![0]).toMatchObject({ provider_name: 'openrouter', base_url: 'https://openrouter.ai/api/v1' });
  });

  it('an option shown with no event at all is still the one saved', async () => {
    const { f, user, list } = await openSettings();
    list.value = 'lmstudio';
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(f.api.saveSettings).toHaveBeenCalled());
    expect(f.api.saveSettings.mock.calls.at(-1)![0]).toMatchObject({ provider_name: 'lmstudio' });
  });

  it('opened before the saved settings are read, the form takes them when they come', async () => {
    // The settings are read after the first paint, and a locked keyring holds them until
    // it is unlocked: Settings may be open before they come. Saving the empty form then
    // replaced the saved provider with a custom one with no address.
    const user = userEvent.setup();
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    let give!: (s: Awaited<ReturnType<typeof f.api.getSettings>>) => void;
    const saved = await f.api.getSettings();
    f.api.getSettings.mockClear();
    f.api.getSettings.mockImplementationOnce(() => new Promise((r) => (give = r)));
    f.api.saveSettings.mockImplementation(async (s: unknown) => ({ ...saved, ...(s as object) }));
    render(App, { backend: f.api, armDelayMs: 0 });
    await user.click(await screen.findByRole('button', { name: /Settings/ }));
    const list = (await screen.findByLabelText('Provider')) as HTMLSelectElement;
    await waitFor(() => expect(f.api.getSettings).toHaveBeenCalled());
    give({ ...saved, provider_name: 'openrouter', base_url: 'https://openrouter.ai/api/v1', model: 'qwen/qwen3-coder' });
    await waitFor(() => {
      expect(list.value).toBe('openrouter');
      expect((screen.getByLabelText('Base URL') as HTMLInputElement).value).toBe('https://openrouter.ai/api/v1');
    });
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(f.api.saveSettings).toHaveBeenCalled());
    expect(f.api.saveSettings.mock.calls.at(-1)![0]).toMatchObject({
      provider_name: 'openrouter', base_url: 'https://openrouter.ai/api/v1', model: 'qwen/qwen3-coder',
    });
  });
});
