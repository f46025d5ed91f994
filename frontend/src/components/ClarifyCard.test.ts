// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ClarifyData } from '../lib/protocol';
import ClarifyCard from './ClarifyCard.svelte';

afterEach(() => vi.useRealTimers());

const clarify: ClarifyData = {
  clarify_id: 'c1',
  kind: 'clarify',
  question: 'Which database?',
  choices: ['SQLite', 'Postgres'],
  multi_select: false,
  questions: [
    { question: 'Which database?', choices: ['SQLite', 'Postgres'], multi_select: false },
    { question: 'Which platforms?', choices: ['Linux', 'macOS', 'Windows'], multi_select: true },
    { question: 'Project name?', choices: [], multi_select: false },
  ],
  timeout_s: 3600, expires_at: 0,
  pending_count: 1,
  saved_available: false,
  keyring_available: true,
  keyring_error: '',
};

function setup(c: ClarifyData = clarify) {
  const onsubmit = vi.fn();
  const r = render(ClarifyCard, { clarify: c, startedAt: Date.now(), armDelayMs: 0, onsubmit });
  return { ...r, onsubmit, card: r.container.querySelector('section')! };
}

describe('ClarifyCard', () => {
  it('shows every question: radios, checkboxes, free text, and a countdown', () => {
    // The countdown reads the clock: it stands still here (a slow first draw is no second).
    vi.useFakeTimers({ toFake: ['Date'] });
    const { card } = setup();
    expect(screen.getByText('Which database?')).toBeTruthy();
    expect(card.querySelectorAll('input[type="radio"]')).toHaveLength(3); // 2 choices + Other
    expect(card.querySelectorAll('input[type="checkbox"]')).toHaveLength(4); // 3 choices + Other
    expect(card.querySelectorAll('input[type="text"]')).toHaveLength(3); // an Other field each
    expect(card.querySelector('[role="timer"]')?.textContent).toMatch(/1:00:00/);
  });

  it('sends one answer per question (a list for multi-select) only when all are answered', async () => {
    const user = userEvent.setup();
    const { onsubmit } = setup();
    const submit = screen.getByRole('button', { name: 'Submit' }) as HTMLButtonElement;
    expect(submit.disabled).toBe(true);
    await user.click(screen.getByLabelText('Postgres'));
    await user.click(screen.getByLabelText('Linux'));
    await user.click(screen.getByLabelText('Windows'));
    expect(submit.disabled).toBe(true);
    await user.type(screen.getByLabelText('Answer to: Project name?'), 'talaria');
    expect(submit.disabled).toBe(false);
    await user.click(submit);
    expect(onsubmit).toHaveBeenCalledWith(['Postgres', ['Linux', 'Windows'], 'talaria']);
  });

  it('typing in Other picks Other', async () => {
    const user = userEvent.setup();
    const { onsubmit } = setup({ ...clarify, questions: [clarify.questions[0], clarify.questions[1]] });
    await user.click(screen.getByLabelText('SQLite'));
    await user.type(screen.getByLabelText('Other answer to: Which database?'), 'DuckDB');
    expect((screen.getByLabelText('SQLite') as HTMLInputElement).checked).toBe(false);
    await user.click(screen.getByLabelText('macOS'));
    await user.type(screen.getByLabelText('Other answer to: Which platforms?'), 'FreeBSD');
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    expect(onsubmit).toHaveBeenCalledWith(['DuckDB', ['macOS', 'FreeBSD']]);
  });

  it('plain Enter in its text field sends nothing; Ctrl+Enter in the card does', async () => {
    const user = userEvent.setup();
    const { onsubmit } = setup({ ...clarify, questions: [clarify.questions[2]] });
    const field = screen.getByLabelText('Answer to: Project name?');
    await user.type(field, 'x{Enter}');
    expect(onsubmit).not.toHaveBeenCalled();
    await fireEvent.keyDown(field, { key: 'Enter', ctrlKey: true });
    expect(onsubmit).toHaveBeenCalledWith(['x']);
  });

  it('falls back to the single question fields', () => {
    setup({ ...clarify, questions: [] });
    expect(screen.getByText('Which database?')).toBeTruthy();
    expect(screen.getByLabelText('SQLite')).toBeTruthy();
  });

  it('its buttons belong to no form', () => {
    const { card } = setup();
    for (const b of card.querySelectorAll('button')) {
      expect(b.getAttribute('type')).toBe('button');
      expect(b.closest('form')).toBeNull();
    }
  });

  it("an elicitation's card offers Decline and Cancel, each sent as its own answer", async () => {
    const ondismiss = vi.fn();
    const onsubmit = vi.fn();
    render(ClarifyCard, { clarify: { ...clarify, elicitation: true }, startedAt: Date.now(), armDelayMs: 0, onsubmit, ondismiss });
    await userEvent.click(screen.getByRole('button', { name: 'Decline' }));
    expect(ondismiss).toHaveBeenLastCalledWith('decline');
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(ondismiss).toHaveBeenLastCalledWith('cancel');
    expect(onsubmit).not.toHaveBeenCalled();
  });

  it("the model's own question offers neither Decline nor Cancel", () => {
    setup();
    expect(screen.queryByRole('button', { name: 'Decline' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Cancel' })).toBeNull();
  });
});
