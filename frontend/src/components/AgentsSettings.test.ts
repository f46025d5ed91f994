// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { AcpAgent, AcpApi, AcpTestResult } from '../lib/acp';
import AgentsSettings from './AgentsSettings.svelte';

function fakeApi(agents: AcpAgent[] = []) {
  let list = [...agents];
  const api = {
    agents: vi.fn(async () => [...list]),
    presets: vi.fn(async () => [
      { id: 'opencode', name: 'OpenCode', command: 'opencode', args: ['acp'], install: 'npm install -g opencode-ai' },
      { id: 'gemini', name: 'Gemini CLI', command: 'gemini', args: ['--acp'], install: 'npm install -g @google/gemini-cli' },
    ]),
    save: vi.fn(async (a: AcpAgent) => {
      const out = { ...a, id: a.id || 'opencode', env: a.env.map((e) => (e.secret ? { ...e, value: '', has_value: true } : e)) };
      list = [...list.filter((x) => x.id !== out.id), out];
      return out;
    }),
    remove: vi.fn(async () => {}),
    test: vi.fn(async (): Promise<AcpTestResult> => ({
      ok: true, took_s: 1, output: [],
      info: { name: 'OpenCode', version: '1.18.33', protocol_version: 1, pid: 7, command: ['opencode', 'acp'],
        auth_methods: [{ id: 'login', name: 'Login', description: 'Run `opencode auth login`' }],
        capabilities: { load_session: true, resume_session: true, close_session: true, list_sessions: true, logout: false, images: true, audio: false, embedded_context: true, mcp_http: true, mcp_sse: true } },
    })),
    state: vi.fn(), choose: vi.fn(), respondOption: vi.fn(),
  };
  return api as typeof api & AcpApi;
}

describe('AgentsSettings', () => {
  it('adds an agent from a preset with arguments, a working folder and a secret variable', async () => {
    const api = fakeApi();
    const onchanged = vi.fn();
    const { container } = render(AgentsSettings, { api, open: true, onchanged });
    await waitFor(() => expect(api.presets).toHaveBeenCalled());
    const add = await screen.findByRole('combobox', { name: 'Add an agent' });
    await fireEvent.change(add, { target: { value: 'opencode' } });
    expect((screen.getByRole('textbox', { name: 'Command' }) as HTMLInputElement).value).toBe('opencode');
    expect((screen.getByRole('textbox', { name: 'Arguments' }) as HTMLInputElement).value).toBe('acp');
    expect(container.textContent).toContain('npm install -g opencode-ai');
    await fireEvent.input(screen.getByRole('textbox', { name: 'Arguments' }), { target: { value: "acp --print-logs 'two words'" } });
    await fireEvent.input(screen.getByRole('textbox', { name: 'Working folder' }), { target: { value: '/home/me/code' } });
    await fireEvent.click(screen.getByRole('button', { name: '+ Add a variable' }));
    await fireEvent.input(screen.getByRole('textbox', { name: 'Variable name' }), { target: { value: 'OPENAI_API_KEY' } });
    await fireEvent.click(screen.getByRole('checkbox'));
    const value = container.querySelector('input.env-value') as HTMLInputElement;
    expect(value.type).toBe('password');
    await fireEvent.input(value, { target: { value: 'sk-test' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add agent' }));
    await waitFor(() => expect(api.save).toHaveBeenCalled());
    expect(api.save.mock.calls[0][0]).toMatchObject({
      id: '', name: 'OpenCode', command: 'opencode', args: ['acp', '--print-logs', 'two words'], dir: '/home/me/code', preset: 'opencode',
      env: [{ name: 'OPENAI_API_KEY', value: 'sk-test', secret: true }],
    });
    await waitFor(() => expect(onchanged).toHaveBeenCalled());
    await waitFor(() => expect(container.querySelector('.list .name')?.textContent).toBe('OpenCode'));
  });

  it('Test shows the agent’s own name, version, capabilities and sign-in ways', async () => {
    const api = fakeApi([{ id: 'oc', name: 'My OpenCode', command: 'opencode', args: ['acp'], env: [], dir: '' }]);
    render(AgentsSettings, { api, open: true });
    await fireEvent.click(await screen.findByRole('button', { name: 'Test' }));
    const ok = await screen.findByText('OpenCode 1.18.33');
    expect(ok.parentElement?.textContent).toContain('resumes sessions');
    expect(ok.parentElement?.textContent).toContain('MCP servers (stdio, http, sse)');
    expect(ok.parentElement?.textContent).toContain('opencode auth login');
  });

  it('a failed Test shows the message, the hint and the agent’s output', async () => {
    const api = fakeApi([{ id: 'x', name: 'Broken', command: 'nope', args: [], env: [], dir: '' }]);
    api.test.mockResolvedValueOnce({ ok: false, took_s: 0, message: 'The agent command "nope" was not found in PATH.', hint: 'Install the agent.',
      output: ['[agent] boom'], info: { name: '', version: '', protocol_version: 0, pid: 0, command: [], auth_methods: [], capabilities: {} as never } });
    render(AgentsSettings, { api, open: true });
    await fireEvent.click(await screen.findByRole('button', { name: 'Test' }));
    expect(await screen.findByText('The agent command "nope" was not found in PATH.')).toBeTruthy();
    expect(screen.getByText('Install the agent.')).toBeTruthy();
    expect(screen.getByText('[agent] boom')).toBeTruthy();
  });

  it('a stored secret is not shown; leaving it empty keeps it', async () => {
    const api = fakeApi([{ id: 'c', name: 'Codex', command: 'codex-acp', args: [], env: [{ name: 'OPENAI_API_KEY', value: '', secret: true, has_value: true }], dir: '' }]);
    const { container } = render(AgentsSettings, { api, open: true });
    await fireEvent.click(await screen.findByRole('button', { name: 'Edit' }));
    const value = container.querySelector('input.env-value') as HTMLInputElement;
    expect(value.value).toBe('');
    expect(value.placeholder).toContain('keychain');
    await fireEvent.click(screen.getByRole('button', { name: 'Save agent' }));
    await waitFor(() => expect(api.save).toHaveBeenCalled());
    expect(api.save.mock.calls[0][0].env).toEqual([{ name: 'OPENAI_API_KEY', value: '', secret: true, has_value: true }]);
  });
});
