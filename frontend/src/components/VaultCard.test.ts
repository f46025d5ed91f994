// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClarifyData } from '../lib/protocol';
import VaultCard from './VaultCard.svelte';

const SECRET = 'ghp_s3cr3tValue';

const vault: ClarifyData = {
  clarify_id: 'v1',
  kind: 'vault',
  question: '',
  choices: [],
  multi_select: false,
  questions: [],
  timeout_s: 3600, expires_at: 0,
  pending_count: 1,
  name: 'GITHUB_TOKEN',
  reason: 'to push the release branch',
  saved_hint: 'vault:GITHUB_TOKEN',
  saved_available: false,
  keyring_available: true,
  keyring_error: '',
};

function setup(c: Partial<ClarifyData> = {}) {
  const onanswer = vi.fn();
  const r = render(VaultCard, { clarify: { ...vault, ...c }, startedAt: Date.now(), armDelayMs: 0, onanswer });
  const field = r.container.querySelector('input[type="password"]') as HTMLInputElement;
  return { ...r, onanswer, field, card: r.container.querySelector('section')! };
}

afterEach(() => vi.restoreAllMocks());

describe('VaultCard', () => {
  it("says that the agent keeps the value when it does (Hermes's own .env), instead of 'the agent never sees it'", () => {
    const notice = 'Hermes keeps this value itself, in its own .env file in its home folder; Talaria does not store it.';
    const { card } = setup({ agent_notice: notice });
    expect(card.querySelector('[data-agent-notice]')?.textContent).toBe(notice);
    expect(card.textContent).not.toContain('The agent never sees the value');
  });

  it('shows the name and reason, and a masked field that browsers do not fill or keep', () => {
    const { field } = setup();
    expect(screen.getAllByText('GITHUB_TOKEN').length).toBeGreaterThan(0);
    expect(screen.getByText('to push the release branch')).toBeTruthy();
    expect(field.type).toBe('password');
    expect(field.getAttribute('autocomplete')).toBe('off');
    expect(field.getAttribute('spellcheck')).toBe('false');
  });

  it('provides the value, clears the field and logs nothing', async () => {
    const logs = (['log', 'info', 'warn', 'error', 'debug'] as const).map((m) => vi.spyOn(console, m));
    const user = userEvent.setup();
    const { field, onanswer, container } = setup();
    await user.type(field, SECRET);
    await user.click(screen.getByLabelText('Remember in the system keychain'));
    await user.click(screen.getByRole('button', { name: /^Provide/ }));
    expect(onanswer).toHaveBeenCalledWith({ value: SECRET, use_saved: false, decline: false }, true);
    expect(field.value).toBe('');
    expect(container.innerHTML).not.toContain(SECRET);
    for (const spy of logs) for (const call of spy.mock.calls) expect(JSON.stringify(call)).not.toContain(SECRET);
  });

  it('offers Use saved only when the keychain has a value', async () => {
    setup();
    expect(screen.queryByRole('button', { name: 'Use saved' })).toBeNull();
    const { onanswer } = setup({ clarify_id: 'v2', saved_available: true });
    await fireEvent.click(screen.getByRole('button', { name: 'Use saved' }));
    expect(onanswer).toHaveBeenCalledWith({ value: '', use_saved: true, decline: false }, false);
  });

  it('declines without a value, and clears one typed', async () => {
    const user = userEvent.setup();
    const { field, onanswer } = setup();
    await user.type(field, 'half-typed');
    await user.click(screen.getByRole('button', { name: 'Decline' }));
    expect(onanswer).toHaveBeenCalledWith({ value: '', use_saved: false, decline: true }, false);
    expect(field.value).toBe('');
  });

  it('without a keychain: remember is disabled, the error is shown, the use is session only', async () => {
    const user = userEvent.setup();
    const { field, onanswer } = setup({ keyring_available: false, keyring_error: 'no Secret Service on the bus' });
    const remember = screen.getByLabelText('Remember in the system keychain') as HTMLInputElement;
    expect(remember.disabled).toBe(true);
    const note = screen.getByText(/no Secret Service on the bus/).closest('p')!;
    expect(note.textContent).toMatch(/this session only/);
    // The keychain's own sentence is its detail, not wrapped inside ours.
    expect(note.textContent).not.toMatch(/\(no Secret Service/);
    expect(note.textContent!.match(/this session only/g)).toHaveLength(1);
    await user.type(field, SECRET);
    await user.click(screen.getByRole('button', { name: 'Provide for this session' }));
    expect(onanswer).toHaveBeenCalledWith({ value: SECRET, use_saved: false, decline: false }, false);
  });

  it('plain Enter in the field sends nothing; Ctrl+Enter provides', async () => {
    const user = userEvent.setup();
    const { field, onanswer } = setup();
    await user.type(field, `${SECRET}{Enter}`);
    expect(onanswer).not.toHaveBeenCalled();
    await fireEvent.keyDown(field, { key: 'Enter', ctrlKey: true });
    expect(onanswer).toHaveBeenCalledTimes(1);
    expect(field.value).toBe('');
  });

  it('Provide needs a value', () => {
    setup();
    expect((screen.getByRole('button', { name: /^Provide/ }) as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('VaultCard: saved values', () => {
  it('offers no saved value when there is no keychain to read it from', () => {
    render(VaultCard, { clarify: { ...vault, saved_available: true, keyring_available: false }, startedAt: Date.now(), armDelayMs: 0, onanswer: vi.fn() });
    expect(screen.queryByRole('button', { name: 'Use saved' })).toBeNull();
  });
});
