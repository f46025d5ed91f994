// @vitest-environment jsdom
// The chat features through App with a fake backend: files pasted and dropped into the
// composer and sent with a message, the keyboard shortcuts and their sheet, the header's
// context meter and menu, the chat settings popover, Settings' chat section, quick ask.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { findElement } from '../test/dom';
import { fakeApi, message, session } from '../test/fakeApi';

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

async function app(extra: (f: ReturnType<typeof fakeApi>) => void = () => {}, ready = () => {
  // Up: the newest chat is open with its rows.
  expect(screen.getByRole('button', { name: 'Holiday photos' }).getAttribute('aria-current')).toBe('page');
  expect(screen.getByText('Sorted by date.')).toBeTruthy();
}) {
  const f = fakeApi();
  f.sessions.set('s', session('s', 2, { title: 'Holiday photos' }));
  f.sessions.set('t', session('t', 1, { title: 'Older chat' }));
  f.transcripts.set('s', [message('u1', 'user', 'Sort them', { position: 0 }), message('a1', 'assistant', 'Sorted by date.', { position: 1 })]);
  extra(f);
  const r = render(App, { backend: f.api, armDelayMs: 0 });
  await waitFor(ready);
  const composer = screen.queryByLabelText('Message') as HTMLTextAreaElement;
  return { f, r, composer };
}

function clipboardWith(files: File[]) {
  return { files, items: files.map((f) => ({ kind: 'file', getAsFile: () => f })), types: ['Files'], getData: () => '' };
}

describe('files in the composer', () => {
  it('a pasted image becomes a chip and goes with the next message, with or without text', async () => {
    const { f, composer } = await app();
    const img = new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47])], 'image.png', { type: 'image/png' });
    await fireEvent.paste(composer, { clipboardData: clipboardWith([img]) });
    await waitFor(() => expect(screen.getByRole('list', { name: 'Files to send' })).toBeTruthy());
    const chip = within(screen.getByRole('list', { name: 'Files to send' })).getByText(/^Pasted image .*\.png$/);
    expect(chip).toBeTruthy();
    expect(f.api.attachFile).toHaveBeenCalledWith('s', expect.stringMatching(/^Pasted image /), 'iVBORw==');
    // A message of the file alone can be sent.
    const send = screen.getByRole('button', { name: 'Send' }) as HTMLButtonElement;
    expect(send.disabled).toBe(false);
    await fireEvent.click(send);
    await waitFor(() => expect(f.api.sendMessage).toHaveBeenCalledWith('s', '', ['att1']));
    await waitFor(() => expect(screen.queryByRole('list', { name: 'Files to send' })).toBeNull());
  });

  it('a dropped text file shows it is cut; removing it asks the host', async () => {
    const user = userEvent.setup();
    const { f } = await app();
    const big = new File(['x'.repeat(3000)], 'notes.txt', { type: 'text/plain' });
    const main = document.querySelector('main')!;
    await fireEvent.dragEnter(main, { dataTransfer: { types: ['Files'], files: [big] } });
    expect(document.querySelector('[data-drop-overlay]')).not.toBeNull();
    await fireEvent.drop(main, { dataTransfer: { types: ['Files'], files: [big] } });
    await waitFor(() => expect(document.querySelector('[data-attachment="notes.txt"]')).not.toBeNull());
    const chip = document.querySelector('[data-attachment="notes.txt"]') as HTMLElement;
    expect(chip.dataset.truncated).toBe('true');
    expect(within(chip).getByText(/only the first 1 KB are sent/)).toBeTruthy();
    await user.click(within(chip).getByRole('button', { name: 'Remove notes.txt' }));
    await waitFor(() => {
      expect(f.api.removeAttachment).toHaveBeenCalledWith('s', 'att1');
      expect(document.querySelector('[data-attachment="notes.txt"]')).toBeNull();
    });
  });

  it('an empty file is refused before it is read', async () => {
    const { f, composer } = await app();
    await fireEvent.paste(composer, { clipboardData: clipboardWith([new File([], 'empty.txt')]) });
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('empty.txt is empty'));
    expect(f.api.attachFile).not.toHaveBeenCalled();
  });
});

