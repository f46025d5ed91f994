// @vitest-environment jsdom
// The saved rows' actions through App with a fake backend: Copy (the raw Markdown),
// Edit inline and resend (the old branch kept as a fork), Retry with the same or another
// model, the turn's cost on the row that ends it, the files on a user row, the
// "earlier messages summarised" marker (expandable) and each code block's Copy.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import App from '../App.svelte';
import type { Attachment } from '../lib/chat';
import { fakeApi, frame, message, session, usage0 } from '../test/fakeApi';

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

const photo: Attachment = {
  id: 'att9', session_id: 's', sha256: '9'.repeat(64), name: 'beach.png', mime_type: 'image/png', kind: 'image',
  size: 2048, sent_bytes: 2048, created_at: 1,
};

async function app(extra: (f: ReturnType<typeof fakeApi>) => void = () => {}) {
  const f = fakeApi();
  f.sessions.set('s', session('s', 2, { title: 'Holiday photos' }));
  f.transcripts.set('s', [
    message('10', 'user', 'First question', { position: 0, stream_id: 'st0' }),
    message('11', 'assistant', 'First answer', { position: 1, stream_id: 'st0' }),
    message('12', 'user', 'Sort **them**', { position: 2, stream_id: 'st1', attachments: [photo] }),
    message('13', 'assistant', 'Sorted by *date*.\n\n```sh\nls -t photos/\n```', { position: 3, stream_id: 'st1' }),
  ]);
  f.api.checkProvider.mockResolvedValue({ ok: true, message: '', hint: '', models: ['m', 'llava'] });
  f.api.chatFigures.mockResolvedValue({
    turns: [{ stream_id: 'st1', started_at: 1, ended_at: 2, terminal: 'completed', usage: { ...usage0, estimated_cost: 0.0123 }, model: 'm', context_tokens: 0, cost_source: 'provider' } as never],
    cost: 0.0123, cost_known: 1, cost_unknown: 0,
    context: { used_tokens: 1200, estimated: false, context_length: 8192, source: 'provider', note: '', compact_at: 0.8, model: 'm', available: true },
  });
  extra(f);
  render(App, { backend: f.api, armDelayMs: 0 });
  await waitFor(() => expect(document.querySelector('[data-message-id="13"]')).not.toBeNull());
  return { f, row: (id: string) => document.querySelector(`[data-message-id="${id}"]`) as HTMLElement };
}

describe('message actions', () => {
  it('Copy puts the raw Markdown on the clipboard; a user row names its files', async () => {
    const user = userEvent.setup();
    const { f, row } = await app();
    await user.click(within(row('13')).getByRole('button', { name: 'Copy' }));
    await waitFor(() => {
      expect(f.api.copyText).toHaveBeenCalledWith('Sorted by *date*.\n\n```sh\nls -t photos/\n```');
      expect(within(row('13')).getByRole('button', { name: 'Copied' })).toBeTruthy();
    });
    await user.click(within(row('12')).getByRole('button', { name: 'Copy' }));
    await waitFor(() => expect(f.api.copyText).toHaveBeenLastCalledWith('Sort **them**\n[beach.png]'));
  });

  it('Edit opens the message inline; Enter resends it (the old branch kept), Escape cancels', async () => {
    const user = userEvent.setup();
    const { f, row } = await app();
    await user.click(within(row('12')).getByRole('button', { name: 'Edit' }));
    const box = (await waitFor(() => within(row('12')).getByLabelText('Edit your message'))) as HTMLTextAreaElement;
    expect(box.value).toBe('Sort **them**');
    await user.keyboard('{Escape}');
    await waitFor(() => expect(within(row('12')).queryByLabelText('Edit your message')).toBeNull());
    expect(f.api.editAndResend).not.toHaveBeenCalled();

    // An earlier message may be edited too.
    await user.click(within(row('10')).getByRole('button', { name: 'Edit' }));
    const box0 = (await waitFor(() => within(row('10')).getByLabelText('Edit your message'))) as HTMLTextAreaElement;
    await user.clear(box0);
    await user.type(box0, 'A better first question{Enter}');
    await waitFor(() => expect(f.api.editAndResend).toHaveBeenCalledWith('s', 10, 'A better first question', expect.any(Number)));
    await waitFor(() => expect(screen.getByText(/kept in a copy of this chat/)).toBeTruthy());
  });

  it('Retry is offered on the last answer only, with the same or another model', async () => {
    const user = userEvent.setup();
    const { f, row } = await app();
    expect(within(row('11')).queryByRole('button', { name: 'Retry' })).toBeNull();
    await user.click(within(row('13')).getByRole('button', { name: 'Retry' }));
    await waitFor(() => expect(f.api.retry).toHaveBeenCalledWith('s', ''));
  });

  it('Retry with another model picks from the provider\'s models', async () => {
    const user = userEvent.setup();
    const { f, row } = await app();
    await waitFor(() => expect(within(row('13')).getByTitle('Answer again with another model')).toBeTruthy());
    await user.click(within(row('13')).getByTitle('Answer again with another model'));
    const menu = within(row('13')).getByRole('menu', { name: 'Answer again with' });
    await user.click(within(menu).getByRole('menuitem', { name: 'llava' }));
    await waitFor(() => expect(f.api.retry).toHaveBeenCalledWith('s', 'llava'));
  });

  it('the turn\'s cost stands on the row that ends it; a turn without a cost shows none', async () => {
    const { row } = await app();
    await waitFor(() => expect(row('13').querySelector('[data-turn-cost]')?.textContent).toBe('$0.0123'));
    expect(row('11').querySelector('[data-turn-cost]')).toBeNull();
  });

  it('a user row shows chips of its files; a chip opens the viewer', async () => {
    const user = userEvent.setup();
    const { f, row } = await app();
    const chip = within(row('12')).getByText('beach.png');
    await user.click(chip.closest('button') ?? chip);
    await waitFor(() => expect(f.api.attachmentPreview).toHaveBeenCalledWith('s', 'att9'));
  });

  it('Edit and Retry wait while a turn runs', async () => {
    const { row } = await app((f) => {
      f.sessions.set('s', session('s', 2, { title: 'Holiday photos', active_stream_id: 'st-run' }));
    });
    await waitFor(() => expect((within(row('13')).getByRole('button', { name: 'Retry' }) as HTMLButtonElement).disabled).toBe(true));
    expect((within(row('12')).getByRole('button', { name: 'Edit' }) as HTMLButtonElement).disabled).toBe(true);
  });
});

