// @vitest-environment jsdom
// The runtime of a chat through App with a fake backend: the chat header's picker moves
// an idle chat (and is locked while a turn runs), a refusal is shown, Settings sets the
// default for new chats, and the status bar follows the active chat's runtime.
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { fakeApi, session } from '../test/fakeApi';
import { drained } from '../test/until';
import { agentKind } from '../lib/runtimes.svelte';

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

async function mount() {
  const f = fakeApi();
  f.sessions.set('a', session('a', 5, { title: 'Deploy notes', runtime: 'builtin' }));
  render(App, { backend: f.api, armDelayMs: 0 });
  const user = userEvent.setup();
  // The newest chat opens at start; the runtimes are listed after the first paint.
  await waitFor(() => {
    expect(screen.getByRole('heading', { name: 'Deploy notes' })).toBeTruthy();
    const picker = screen.getByLabelText('Runtime of this chat') as HTMLSelectElement;
    expect([...picker.options].map((o) => o.value)).toContain('hermes:default');
  });
  return { f, user };
}

describe('the runtime of a chat', () => {
  it('moves an idle chat to another runtime from its header', async () => {
    const { f, user } = await mount();
    const picker = screen.getByLabelText('Runtime of this chat') as HTMLSelectElement;
    expect(picker.value).toBe('builtin');
    await user.selectOptions(picker, 'hermes:default');
    await waitFor(() => expect(f.api.setSessionRuntime).toHaveBeenCalledWith('a', 'hermes:default'));
    f.hooks.changed();
    await waitFor(() => expect((screen.getByLabelText('Runtime of this chat') as HTMLSelectElement).value).toBe('hermes:default'));
  });

  it('shows why the host refused, and keeps the chat where it was', async () => {
    const { f, user } = await mount();
    f.api.setSessionRuntime.mockRejectedValueOnce('Hermes Agent is not installed. Install it with pip install hermes-agent.');
    await user.selectOptions(screen.getByLabelText('Runtime of this chat'), 'hermes:default');
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('Hermes Agent is not installed'));
    expect(f.sessions.get('a')!.runtime).toBe('builtin');
  });

  it('cannot be changed while a turn runs', async () => {
    const { f, user } = await mount();
    await user.type(screen.getByRole('textbox', { name: /message/i }), 'hello{Enter}');
    await waitFor(() => {
      expect(f.api.startTurn).toHaveBeenCalled();
      expect((screen.getByLabelText('Runtime of this chat') as HTMLSelectElement).disabled).toBe(true);
    });
  });

  it('sets the runtime of new chats in Settings', async () => {
    const { f, user } = await mount();
    await user.click(screen.getByRole('button', { name: 'Settings' }));
    const picker = (await screen.findByLabelText('New chats run on')) as HTMLSelectElement;
    await waitFor(() => expect([...picker.options].map((o) => o.value)).toContain('hermes:default'));
    await user.selectOptions(picker, 'hermes:default');
    await waitFor(() => expect(f.api.setDefaultRuntime).toHaveBeenCalledWith('hermes:default'));
  });

  it("shows the active chat's runtime's agent status", async () => {
    const { f } = await mount();
    f.hooks.sidecar({ runtime_id: 'hermes:default', state: 'down', runtime: 'hermes', agent_version: '', sidecar_version: '',
      attempt: 0, next_retry_s: 0, error: 'gateway exited', hint: '' });
    // The status is taken at once; the window is drawn from it within the microtasks.
    await drained();
    expect(document.body.textContent).not.toMatch(/agent down|not running/i);
    f.sessions.get('a')!.runtime = 'hermes:default';
    f.hooks.changed();
    await waitFor(() => expect(document.querySelector('.sidecar')?.textContent ?? '').toMatch(/down|not running|stopped/i));
  });
});

describe('agentKind', () => {
  it('names the agent a runtime runs, on this machine or a remote host', () => {
    expect(agentKind(undefined)).toBe('builtin');
    expect(agentKind('')).toBe('builtin');
    expect(agentKind('hermes:work')).toBe('hermes');
    expect(agentKind('acp:opencode')).toBe('acp');
    expect(agentKind('ssh:homeserver')).toBe('builtin');
    expect(agentKind('ssh:homeserver:hermes')).toBe('hermes');
    expect(agentKind('ssh:homeserver:acp:opencode')).toBe('acp');
  });
});
