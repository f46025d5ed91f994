// @vitest-environment jsdom
// The first screen offers the models of a server that answers (issue 26, item 8):
// choosing one saves it as Settings would, and the first screen gives way to the chat.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { AppSettings } from '../lib/settings.svelte';
import type { LocalServer, ProviderCheck, Settings, SettingsInput } from '../lib/protocol';
import FirstRun from './FirstRun.svelte';

const noop = () => {};
const unchosen: ProviderCheck = {
  ok: false, message: 'http://127.0.0.1:11434/v1 serves 3 models; none is chosen.', hint: 'Pick a model in Settings.',
  models: ['gemma3:4b', 'llama3.2', 'qwen3:8b'],
};

describe('the first screen', () => {
  it('offers the models the server serves and chooses the picked one', async () => {
    const onchoose = vi.fn(async (_m: string) => {});
    render(FirstRun, {
      check: unchosen, checking: false, onsettings: noop, onretry: noop, ondismiss: noop, onchoose,
      baseUrl: 'http://127.0.0.1:11434/v1',
    });
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Choose a model to start');
    const select = screen.getByLabelText('Model') as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual(unchosen.models);
    expect(select.selectedOptions[0].textContent).toBe('gemma3:4b');
    // The "none is chosen" sentence is what the picker replaces.
    expect(screen.queryByText(/none is chosen/)).toBeNull();
    await fireEvent.change(select, { target: { value: select.options[2].value } });
    await fireEvent.click(screen.getByRole('button', { name: 'Start chatting' }));
    expect(onchoose).toHaveBeenCalledWith('qwen3:8b', undefined);
  });

  it('says why a choice was not saved', async () => {
    const onchoose = vi.fn(async () => { throw new Error('the settings database is read-only'); });
    render(FirstRun, { check: unchosen, checking: false, onsettings: noop, onretry: noop, ondismiss: noop, onchoose });
    await fireEvent.click(screen.getByRole('button', { name: 'Start chatting' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('the settings database is read-only'));
    expect((screen.getByRole('button', { name: 'Start chatting' }) as HTMLButtonElement).disabled).toBe(false);
  });

  it('offers the models of local servers found when the configured endpoint does not answer', async () => {
    const onchoose = vi.fn(async (_m: string, _s?: LocalServer) => {});
    const lmstudio: LocalServer = { provider_name: 'lmstudio', label: 'LM Studio', base_url: 'http://127.0.0.1:1234/v1', models: ['qwen3-8b'] };
    const llamacpp: LocalServer = { provider_name: 'llamacpp', label: 'llama.cpp', base_url: 'http://127.0.0.1:8080/v1', models: ['gemma', 'phi4'] };
    const { container } = render(FirstRun, {
      check: { ok: false, message: 'Nothing answers at http://127.0.0.1:11434/v1.', hint: 'Start a local model server.', models: [], local: [lmstudio, llamacpp] },
      checking: false, onsettings: noop, onretry: noop, ondismiss: noop, onchoose, baseUrl: 'http://127.0.0.1:11434/v1',
    });
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Choose a model to start');
    expect(container.querySelector('.pick p')!.textContent).toContain('Found on this computer: LM Studio at http://127.0.0.1:1234/v1, llama.cpp at http://127.0.0.1:8080/v1.');
    const select = screen.getByLabelText('Model') as HTMLSelectElement;
    expect([...select.querySelectorAll('optgroup')].map((g) => g.label)).toEqual([
      'LM Studio at http://127.0.0.1:1234/v1', 'llama.cpp at http://127.0.0.1:8080/v1',
    ]);
    expect([...select.options].map((o) => o.textContent)).toEqual(['qwen3-8b', 'gemma', 'phi4']);
    expect(screen.queryByText(/Nothing answers/)).toBeNull();
    await fireEvent.change(select, { target: { value: select.options[2].value } });
    await fireEvent.click(screen.getByRole('button', { name: 'Start chatting' }));
    expect(onchoose).toHaveBeenCalledWith('phi4', llamacpp);
  });

  it('shows the install steps, and no picker, when nothing serves a model', () => {
    render(FirstRun, {
      check: { ok: false, message: 'Nothing answers at http://127.0.0.1:11434/v1.', hint: 'Start a local model server.', models: [] },
      checking: false, onsettings: noop, onretry: noop, ondismiss: noop, onchoose: async () => {},
    });
    expect(screen.getByRole('heading', { level: 1 }).textContent).toBe('Connect a model to get started');
    expect(screen.queryByLabelText('Model')).toBeNull();
    expect(screen.getByText(/Nothing answers at/)).toBeTruthy();
  });

  it('choosing saves the model with the endpoint kept, and the first screen closes', async () => {
    let saved: Settings = {
      provider_name: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: '', workspace: '/w', has_api_key: false,
      keyring_available: true, keyring_error: '', data_dir: '/d',
    } as Settings;
    const api = {
      getSettings: vi.fn(async () => saved),
      saveSettings: vi.fn(async (in_: SettingsInput) => (saved = { ...saved, provider_name: in_.provider_name, base_url: in_.base_url, model: in_.model })),
      checkProvider: vi.fn(async (): Promise<ProviderCheck> =>
        saved.model ? { ok: true, message: 'Connected', hint: '', models: unchosen.models } : unchosen),
    };
    const config = new AppSettings(api);
    await config.checkProvider();
    expect(config.showFirstRun).toBe(true);
    await config.chooseModel('llama3.2');
    expect(api.saveSettings).toHaveBeenCalledWith({
      provider_name: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: 'llama3.2', workspace: '', api_key: '', clear_api_key: false,
    });
    expect(config.settings?.model).toBe('llama3.2');
    expect(config.showFirstRun).toBe(false);

    // A local server found elsewhere becomes the provider.
    await config.chooseModel('qwen3-8b', { provider_name: 'lmstudio', label: 'LM Studio', base_url: 'http://127.0.0.1:1234/v1', models: ['qwen3-8b'] });
    expect(api.saveSettings).toHaveBeenLastCalledWith({
      provider_name: 'lmstudio', base_url: 'http://127.0.0.1:1234/v1', model: 'qwen3-8b', workspace: '', api_key: '', clear_api_key: false,
    });
  });
});
