// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { ApprovalOption } from '../lib/acp';
import type { ApprovalData } from '../lib/protocol';
import ApprovalCard from './ApprovalCard.svelte';

// An ACP agent's permission request: the card offers exactly the agent's options.
const options: ApprovalOption[] = [
  { option_id: 'allow_once', name: 'Allow once', kind: 'allow_once', choice: 'once' },
  { option_id: 'allow_session', name: 'Allow for session', kind: 'allow_always', choice: 'always' },
  { option_id: 'allow_always', name: 'Allow always', kind: 'allow_always', choice: 'always' },
  { option_id: 'deny', name: 'Deny', kind: 'reject_once', choice: 'deny' },
  { option_id: 'deny_always', name: 'Deny always', kind: 'reject_always', choice: 'deny' },
];
const approval = {
  approval_id: 'ap1', command: 'rm -rf build', description: 'Hermes asks for permission to run a command', pattern: '',
  timeout_s: 300, pending_count: 1, title: 'recursive delete: rm -rf build', options,
  diff: '--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-two\n+three\n',
} as ApprovalData;

function setup(extra: Record<string, unknown> = {}) {
  const onrespond = vi.fn();
  const onoption = vi.fn();
  const r = render(ApprovalCard, { approval, startedAt: Date.now(), armDelayMs: 0, onrespond, onoption, onyolo: vi.fn(), ...extra });
  return { ...r, onrespond, onoption, card: r.container.querySelector('section')! };
}

describe('ApprovalCard with an ACP agent’s options', () => {
  it('shows the agent’s title, command, diff and exactly its options', () => {
    const { card } = setup();
    expect(screen.getByRole('heading').textContent).toBe('recursive delete: rm -rf build');
    expect(card.querySelector('pre.command')?.textContent).toBe('rm -rf build');
    expect(card.querySelector('.diff .line.add .text')?.textContent).toBe('three');
    const labels = [...card.querySelectorAll('.actions button[data-option]')].map((b) => b.textContent?.trim());
    expect(labels).toEqual(['Allow once', 'Allow for session', 'Allow always', 'Deny', 'Deny always']);
    expect(screen.queryByRole('button', { name: 'Allow for this session' })).toBeNull();
  });

  it('a click sends that option’s id, also between two options of one kind', async () => {
    const { onoption, onrespond } = setup();
    await fireEvent.click(screen.getByRole('button', { name: 'Allow always' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Deny always' }));
    expect(onoption.mock.calls.map((c) => c[0])).toEqual(['allow_always', 'deny_always']);
    expect(onrespond).not.toHaveBeenCalled();
  });

  it('Ctrl+Enter takes the agent’s allow-once option; without one it answers nothing', async () => {
    const { card, onoption } = setup();
    await fireEvent.keyDown(card, { key: 'Enter', ctrlKey: true });
    expect(onoption).toHaveBeenCalledWith('allow_once');
    const other = setup({ approval: { ...approval, approval_id: 'ap2', options: options.filter((o) => o.kind !== 'allow_once') } });
    await fireEvent.keyDown(other.card, { key: 'Enter', ctrlKey: true });
    expect(other.onoption).not.toHaveBeenCalled();
    expect(other.onrespond).not.toHaveBeenCalled();
  });

  it('without onoption (a background task’s card) an option sends its choice', async () => {
    const { onrespond } = setup({ onoption: undefined });
    await fireEvent.click(screen.getByRole('button', { name: 'Deny always' }));
    expect(onrespond).toHaveBeenCalledWith('deny');
  });
});
