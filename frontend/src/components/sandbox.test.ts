// @vitest-environment jsdom
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { SandboxStore } from '../lib/sandbox.svelte';
import { fakeApi, session } from '../test/fakeApi';
import AuditPanel from './AuditPanel.svelte';
import SandboxControls from './SandboxControls.svelte';

describe('SandboxControls', () => {
  it('shows the workspace and the policy; full access is a red badge', async () => {
    const f = fakeApi();
    const s = session('s1', 1, { workspace: '/home/u/Talaria' });
    f.sessions.set('s1', s);
    const store = new SandboxStore(f.api);
    render(SandboxControls, { session: s, store });
    const policy = await screen.findByTestId('sandbox-policy');
    expect(policy.textContent).toContain('Workspace write · no network');
    expect(policy.classList.contains('full')).toBe(false);
    expect(screen.getByTestId('workspace').textContent).toContain('/home/u/Talaria');
    await fireEvent.click(policy);
    await fireEvent.click(screen.getByLabelText(/Full access/));
    await waitFor(() => expect(screen.getByTestId('sandbox-policy').classList.contains('full')).toBe(true));
    expect(f.sandboxes.get('s1')).toEqual({ mode: 'full-access', network: true });
    expect(screen.getByTestId('sandbox-policy').textContent).toContain('Full access');
  });

  it('says so when no sandbox is available', async () => {
    const f = fakeApi();
    const s = session('s1', 1);
    f.sessions.set('s1', s);
    render(SandboxControls, { session: s, store: new SandboxStore(f.api), status: { available: false, reason: 'bubblewrap (bwrap) is not installed' } });
    const policy = await screen.findByTestId('sandbox-policy');
    expect(policy.textContent).toContain('No sandbox · every command asks');
    expect(policy.getAttribute('title')).toContain('bubblewrap (bwrap) is not installed');
  });

  it('on an ACP agent says what holds: the agent is not sandboxed and asks by its own rules', async () => {
    const f = fakeApi();
    const s = session('s1', 1, { runtime: 'acp:opencode' });
    f.sessions.set('s1', s);
    const status = { available: false, mechanism: 'acp', agent: 'OpenCode', terminal_mechanism: 'bubblewrap 0.9.0',
      reason: 'OpenCode runs the commands of its own tools itself, outside Talaria’s sandbox' };
    const state = { agent_session_id: 'a', modes: null, models: null, options: [], commands: [] };
    const { rerender } = render(SandboxControls, { session: s, store: new SandboxStore(f.api), status, agent: state });
    const policy = await screen.findByTestId('sandbox-policy');
    expect(policy.textContent).not.toContain('every command asks');
    expect(policy.textContent).toContain('OpenCode is not sandboxed · asks by its own rules');
    expect(policy.classList.contains('unconfined')).toBe(false);
    expect(policy.querySelector('svg'), 'no shield: the agent is not confined').toBeNull();
    const title = policy.getAttribute('title') ?? '';
    expect(title).toContain('fs/*');
    expect(title).toContain('terminal/*');
    expect(title).toContain('confined by bubblewrap 0.9.0');
    expect(title).toContain('asks only when its own permissions say so');

    // Seen acting without asking in its mode: the badge says so, and why.
    await rerender({ session: s, store: new SandboxStore(f.api), status, agent: { ...state, self_approves: 'OpenCode edited notes.txt without asking in this mode' } });
    await waitFor(() => expect(screen.getByTestId('sandbox-policy').textContent).toContain('OpenCode is not sandboxed · acts without asking'));
    const p2 = screen.getByTestId('sandbox-policy');
    expect(p2.classList.contains('unconfined')).toBe(true);
    expect(p2.getAttribute('title')).toContain('OpenCode edited notes.txt without asking in this mode');
    await fireEvent.click(p2);
    expect(screen.getByText('What the agent’s requests to Talaria may do')).toBeTruthy();
    expect(screen.getByTestId('agent-safety').textContent).toContain('show no approval card');
    expect(screen.queryByText(/every command asks/)).toBeNull();
  });

  it('on an ACP agent without a sandbox says terminal commands ask, not every command', async () => {
    const f = fakeApi();
    const s = session('s1', 1, { runtime: 'acp:opencode' });
    f.sessions.set('s1', s);
    render(SandboxControls, { session: s, store: new SandboxStore(f.api), status: { available: false, mechanism: 'acp', agent: 'Hermes', reason: 'x' } });
    const policy = await screen.findByTestId('sandbox-policy');
    expect(policy.textContent).toContain('Hermes is not sandboxed · asks by its own rules');
    expect(policy.getAttribute('title')).toContain('each asks before it runs (no sandbox here)');
  });

  it("shows a remote chat's folder on its host and offers no folder of this machine", async () => {
    const f = fakeApi();
    const s = session('s1', 1, { workspace: '/home/u/Talaria', runtime: 'ssh:homeserver:hermes' });
    f.sessions.set('s1', s);
    render(SandboxControls, { session: s, store: new SandboxStore(f.api) });
    const chip = await screen.findByTestId('workspace');
    expect(chip.textContent).toContain('homeserver:~/Talaria');
    expect(chip.tagName).toBe('SPAN');
    await fireEvent.click(chip);
    expect(f.api.chooseFolder).not.toHaveBeenCalled();
  });

  it('changes the workspace, and shows why a folder holding the data folder is refused', async () => {
    const f = fakeApi();
    const s = session('s1', 1, { workspace: '/home/u/Talaria' });
    f.sessions.set('s1', s);
    const store = new SandboxStore(f.api);
    render(SandboxControls, { session: s, store });
    await fireEvent.click(screen.getByTestId('workspace'));
    await waitFor(() => expect(f.sessions.get('s1')!.workspace).toBe('/home/u/projects/app'));
    f.api.chooseFolder.mockResolvedValueOnce('/home/u');
    await fireEvent.click(screen.getByTestId('workspace'));
    expect((await screen.findByRole('alert')).textContent).toContain("contains Talaria's data folder");
  });
});

describe('AuditPanel', () => {
  it('lists decisions, exports CSV and clears only when confirmed', async () => {
    const f = fakeApi();
    f.audit.push({ id: 2, created_at: 1700000000000, session_id: 's1', session_title: 'Build', stream_id: 'st', runtime: 'builtin',
      kind: 'command', tool: '', subject: 'rm -rf build', pattern: 'recursive_delete', description: 'deletes recursively',
      decision: 'deny', decided_by: 'user', policy: 'workspace-write, no network' });
    const store = new SandboxStore(f.api);
    render(AuditPanel, { store, onclose: () => {} });
    await store.openAudit();
    expect((await screen.findByText('rm -rf build')).closest('tr')?.className).toContain('d-deny');
    await fireEvent.click(screen.getByRole('button', { name: 'Export CSV…' }));
    expect(await screen.findByRole('status')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Clear…' }));
    expect(f.audit.length).toBe(1);
    await fireEvent.click(screen.getByRole('button', { name: 'Clear every entry' }));
    await waitFor(() => expect(f.audit.length).toBe(0));
    expect(screen.getByText('No decisions yet.')).toBeTruthy();
  });
});
