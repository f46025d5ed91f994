// @vitest-environment jsdom
// The window's safety rules, end to end through App with a fake backend: nothing is
// approved by a key pressed while typing, Enter in the composer never answers a card,
// focus never jumps into a card, and a card is answered by a click on it.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { fakeApi, frame, session } from '../test/fakeApi';
import { answered, drained } from '../test/until';

const approval = (id: string, pending = 1, command = 'rm -rf build/') => ({
  approval_id: id, command, description: 'Deletes files recursively', pattern: 'recursive_delete', timeout_s: 300, pending_count: pending,
});

async function busyApp(armDelayMs = 0) {
  const f = fakeApi();
  f.sessions.set('s', session('s', 1, { active_stream_id: 'st' }));
  f.journals.set('st', [frame('s', 'st', 1, 'run_status', { status: 'working' })]);
  const r = render(App, { backend: f.api, armDelayMs });
  // Up: the busy chat is open, its stream replayed and the host's cards read.
  await waitFor(() => {
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    expect(f.api.getPending).toHaveBeenCalledWith('s');
  });
  await answered(f.api.getPending);
  const composer = screen.getByLabelText('Message') as HTMLTextAreaElement;
  return { f, r, composer };
}

const cardOf = () => document.querySelector('[data-card="approval"]') as HTMLElement | null;

