// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/errors';
import type { RemoteHost, RemoteHostRecord, RemotesApi } from '../lib/remote';
import { describeProbe } from '../lib/remote';
import RemoteHostsSettings from './RemoteHostsSettings.svelte';

const probe = {
  os: 'Linux', arch: 'x86_64', home: '/home/me', hermes_python: '/home/me/.hermes/hermes-agent/venv/bin/python',
  hermes_version: '0.19.0', hermes_home: '/home/me/.hermes', agents: { opencode: '/usr/bin/opencode' }, bubblewrap: true, sidecar: 'current', notes: [] as string[],
};

function fakeApi(hosts: RemoteHostRecord[] = []) {
  let list = [...hosts];
  const api = {
    hosts: vi.fn(async () => [...list]),
    save: vi.fn(async (h: RemoteHost, previous = '') => {
      if (h.target.startsWith('-')) throw new ApiError('target: give what you type after `ssh`', 'invalid', '', 'target');
      const rec = { ...h, probe: null, probed_at: 0 };
      list = [...list.filter((x) => x.name !== h.name && x.name !== previous), rec];
      return rec;
    }),
    remove: vi.fn(async (name: string) => {
      list = list.filter((x) => x.name !== name);
    }),
    test: vi.fn(async (name: string): Promise<RemoteHostRecord> => {
      const rec = { ...list.find((x) => x.name === name)!, probe, probed_at: 1 };
      list = list.map((x) => (x.name === name ? rec : x));
      return rec;
    }),
  };
  return api as typeof api & RemotesApi;
}

describe('RemoteHostsSettings', () => {
  it('adds a host, tests it at once and shows what it found', async () => {
    const api = fakeApi();
    const onchanged = vi.fn();
    const { container } = render(RemoteHostsSettings, { api, open: true, onchanged });
    await screen.findByText('No remote hosts.');
    await fireEvent.click(screen.getByRole('button', { name: 'Add a host…' }));
    await fireEvent.input(screen.getByRole('textbox', { name: 'Name' }), { target: { value: 'homeserver' } });
    await fireEvent.input(screen.getByRole('textbox', { name: 'Target' }), { target: { value: 'me@server.lan' } });
    await fireEvent.input(screen.getByRole('textbox', { name: 'Port' }), { target: { value: '2222' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add and test' }));
    await waitFor(() => expect(api.test).toHaveBeenCalledWith('homeserver'));
    expect(api.save).toHaveBeenCalledWith({ name: 'homeserver', target: 'me@server.lan', port: 2222, identity_file: '', hermes: '' }, '');
    const found = await screen.findByText(/Hermes Agent 0.19.0/);
    expect(found.textContent).toBe('Linux x86_64 · Hermes Agent 0.19.0 · opencode · bubblewrap (sandbox)');
    expect(container.querySelector('[data-host="homeserver"] code')?.textContent).toBe('ssh -p 2222 me@server.lan');
    expect(onchanged).toHaveBeenCalled();
  });

  it('marks the field the host refused and keeps the form', async () => {
    const api = fakeApi();
    render(RemoteHostsSettings, { api, open: true });
    await fireEvent.click(await screen.findByRole('button', { name: 'Add a host…' }));
    await fireEvent.input(screen.getByRole('textbox', { name: 'Name' }), { target: { value: 'x' } });
    await fireEvent.input(screen.getByRole('textbox', { name: 'Target' }), { target: { value: '-oProxyCommand=evil' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add and test' }));
    expect((await screen.findByRole('alert')).textContent).toContain('after `ssh`');
    expect(screen.getByRole('textbox', { name: 'Target' }).getAttribute('aria-invalid')).toBe('true');
    expect(api.test).not.toHaveBeenCalled();
  });

  it('shows a failed test with what to do', async () => {
    const api = fakeApi([{ name: 'box', target: 'box', port: 0, identity_file: '', hermes: '', probe: null, probed_at: 0 }]);
    api.test.mockRejectedValueOnce(
      new ApiError('Remote host box: its host key has CHANGED since you last connected', 'agent_unavailable', 'This can mean someone is intercepting the connection.'),
    );
    render(RemoteHostsSettings, { api, open: true });
    await screen.findByText('Not tested yet.');
    await fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('host key has CHANGED');
    expect(alert.textContent).toContain('intercepting');
  });

  it('renames a host in one save and shows what its test found wrong', async () => {
    const api = fakeApi([{ name: 'box', target: 'box', port: 0, identity_file: '', hermes: '', probe: null, probed_at: 0 }]);
    api.test.mockImplementationOnce(async (name: string) => ({
      name, target: 'box', port: 0, identity_file: '', hermes: '~/nope/python', probed_at: 1,
      probe: { ...probe, hermes_python: '', hermes_version: '', notes: ['No Hermes Agent was found at ~/nope/python'] },
    }));
    const { container } = render(RemoteHostsSettings, { api, open: true });
    await screen.findByText('Not tested yet.');
    await fireEvent.click(screen.getByRole('button', { name: 'Edit' }));
    await fireEvent.input(screen.getByRole('textbox', { name: 'Name' }), { target: { value: 'tower' } });
    await fireEvent.click(screen.getByRole('button', { name: /Save and test/ }));
    await waitFor(() => expect(api.save).toHaveBeenCalledWith(expect.objectContaining({ name: 'tower' }), 'box'));
    expect(api.remove).not.toHaveBeenCalled();
    await waitFor(() => expect(container.querySelector('[data-probe-note]')?.textContent).toContain('No Hermes Agent was found'));
  });

  it('describes an untested host and one without bubblewrap', () => {
    expect(describeProbe(null)).toBe('Not tested yet.');
    expect(describeProbe({ ...probe, hermes_version: '', agents: {}, bubblewrap: false })).toBe('Linux x86_64 · no bubblewrap (no sandbox)');
  });
});
