// @vitest-environment jsdom
import { render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import type { AcpApi } from './acp';
import { AcpAccountStore } from './acpaccount.svelte';
import AcpSessionsDialog from '../components/AcpSessionsDialog.svelte';

function fakeApi(): AcpApi {
  return {
    info: vi.fn(async () => ({ capabilities: { list_sessions: false, logout: true }, auth_methods: [{ id: 'login', name: 'Login' }] })),
    sessions: vi.fn(async () => []),
    logout: vi.fn(async () => {}),
    authenticate: vi.fn(async () => {}),
  } as unknown as AcpApi;
}

describe('signing out of an ACP agent', () => {
  it('shows the agent as signed out, again when the dialog reopens, until a sign-in succeeds', async () => {
    const api = fakeApi();
    const account = new AcpAccountStore(api);
    render(AcpSessionsDialog, { account, onopen: vi.fn() });
    await account.openSessions('acp:oc', 'OpenCode');
    expect(screen.queryByText(/Signed out of OpenCode/)).toBeNull();
    await userEvent.click(await screen.findByRole('button', { name: 'Sign out' }));
    expect(api.logout).toHaveBeenCalledWith('acp:oc');
    expect(await screen.findByText(/Signed out of OpenCode\. Its next message will ask you to sign in again\./)).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Signed out' })).toHaveProperty('disabled', true);

    account.sessionsFor = null;
    await account.openSessions('acp:oc', 'OpenCode');
    expect(await screen.findByText(/Signed out of OpenCode/)).toBeTruthy();
    // Another agent is not signed out.
    await account.openSessions('acp:other', 'Other');
    expect(screen.queryByText(/Signed out of/)).toBeNull();

    // Signing in to it again clears it.
    await account.openSignIn('acp:oc');
    expect(await account.signIn('login', async () => {})).toBe(true);
    await account.openSessions('acp:oc', 'OpenCode');
    expect(screen.queryByText(/Signed out of/)).toBeNull();
  });

  it('a refused sign-out shows the agent’s words, not signed out', async () => {
    const api = fakeApi();
    (api.logout as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new Error('not signed in'));
    const account = new AcpAccountStore(api);
    render(AcpSessionsDialog, { account, onopen: vi.fn() });
    await account.openSessions('acp:oc', 'OpenCode');
    await userEvent.click(await screen.findByRole('button', { name: 'Sign out' }));
    expect(await screen.findByRole('alert')).toBeTruthy();
    expect(screen.queryByText(/Signed out of/)).toBeNull();
    expect(account.signedOutOf).toEqual([]);
  });
});