describe('safety: cards and the composer', () => {
  it('Enter in the composer never answers a card, and focus stays in the composer', async () => {
    const user = userEvent.setup();
    const { f, composer } = await busyApp();
    await user.click(composer);
    await user.type(composer, 'while you work, ');
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    await waitFor(() => expect(cardOf()).not.toBeNull());
    // The card appeared while the user was typing: focus did not move.
    expect(document.activeElement).toBe(composer);
    await user.type(composer, 'also check the docs{Enter}');
    await user.keyboard('{Enter}{Enter}');
    await user.keyboard('{Control>}{Enter}{/Control}');
    await user.keyboard('{Alt>}{Enter}{/Alt}');
    expect(f.api.respondApproval).not.toHaveBeenCalled();
    expect(f.api.setYolo).not.toHaveBeenCalled();
    expect(f.api.startTurn).not.toHaveBeenCalled();
    // Enter sent the text to the running turn as a steer (once: the empty composer
    // sends nothing more), and that is all it did.
    expect(f.api.steer).toHaveBeenCalledTimes(1);
    expect(f.api.steer).toHaveBeenCalledWith('s', 'while you work, also check the docs');
    expect(cardOf()).not.toBeNull();
    expect(document.activeElement).toBe(composer);
    // The composer stays usable while the turn waits on the card.
    expect(composer.disabled).toBe(false);
    expect(composer.value).toBe('');
  });

  it('the cards are outside the composer form, and their buttons submit nothing', async () => {
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    await waitFor(() => expect(cardOf()).not.toBeNull());
    const form = document.querySelector('form.composer')!;
    expect(form.contains(cardOf())).toBe(false);
    for (const b of cardOf()!.querySelectorAll('button')) expect(b.type).toBe('button');
    await fireEvent.submit(form);
    expect(f.api.respondApproval).not.toHaveBeenCalled();
  });

  it('a click answers; the next card is a new element that does not inherit focus', async () => {
    const user = userEvent.setup();
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1', 1)));
    f.emit(frame('s', 'st', 3, 'approval', approval('a2', 2, 'git push --force')));
    await waitFor(() => expect(cardOf()).not.toBeNull());
    expect(screen.getByText('1 more waiting')).toBeTruthy();
    const first = cardOf()!;
    await user.click(screen.getByRole('button', { name: 'Allow once' }));
    await waitFor(() => expect(f.api.respondApproval).toHaveBeenCalledWith('s', 'a1', 'once'));
    await waitFor(() => expect(cardOf()?.textContent).toContain('git push --force'));
    const second = cardOf()!;
    expect(second).not.toBe(first);
    expect(second.contains(document.activeElement)).toBe(false);
    // Enter now (focus was on the old button) answers nothing.
    await user.keyboard('{Enter}');
    await user.keyboard(' ');
    expect(f.api.respondApproval).toHaveBeenCalledTimes(1);
  });

  it('Ctrl+Enter answers only the card that has focus', async () => {
    const user = userEvent.setup();
    const { f, composer } = await busyApp();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    await waitFor(() => expect(cardOf()).not.toBeNull());
    composer.focus();
    await user.keyboard('{Control>}{Enter}{/Control}');
    expect(f.api.respondApproval).not.toHaveBeenCalled();
    cardOf()!.focus();
    await user.keyboard('{Control>}{Enter}{/Control}');
    await waitFor(() => expect(f.api.respondApproval).toHaveBeenCalledWith('s', 'a1', 'once'));
    // The one answer is the focused card's: the key in the composer gave none.
    expect(f.api.respondApproval).toHaveBeenCalledTimes(1);
  });

  it('a double click on the button before the card shows cannot answer the new card', async () => {
    // Armed after an hour: never during the test, however slow the machine.
    const { f } = await busyApp(3_600_000);
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    await waitFor(() => expect(cardOf()).not.toBeNull());
    await fireEvent.click(screen.getByRole('button', { name: 'Allow once' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Always allow' }));
    expect(f.api.respondApproval).not.toHaveBeenCalled();
  });

  it('a resolved frame withdraws the card (timeout)', async () => {
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    await waitFor(() => expect(cardOf()).not.toBeNull());
    f.emit(frame('s', 'st', 3, 'approval_resolved', { approval_id: 'a1', reason: 'timeout', pending_count: 0 }));
    await waitFor(() => expect(cardOf()).toBeNull());
  });

  it('no frame causes a bound method call by itself', async () => {
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    f.emit(frame('s', 'st', 3, 'clarify', { clarify_id: 'c1', kind: 'clarify', question: 'q?', choices: ['yes'], multi_select: false, questions: [], timeout_s: 5, pending_count: 1 }));
    f.emit(frame('s', 'st', 4, 'clarify', { clarify_id: 'v1', kind: 'vault', name: 'TOKEN', reason: 'r', timeout_s: 5, pending_count: 2, saved_available: true }));
    // The cards are drawn, and what drawing them started has run.
    await waitFor(() => {
      expect(cardOf()).not.toBeNull();
      expect(document.querySelector('[data-card="clarify"], [data-card="vault"]')).not.toBeNull();
    });
    await drained();
    expect(f.api.respondApproval).not.toHaveBeenCalled();
    expect(f.api.respondClarify).not.toHaveBeenCalled();
    expect(f.api.respondVault).not.toHaveBeenCalled();
    expect(f.api.setYolo).not.toHaveBeenCalled();
  });
});

describe('vault through the window', () => {
  it('the secret reaches the api once and is gone from the page afterwards', async () => {
    const SECRET = 'ghp_windowSecret42';
    const user = userEvent.setup();
    const { f, composer } = await busyApp();
    f.emit(frame('s', 'st', 2, 'clarify', {
      clarify_id: 'v1', kind: 'vault', question: '', choices: [], questions: [], multi_select: false, timeout_s: 600, pending_count: 1,
      name: 'GITHUB_TOKEN', reason: 'push the branch', saved_available: false, keyring_available: true, keyring_error: '',
    }));
    await waitFor(() => expect(document.querySelector('[data-card="vault"]')).not.toBeNull());
    expect(document.activeElement).not.toBe(document.querySelector('[data-card="vault"] input[type="password"]'));
    // Typing in the composer with Enter does not answer it.
    await user.type(composer, 'hi{Enter}');
    expect(f.api.respondVault).not.toHaveBeenCalled();

    const field = document.querySelector('[data-card="vault"] input[type="password"]') as HTMLInputElement;
    await user.type(field, SECRET);
    await user.click(screen.getByRole('button', { name: /^Provide/ }));
    await waitFor(() => expect(f.api.respondVault).toHaveBeenCalledTimes(1));
    expect(f.api.respondVault).toHaveBeenCalledWith('s', 'v1', { value: SECRET, use_saved: false, decline: false }, false);
    await waitFor(() => expect(screen.getByText('Secret GITHUB_TOKEN provided (this session only)')).toBeTruthy());
    expect(document.body.innerHTML).not.toContain(SECRET);
    expect([...document.querySelectorAll('input')].some((i) => i.value.includes(SECRET))).toBe(false);
  });
});