describe('keyboard shortcuts', () => {
  it('follow the platform: Ctrl here; the sheet lists them', async () => {
    const user = userEvent.setup();
    const { f } = await app();
    await user.keyboard('{Control>}k{/Control}');
    expect(document.activeElement).toBe(screen.getByLabelText('Search conversations'));
    (document.activeElement as HTMLElement).blur();
    await user.keyboard('?');
    const sheet = await findElement<HTMLDialogElement>('[data-shortcut-sheet]');
    await waitFor(() => expect(sheet.open).toBe(true));
    expect(within(sheet).getByText('Search chats').closest('tr')!.textContent).toContain('Ctrl+K');
    expect(within(sheet).getByText('Quick ask, from anywhere').closest('tr')!.textContent).toContain('Ctrl+Alt+Space');
    await user.click(within(sheet).getByRole('button', { name: 'Close' }));
    await user.keyboard('{Control>}n{/Control}');
    await waitFor(() => expect(f.api.newSession).toHaveBeenCalled());
    await user.keyboard('{Control>},{/Control}');
    await waitFor(() => expect(document.querySelector('dialog[open]')).not.toBeNull());
  });

  it('switch chats with Ctrl+Tab and copy the last answer with Ctrl+Shift+C', async () => {
    const user = userEvent.setup();
    const { f } = await app();
    await waitFor(() => expect(screen.getByText('Sorted by date.')).toBeTruthy());
    await user.keyboard('{Control>}{Shift>}C{/Shift}{/Control}');
    await waitFor(() => expect(f.api.copyText).toHaveBeenCalledWith('Sorted by date.'));
    await user.keyboard('{Control>}{Tab}{/Control}');
    await waitFor(() => expect(f.api.getTranscript).toHaveBeenLastCalledWith('t', -1, expect.any(Number)));
  });
});

describe('the chat header', () => {
  it('shows the context meter and offers Summarise and continue and a new title', async () => {
    const user = userEvent.setup();
    const { f } = await app();
    await waitFor(() => expect(document.querySelector('[data-context-meter]')).not.toBeNull());
    const gauge = within(document.querySelector('[data-context-meter]') as HTMLElement).getByRole('button');
    expect(gauge.getAttribute('aria-label')).toBe('Context: 1.2k / 8.2k tokens (15%)');
    await user.click(screen.getByRole('button', { name: 'More actions for this chat' }));
    await user.click(screen.getByRole('menuitem', { name: 'Summarise and continue' }));
    await waitFor(() => expect(f.api.compactSession).toHaveBeenCalledWith('s', false));
    await user.click(screen.getByRole('button', { name: 'More actions for this chat' }));
    await user.click(screen.getByRole('menuitem', { name: 'Regenerate title' }));
    await waitFor(() => expect(f.api.regenerateTitle).toHaveBeenCalledWith('s'));
  });

  it('the chat settings popover saves the chat\'s options and model', async () => {
    const user = userEvent.setup();
    const { f } = await app();
    await user.click(await screen.findByRole('button', { name: 'Options of this chat' }));
    const pop = await findElement<HTMLDialogElement>('[data-chat-settings]');
    // Open, with the chat's settings read (the form is drawn from them).
    await waitFor(() => {
      expect(pop.open).toBe(true);
      expect(within(pop).getByLabelText('Custom instructions')).toBeTruthy();
      expect(within(pop).getByLabelText('Model')).toBeTruthy();
    });
    await user.type(within(pop).getByLabelText('Custom instructions'), 'Answer in French.');
    await user.selectOptions(within(pop).getByLabelText('Reasoning effort'), 'high');
    await user.type(within(pop).getByLabelText('Longest answer (tokens)'), '500');
    await user.click(within(pop).getByLabelText('Terminal'));
    await user.type(within(pop).getByLabelText('Model'), 'llava');
    await user.click(within(pop).getByRole('button', { name: 'Save' }));
    // Two calls of their own: either may be seen first.
    await waitFor(() => {
      expect(f.api.setChatOptions).toHaveBeenCalledWith('s', expect.objectContaining({
        system_prompt: 'Answer in French.', reasoning_effort: 'high', max_output_tokens: 500, tools: ['file', 'todo', 'clarify', 'vault'],
      }));
      expect(f.api.setChatModel).toHaveBeenCalledWith('s', 'llava');
    });
  });
});

describe('quick ask', () => {
  it('opens on its launch action, asks in a new chat and opens it in Talaria', async () => {
    const user = userEvent.setup();
    const { f } = await app((f) => f.launchActions.push('quick_ask'), () => expect(screen.getByRole('region', { name: 'Quick ask' })).toBeTruthy());
    const view = screen.getByRole('region', { name: 'Quick ask' });
    await user.type(within(view).getByLabelText('Question'), 'What time is it in Tokyo?');
    await user.click(within(view).getByRole('button', { name: 'Ask' }));
    await waitFor(() => expect(f.api.startTurn).toHaveBeenCalledWith(expect.any(String), 'What time is it in Tokyo?'));
    expect(f.api.newSession).toHaveBeenCalled();
    await user.click(within(view).getByRole('button', { name: 'Open in Talaria' }));
    await waitFor(() => {
      expect(f.api.leaveQuickAsk).toHaveBeenCalledWith(true);
      expect(screen.queryByRole('region', { name: 'Quick ask' })).toBeNull();
    });
  });
});
