// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApprovalData } from '../lib/protocol';
import ApprovalCard from './ApprovalCard.svelte';

const approval: ApprovalData = {
  approval_id: 'a1',
  command: 'rm -rf build/ && echo "<b>done</b>"',
  description: 'Deletes files recursively',
  pattern: 'recursive_delete',
  timeout_s: 300,
  expires_at: 0,
  pending_count: 3,
};

function setup(props: Partial<Parameters<typeof render<typeof ApprovalCard>>[1] & object> = {}) {
  const onrespond = vi.fn();
  const onyolo = vi.fn();
  const r = render(ApprovalCard, { approval, waiting: 3, startedAt: Date.now(), armDelayMs: 0, onrespond, onyolo, ...props });
  return { ...r, onrespond, onyolo, card: r.container.querySelector('section')! };
}

afterEach(() => vi.useRealTimers());

describe('ApprovalCard', () => {
  it('shows the command as text, why, the pattern, the queue and the countdown', () => {
    // The countdown reads the clock: it stands still here (a slow first draw is no second).
    vi.useFakeTimers({ toFake: ['Date'] });
    const { card } = setup();
    const pre = card.querySelector('pre.command')!;
    expect(pre.textContent).toBe(approval.command);
    expect(pre.querySelector('b')).toBeNull();
    expect(screen.getByText('Deletes files recursively')).toBeTruthy();
    expect(card.querySelector('.pattern code')?.textContent).toBe('recursive_delete');
    expect(screen.getByText('2 more waiting')).toBeTruthy();
    expect(card.querySelector('[role="timer"]')?.textContent).toMatch(/Denied in\s+5:00/);
  });

  it('counts down to the host\'s expires_at, so a reloaded window does not restart the full timeout', () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { card } = setup({ approval: { ...approval, expires_at: Date.now() + 60_000 }, startedAt: Date.now() });
    expect(card.querySelector('[role="timer"]')?.textContent).toMatch(/Denied in\s+1:00/);
  });

  it('marks the matched part, collapses padding and names hidden characters', () => {
    const cmd = 'echo ok;' + ' '.repeat(400) + 'r\u200bm -rf ~/work \u202e';
    const start = new TextEncoder().encode('echo ok;' + ' '.repeat(400)).length;
    const { card } = setup({
      approval: { ...approval, command: cmd, span_start: start, span_end: start + new TextEncoder().encode('r\u200bm -rf ~/work').length,
        sandbox: 'outside the sandbox', justification: 'clean the old build' },
    });
    const pre = card.querySelector('pre.command')!;
    expect(pre.textContent).toContain('⟨400 spaces⟩');
    expect(pre.textContent).toContain('⟨U+200B ZERO WIDTH SPACE⟩');
    expect(pre.textContent).toContain('⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩');
    expect(pre.textContent).not.toContain('\u202e');
    expect([...pre.querySelectorAll('mark')].map((m) => m.textContent).join('')).toBe('rm -rf ~/work');
    expect(card.querySelector('.where.outside')?.textContent).toBe('Runs: outside the sandbox');
    expect(card.textContent).toContain('clean the old build');
  });

  it('offers only the choices the agent allows (Hermes: no "always" for some commands), deny always', async () => {
    const { card, onrespond } = setup({ approval: { ...approval, choices: ['once', 'session'] } });
    const labels = [...card.querySelectorAll('.actions button')].map((b) => b.textContent?.trim());
    expect(labels).toContain('Allow once');
    expect(labels).toContain('Allow for this session');
    expect(labels).not.toContain('Always allow');
    expect(labels).toContain('Deny');
    await fireEvent.click(screen.getByRole('button', { name: 'Deny' }));
    expect(onrespond).toHaveBeenCalledWith('deny');
  });

  it('with only once and deny offered, there is no session or always button', () => {
    const { card } = setup({ approval: { ...approval, choices: ['once', 'deny'] } });
    const labels = [...card.querySelectorAll('.actions button')].map((b) => b.textContent?.trim());
    expect(labels.filter((l) => l?.startsWith('Allow') || l?.startsWith('Always'))).toEqual(['Allow once']);
  });

  it('each button sends its choice', async () => {
    const { onrespond } = setup();
    await fireEvent.click(screen.getByRole('button', { name: 'Allow once' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Allow for this session' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Always allow' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Deny' }));
    expect(onrespond.mock.calls.map((c) => c[0])).toEqual(['once', 'session', 'always', 'deny']);
  });

  it('its buttons are plain buttons in no form', () => {
    const { card } = setup();
    for (const b of card.querySelectorAll('button')) {
      expect(b.getAttribute('type')).toBe('button');
      expect(b.closest('form')).toBeNull();
    }
  });

  it('plain Enter on the focused card answers nothing; Ctrl+Enter and Alt+Enter allow once', async () => {
    const { card, onrespond } = setup();
    card.focus();
    await fireEvent.keyDown(card, { key: 'Enter' });
    await fireEvent.keyDown(card, { key: 'Enter', shiftKey: true });
    await fireEvent.keyDown(card, { key: 'a', ctrlKey: true });
    expect(onrespond).not.toHaveBeenCalled();
    await fireEvent.keyDown(card, { key: 'Enter', ctrlKey: true });
    await fireEvent.keyDown(card, { key: 'Enter', altKey: true });
    expect(onrespond.mock.calls).toEqual([['once'], ['once']]);
  });

  it('a held-down (repeating) shortcut answers nothing', async () => {
    const { card, onrespond } = setup();
    await fireEvent.keyDown(card, { key: 'Enter', ctrlKey: true, repeat: true });
    expect(onrespond).not.toHaveBeenCalled();
  });

  it('ignores clicks until armed, so a double click cannot answer a new card', async () => {
    vi.useFakeTimers();
    const { onrespond } = setup({ armDelayMs: 600 });
    const allow = screen.getByRole('button', { name: 'Allow once' }) as HTMLButtonElement;
    expect(allow.disabled).toBe(true);
    await fireEvent.click(allow);
    expect(onrespond).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(650);
    expect(allow.disabled).toBe(false);
    await fireEvent.click(allow);
    expect(onrespond).toHaveBeenCalledWith('once');
  });

  it('is disabled while its answer is on the way, and shows an error', () => {
    setup({ busy: true, error: 'the agent is not running' });
    for (const name of ['Allow once', 'Allow for this session', 'Always allow', 'Deny']) {
      expect((screen.getByRole('button', { name }) as HTMLButtonElement).disabled).toBe(true);
    }
    expect(screen.getByRole('alert').textContent).toBe('the agent is not running');
  });

  it('YOLO needs a confirmation; Enter in the dialog cancels', async () => {
    const user = userEvent.setup();
    const { onyolo, container } = setup();
    await user.click(screen.getByRole('button', { name: 'YOLO for this session…' }));
    expect(onyolo).not.toHaveBeenCalled();
    const dialog = container.querySelector('dialog')!;
    expect(dialog.hasAttribute('open')).toBe(true);
    // Focus is on Cancel: Enter there cancels.
    expect(document.activeElement?.textContent).toBe('Cancel');
    await user.keyboard('{Enter}');
    expect(onyolo).not.toHaveBeenCalled();
    expect(dialog.hasAttribute('open')).toBe(false);

    await user.click(screen.getByRole('button', { name: 'YOLO for this session…' }));
    await user.click(screen.getByRole('button', { name: 'Turn on YOLO', hidden: true }));
    expect(onyolo).toHaveBeenCalledTimes(1);
  });

  it('never takes focus by itself', () => {
    const outside = document.createElement('textarea');
    document.body.append(outside);
    outside.focus();
    const { card } = setup();
    expect(document.activeElement).toBe(outside);
    expect(card.contains(document.activeElement)).toBe(false);
    outside.remove();
  });
});
