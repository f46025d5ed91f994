// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { AgentState } from '../lib/acp';
import AgentPickers from './AgentPickers.svelte';
import SlashCommands from './SlashCommands.svelte';

const state: AgentState = {
  agent_session_id: 's',
  modes: { id: 'mode', name: 'Session Mode', current: 'build', choices: [{ id: 'build', name: 'build' }, { id: 'plan', name: 'plan' }] },
  models: null,
  options: [{ id: 'effort', name: 'Effort', current: 'low', choices: [{ id: 'low', name: 'Low' }, { id: 'high', name: 'High' }] }],
  commands: [{ name: 'init', description: 'guided AGENTS.md setup' }, { name: 'review', description: 'review changes', hint: 'commit|branch' }],
};

describe('AgentPickers', () => {
  it('shows only what the agent offers and sends a change', async () => {
    const onchoose = vi.fn();
    const { container } = render(AgentPickers, { state, onchoose });
    expect(container.querySelectorAll('select')).toHaveLength(2);
    expect(container.querySelector('[data-picker="model"]')).toBeNull();
    await fireEvent.change(screen.getByRole('combobox', { name: 'Session Mode' }), { target: { value: 'plan' } });
    await fireEvent.change(screen.getByRole('combobox', { name: 'Effort' }), { target: { value: 'high' } });
    expect(onchoose.mock.calls).toEqual([['mode', '', 'plan'], ['option', 'effort', 'high']]);
  });
});

describe('SlashCommands', () => {
  it('lists the matching commands and puts the picked one in the composer', async () => {
    const onpick = vi.fn();
    const { rerender } = render(SlashCommands, { draft: '/re', commands: state.commands, onpick });
    expect(screen.getAllByRole('option').map((o) => o.textContent?.replace(/\s+/g, ' ').trim())).toEqual(['/review commit|branch review changes']);
    await fireEvent.click(screen.getByRole('option'));
    expect(onpick).toHaveBeenCalledWith('/review ');
    await rerender({ draft: 'plain text', commands: state.commands, onpick });
    expect(screen.queryAllByRole('option')).toHaveLength(0);
  });
});

describe('AgentPickers and self-approving modes', () => {
  it('marks the modes in which the agent acts without asking, and says so while one is chosen', async () => {
    const st: AgentState = {
      ...state,
      modes: { id: 'mode', name: 'Mode', current: 'default', choices: [
        { id: 'default', name: 'Default', description: 'Ask before edits.' },
        { id: 'dont_ask', name: "Don't Ask", description: 'Auto-allow file edits', self_approves: 'the mode says so: "Auto-allow file edits"' },
      ] },
    };
    const { rerender } = render(AgentPickers, { state: st, onchoose: vi.fn() });
    const opts = screen.getAllByRole('option').map((o) => o.textContent?.trim());
    expect(opts).toContain("Mode: Don't Ask · approves by itself");
    expect(opts).toContain('Mode: Default');
    expect(screen.queryByTestId('self-approves')).toBeNull();
    const chosen = { ...st, modes: { ...st.modes!, current: 'dont_ask' }, self_approves: 'the mode says so: "Auto-allow file edits"' };
    await rerender({ state: chosen, onchoose: vi.fn() });
    const badge = screen.getByTestId('self-approves');
    expect(badge.textContent).toContain('approves by itself');
    expect(badge.getAttribute('title')).toContain('Auto-allow file edits');
    expect(screen.getByRole('combobox', { name: 'Mode' })).toBeTruthy();
  });
});
