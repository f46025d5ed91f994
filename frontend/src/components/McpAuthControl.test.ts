// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/errors';
import type { McpAuthState, McpServerConfig } from '../lib/mcp';
import { fakeMcp } from '../test/fakeMcp';
import McpAuthControl from './McpAuthControl.svelte';
import McpSettings from './McpSettings.svelte';

const st = (state: McpAuthState['state'], reason = ''): McpAuthState => ({ server: 'linear', state, reason, expires: '' });

function server(name: string, transport: McpServerConfig['transport']): McpServerConfig {
  return {
    name, transport, command: transport === 'stdio' ? 'node' : '', args: [], env: [], cwd: '', url: transport === 'stdio' ? '' : 'https://mcp.example.com/mcp',
    headers: [], enabled: true, allow_read_only: false, sandbox: '', disabled_tools: [], writable_paths: [],
  };
}

describe('McpAuthControl', () => {
  it('shows that a server needs a sign-in, signs in, then signs out', async () => {
    let now = st('needs_sign_in', 'the server asks for a sign-in');
    const api = {
      mcpServerAuth: vi.fn(async () => now),
      signInMcpServer: vi.fn(async () => (now = st('signed_in'))),
      signOutMcpServer: vi.fn(async () => {
        now = st('needs_sign_in', 'the server asks for a sign-in');
      }),
    };
    const { container } = render(McpAuthControl, { name: 'linear', api, open: true });
    await screen.findByText('Needs sign-in');
    expect(screen.getByText('the server asks for a sign-in')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in to linear' }));
    await screen.findByText('Signed in');
    expect(api.signInMcpServer).toHaveBeenCalledWith('linear');
    expect(container.querySelector('[data-mcp-auth]')?.getAttribute('data-mcp-auth')).toBe('signed_in');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign out of linear' }));
    await screen.findByText('Needs sign-in');
    expect(api.signOutMcpServer).toHaveBeenCalledWith('linear');
  });

  it('says why the sign-in failed and offers it again', async () => {
    const api = {
      mcpServerAuth: vi.fn(async () => st('needs_sign_in')),
      signInMcpServer: vi.fn(async () => st('failed', 'the authorization server refused: access_denied')),
      signOutMcpServer: vi.fn(),
    };
    render(McpAuthControl, { name: 'linear', api, open: true });
    await fireEvent.click(await screen.findByRole('button', { name: 'Sign in to linear' }));
    await screen.findByText('Sign-in failed');
    expect(screen.getByText('the authorization server refused: access_denied')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Sign in to linear' })).toBeTruthy();
  });

  it('shows the error of a sign-in that cannot start, and nothing for a server that asks for none', async () => {
    const api = {
      mcpServerAuth: vi.fn(async () => st('needs_sign_in')),
      signInMcpServer: vi.fn(async () => {
        throw new ApiError('no browser can be opened here: sign in from the desktop app', 'unsupported', '');
      }),
      signOutMcpServer: vi.fn(),
    };
    render(McpAuthControl, { name: 'linear', api, open: true });
    await fireEvent.click(await screen.findByRole('button', { name: 'Sign in to linear' }));
    expect((await screen.findByRole('alert')).textContent).toContain('no browser can be opened here');

    const none = { mcpServerAuth: vi.fn(async () => st('none')), signInMcpServer: vi.fn(), signOutMcpServer: vi.fn() };
    const { container } = render(McpAuthControl, { name: 'other', api: none, open: true });
    await waitFor(() => expect(none.mcpServerAuth).toHaveBeenCalledWith('other'));
    expect(container.querySelector('[data-mcp-auth]')).toBeNull();
  });

  it("is in Settings' row of a remote server only", async () => {
    const { api, servers, auth } = fakeMcp();
    servers.push(server('remote', 'http'), server('local', 'stdio'));
    auth.set('remote', { server: 'remote', state: 'needs_sign_in', reason: '', expires: '' });
    const { container } = render(McpSettings, { api, open: true });
    await screen.findByRole('button', { name: 'Sign in to remote' });
    expect(container.querySelector('[data-mcp-server="local"] [data-mcp-auth]')).toBeNull();
    expect(api.mcpServerAuth).not.toHaveBeenCalledWith('local');
  });
});