describe('code blocks', () => {
  it('Copy on a code block copies its code, not the HTML', async () => {
    const user = userEvent.setup();
    const { f, row } = await app();
    const btn = await waitFor(() => within(row('13')).getByRole('button', { name: 'Copy code' }));
    await user.click(btn);
    await waitFor(() => expect(f.api.copyText).toHaveBeenCalledWith('ls -t photos/\n'));
  });
});

describe('the summary marker', () => {
  it('marks where earlier messages were summarised and expands to the summary', async () => {
    await app((f) => {
      f.transcripts.set('s', [
        message('10', 'user', 'Old question', { position: 0 }),
        message('11', 'assistant', 'Old answer', { position: 1 }),
        message('14', 'system', 'The user asked **old things**.', { position: 2, kind: 'summary', summary_covers: 2 }),
        message('12', 'user', 'New question', { position: 3 }),
        message('13', 'assistant', 'New answer', { position: 4 }),
      ]);
    });
    const marker = document.querySelector('[data-summary]') as HTMLElement;
    const toggle = within(marker).getByRole('button', { name: /Earlier messages summarised \(2 rows\)/ });
    expect(toggle.getAttribute('aria-expanded')).toBe('false');
    expect(within(marker).queryByText('old things')).toBeNull();
    await fireEvent.click(toggle);
    await waitFor(() => expect(within(marker).getByText('old things').tagName).toBe('STRONG'));
    // The rows it covers are still shown.
    expect(screen.getByText('Old answer')).toBeTruthy();
  });
});

describe('a live turn', () => {
  async function busy() {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1, { active_stream_id: 'st' }));
    f.transcripts.set('s', [message('20', 'user', 'Refactor the parser', { stream_id: 'st' })]);
    f.journals.set('st', [frame('s', 'st', 1, 'run_status', { status: 'working' })]);
    render(App, { backend: f.api, armDelayMs: 0 });
    // Up: the busy chat is open and its stream replayed.
    await waitFor(() => {
      expect(screen.getByText('Refactor the parser')).toBeTruthy();
      expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    });
    return f;
  }

  it('shows interim text and the runtime\'s notices, one per key, until cleared', async () => {
    const f = await busy();
    f.emit(frame('s', 'st', 2, 'interim_assistant', { text: 'Reading the parser first.' }));
    f.emit(frame('s', 'st', 3, 'notice', { key: 'model', text: 'Using hermes-4', level: 'info', expires_at: 0 }));
    await waitFor(() => expect(screen.getByText('Reading the parser first.')).toBeTruthy());
    expect(screen.getByText('Using hermes-4')).toBeTruthy();
    f.emit(frame('s', 'st', 4, 'notice', { key: 'model', text: 'Using hermes-4-mini', level: 'warning', expires_at: 0 }));
    await waitFor(() => expect(screen.getByText('Using hermes-4-mini')).toBeTruthy());
    expect(screen.queryByText('Using hermes-4')).toBeNull();
    f.emit(frame('s', 'st', 5, 'notice_clear', { key: 'model' }));
    await waitFor(() => expect(screen.queryByText('Using hermes-4-mini')).toBeNull());
  });

  it('a conversation too long for the model offers Summarise and continue, which resends', async () => {
    const user = userEvent.setup();
    const f = await busy();
    f.emit(frame('s', 'st', 2, 'apperror', {
      type: 'context_too_large', label: 'Conversation too long for the model', message: 'maximum context length is 8192 tokens',
      hint: 'Use Summarise and continue.',
    }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st', 3, 'stream_end'));
    const alert = await screen.findByRole('alert');
    const btn = await waitFor(() => within(alert).getByRole('button', { name: 'Summarise and continue' }));
    await user.click(btn);
    await waitFor(() => expect(f.api.compactSession).toHaveBeenCalledWith('s', true));
    await waitFor(() => expect(screen.queryByText('Conversation too long for the model')).toBeNull());
  });

  it('another error offers no such action', async () => {
    const f = await busy();
    f.emit(frame('s', 'st', 2, 'apperror', { type: 'network', label: 'Cannot reach the provider', message: 'refused', hint: 'Check it runs.' }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st', 3, 'stream_end'));
    const alert = await screen.findByRole('alert');
    expect(within(alert).queryByRole('button', { name: 'Summarise and continue' })).toBeNull();
  });
});
