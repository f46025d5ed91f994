// @vitest-environment jsdom
// Sessions through App with a fake backend: the sidebar search (debounced, marked
// snippets as text, a hit opens its message), the session menu (rename inline, pin,
// archive with "Show archived", duplicate, export, delete after confirmation), fork
// from a message, drafts, the recovery banner and the Diagnostics view.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import App from '../App.svelte';
import type { SearchHit } from '../lib/protocol';
import { fakeApi, message, session } from '../test/fakeApi';
import { findElement } from '../test/dom';
import { localTime } from '../lib/format';
import Highlight from './Highlight.svelte';

beforeAll(() => {
  // jsdom has no layout (scrollIntoView) and no modal dialogs.
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

function app() {
  const f = fakeApi();
  f.sessions.set('a', session('a', 5, { title: 'Reading files in Go' }));
  f.sessions.set('b', session('b', 3, { title: 'Release notes' }));
  f.transcripts.set('a', [
    message('m0', 'user', 'How do I read a file?', { position: 0 }),
    message('m1', 'assistant', 'Use bufio.Scanner.', { position: 1 }),
  ]);
  f.transcripts.set('b', [
    message('n0', 'user', 'Summarise the notes', { position: 0 }),
    message('n1', 'assistant', 'Faster start-up.', { position: 1 }),
    message('n2', 'user', 'And the bugs?', { position: 2 }),
  ]);
  return f;
}

async function mount(f = app()) {
  const r = render(App, { backend: f.api, armDelayMs: 0 });
  // Up: the sidebar lists both chats and the newest is open with its rows.
  await waitFor(() => {
    expect(screen.getByRole('button', { name: 'Actions for Release notes' })).toBeTruthy();
    expect(screen.getByText('Use bufio.Scanner.')).toBeTruthy();
  });
  return { f, r };
}


describe('sidebar search', () => {
  const hit: SearchHit = {
    session_id: 'b', title: 'Release notes', title_highlight: '', message_id: 9, position: 2, role: 'user',
    snippet: 'And the \u0002bugs\u0003? <script>alert(1)</script>', rank: -2, updated_at: 3, archived: false,
  };

  it('searches as you type, marks matches as text, and opens the hit at its message', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    f.api.searchSessions.mockResolvedValue([hit]);
    const box = screen.getByRole('searchbox', { name: 'Search conversations' });
    await user.type(box, 'bugs');
    await waitFor(() => expect(f.api.searchSessions).toHaveBeenCalledWith('bugs', 30));
    // Debounced: one call for the four keys typed quickly.
    expect(f.api.searchSessions).toHaveBeenCalledTimes(1);
    const results = await screen.findByRole('region', { name: 'Search results' });
    const mark = within(results).getByText('bugs');
    expect(mark.tagName).toBe('MARK');
    expect(results.querySelector('script')).toBeNull();
    expect(results.textContent).toContain('<script>alert(1)</script>');
    await user.click(results.querySelector('[data-hit="b"]')!);
    await waitFor(() => expect(f.api.getTranscriptFrom).toHaveBeenCalledWith('b', 0, expect.any(Number)));
    await waitFor(() => expect(document.querySelector('[data-position="2"]')?.classList.contains('highlighted')).toBe(true));
    // Escape clears the search and shows the list again.
    await user.type(box, '{Escape}');
    expect((box as HTMLInputElement).value).toBe('');
    expect(screen.getByRole('button', { name: 'Release notes' })).toBeTruthy();
  });

  it('says when nothing matches', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    f.api.searchSessions.mockResolvedValue([]);
    await user.type(screen.getByRole('searchbox'), 'zzz');
    expect(await screen.findByText('No conversation matches.')).toBeTruthy();
  });

  it('Highlight renders only text nodes and <mark>', () => {
    const { container } = render(Highlight, { text: '<b>x</b> \u0002<i>y</i>\u0003' });
    expect(container.querySelector('b')).toBeNull();
    expect(container.querySelector('i')).toBeNull();
    expect(container.querySelector('mark')!.textContent).toBe('<i>y</i>');
  });
});

describe('sidebar times', () => {
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('read differently once they would (at midnight), and on showing a window that was hidden meanwhile', async () => {
    // A clock that runs on its own (so the mount's waits work) and can be moved on: two
    // minutes before a local midnight.
    vi.useFakeTimers({ shouldAdvanceTime: true });
    vi.setSystemTime(new Date(2026, 2, 10, 23, 58));
    let visibility: DocumentVisibilityState = 'visible';
    vi.spyOn(document, 'visibilityState', 'get').mockImplementation(() => visibility);
    const f = app();
    const at = Date.now();
    f.sessions.set('a', session('a', at, { title: 'Reading files in Go' }));
    await mount(f);
    const meta = () => document.getElementById('meta-a')!.textContent!.trim();
    expect(meta()).toBe(localTime(at));
    expect(meta()).toMatch(/11:58|23:58/);
    // Nothing changes within the day.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(meta()).toBe(localTime(at));
    await vi.advanceTimersByTimeAsync(61_000);
    await waitFor(() => expect(meta()).toBe('yesterday'));
    // Hidden: nothing ticks; shown again: the time is current at once.
    visibility = 'hidden';
    document.dispatchEvent(new Event('visibilitychange'));
    await vi.advanceTimersByTimeAsync(24 * 3_600_000);
    expect(meta()).toBe('yesterday');
    visibility = 'visible';
    document.dispatchEvent(new Event('visibilitychange'));
    await waitFor(() => expect(meta()).toBe(new Intl.DateTimeFormat().format(at)));
  });
});

describe('session menu', () => {
  it('opens from its button, moves with the arrows and closes with Escape', async () => {
    const user = userEvent.setup();
    await mount();
    const trigger = screen.getByRole('button', { name: 'Actions for Release notes' });
    await user.click(trigger);
    const menu = screen.getByRole('menu');
    const items = within(menu).getAllByRole('menuitem');
    expect(items.map((i) => i.textContent)).toEqual([
      'Rename', 'Regenerate title', 'Pin to top', 'Duplicate', 'Export as Markdown…', 'Export as JSON…', 'Archive', 'Delete…',
    ]);
    expect(document.activeElement).toBe(items[0]);
    await user.keyboard('{ArrowDown}');
    expect(document.activeElement).toBe(items[1]);
    await user.keyboard('{ArrowUp}{ArrowUp}');
    expect(document.activeElement).toBe(items.at(-1));
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('menu')).toBeNull();
    expect(document.activeElement).toBe(trigger);
  });

  it('renames inline: Enter saves, Escape keeps the old name', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    await user.click(screen.getByRole('button', { name: 'Actions for Release notes' }));
    await user.click(screen.getByRole('menuitem', { name: 'Rename' }));
    const input = screen.getByLabelText('New name') as HTMLInputElement;
    expect(document.activeElement).toBe(input);
    await user.clear(input);
    await user.type(input, 'Notes for v2{Enter}');
    expect(f.api.renameSession).toHaveBeenCalledWith('b', 'Notes for v2');
    expect(await screen.findByRole('button', { name: 'Notes for v2' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Actions for Notes for v2' }));
    await user.click(screen.getByRole('menuitem', { name: 'Rename' }));
    await user.type(screen.getByLabelText('New name'), ' changed{Escape}');
    expect(f.api.renameSession).toHaveBeenCalledTimes(1);
    expect(screen.getByRole('button', { name: 'Notes for v2' })).toBeTruthy();
  });

  it('pins to the top and unpins', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    await user.click(screen.getByRole('button', { name: 'Actions for Release notes' }));
    await user.click(screen.getByRole('menuitem', { name: 'Pin to top' }));
    expect(f.api.pinSession).toHaveBeenCalledWith('b', true);
    await waitFor(() => {
      const titles = [...document.querySelectorAll('nav [data-session]')].map((b) => b.getAttribute('data-session'));
      expect(titles).toEqual(['b', 'a']);
    });
    const pinned = screen.getByRole('button', { name: 'Release notes' });
    expect(pinned.querySelector('[data-pinned]')).not.toBeNull();
    expect(document.getElementById(pinned.getAttribute('aria-describedby')!)!.textContent).toContain('pinned');
    await user.click(screen.getByRole('button', { name: 'Actions for Release notes' }));
    await user.click(screen.getByRole('menuitem', { name: 'Unpin' }));
    expect(f.api.pinSession).toHaveBeenLastCalledWith('b', false);
  });

  it('archives; "Show archived" lists it and Unarchive brings it back', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    await user.click(screen.getByRole('button', { name: 'Actions for Release notes' }));
    await user.click(screen.getByRole('menuitem', { name: 'Archive' }));
    expect(f.api.archiveSession).toHaveBeenCalledWith('b', true);
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Release notes' })).toBeNull());
    await user.click(screen.getByRole('checkbox', { name: 'Show archived' }));
    const archived = await screen.findByRole('list', { name: 'Archived conversations' });
    expect(await within(archived).findByRole('button', { name: 'Release notes' })).toBeTruthy();
    await user.click(within(archived).getByRole('button', { name: 'Actions for Release notes' }));
    await user.click(screen.getByRole('menuitem', { name: 'Unarchive' }));
    expect(f.api.archiveSession).toHaveBeenLastCalledWith('b', false);
    await waitFor(() => expect(within(archived).queryByRole('button', { name: 'Release notes' })).toBeNull());
  });

  it('deletes only after the confirmation, whose Cancel has the focus', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    await user.click(screen.getByRole('button', { name: 'Actions for Release notes' }));
    await user.click(screen.getByRole('menuitem', { name: 'Delete…' }));
    const dialog = await screen.findByRole('dialog', { name: 'Delete this conversation?' });
    await waitFor(() => expect(document.activeElement).toBe(within(dialog).getByRole('button', { name: 'Cancel' })));
    expect(dialog.textContent).toContain('“Release notes”');
    await user.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(f.api.deleteSession).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Actions for Release notes' }));
    await user.click(screen.getByRole('menuitem', { name: 'Delete…' }));
    await user.click(within(await screen.findByRole('dialog', { name: 'Delete this conversation?' })).getByRole('button', { name: 'Delete' }));
    expect(f.api.deleteSession).toHaveBeenCalledWith('b');
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Release notes' })).toBeNull());
  });

  it('duplicates and exports; a failure is shown in the banner with its message', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    await user.click(screen.getByRole('button', { name: 'Actions for Reading files in Go' }));
    await user.click(screen.getByRole('menuitem', { name: 'Export as Markdown…' }));
    expect(f.api.exportSession).toHaveBeenCalledWith('a', 'markdown');
    expect(await screen.findByText('Exported to /home/me/export.md')).toBeTruthy();
    f.api.duplicateSession.mockRejectedValueOnce(new Error('database or disk is full'));
    await user.click(screen.getByRole('button', { name: 'Actions for Reading files in Go' }));
    await user.click(screen.getByRole('menuitem', { name: 'Duplicate' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Could not duplicate the conversation');
    expect(alert.textContent).toContain('database or disk is full');
    await user.click(screen.getByRole('button', { name: 'Actions for Reading files in Go' }));
    await user.click(screen.getByRole('menuitem', { name: 'Duplicate' }));
    expect(await screen.findByRole('button', { name: 'Reading files in Go (copy)' })).toBeTruthy();
  });

  it('imports from the sidebar and opens the imported conversation', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    const imported = session('imp', 30, { title: 'From a file' });
    f.sessions.set('imp', imported);
    f.api.importSession.mockResolvedValueOnce(imported);
    await user.click(screen.getByRole('button', { name: 'Import…' }));
    await waitFor(() => expect(f.api.getTranscript).toHaveBeenCalledWith('imp', -1, expect.any(Number)));
    expect(screen.getByRole('button', { name: 'From a file' }).getAttribute('aria-current')).toBe('page');
  });
});

describe('fork and drafts', () => {
  it('forks from a message with a fresh request key and opens the fork', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    const forks = await screen.findAllByRole('button', { name: 'Fork the conversation from this message' });
    expect(forks).toHaveLength(2);
    await user.click(forks[1]);
    expect(f.api.forkSession).toHaveBeenCalledWith('a', 1, expect.stringMatching(/^[0-9a-f-]{36}$/));
    expect(await screen.findByRole('button', { name: 'Reading files in Go (fork)' })).toBeTruthy();
  });

  it('keeps a draft per session across switches', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    f.drafts.set('b', 'half a thought');
    const composer = screen.getByLabelText('Message') as HTMLTextAreaElement;
    await user.type(composer, 'draft in a');
    await user.click(screen.getByRole('button', { name: 'Release notes' }));
    await waitFor(() => {
      expect(composer.value).toBe('half a thought');
      expect(f.api.saveDraft).toHaveBeenCalledWith('a', 'draft in a');
    });
    await user.click(screen.getByRole('button', { name: 'Reading files in Go' }));
    await waitFor(() => expect(composer.value).toBe('draft in a'));
  });
});

describe('recovery banner and diagnostics', () => {
  it('shows the recovery report with its backup path until dismissed', async () => {
    const f = app();
    Object.assign(f.recovery, {
      recovered: true, backup_path: '/home/me/.local/share/talaria/talaria.db.damaged-20260101', sessions: 41, messages: 3120,
      message: 'The database was damaged. 41 conversations and 3120 messages were recovered.', problems: [], at: 1,
    });
    const user = userEvent.setup();
    await mount(f);
    const banner = await findElement('[data-recovery]');
    expect(banner.textContent).toContain('41 conversations and 3120 messages were recovered');
    expect(banner.textContent).toContain('/home/me/.local/share/talaria/talaria.db.damaged-20260101');
    await user.click(within(banner).getByRole('button', { name: 'Dismiss' }));
    expect(f.api.dismissRecoveryReport).toHaveBeenCalled();
    await waitFor(() => expect(document.querySelector('[data-recovery]')).toBeNull());
  });

  it('Diagnostics: versions, paths, stderr as text; Refresh, Restart agent, Open logs folder', async () => {
    const user = userEvent.setup();
    const { f } = await mount();
    await user.click(screen.getByRole('button', { name: 'Diagnostics' }));
    const dialog = await screen.findByRole('dialog', { name: 'Diagnostics' });
    await waitFor(() => expect(within(dialog).getByText('/d/talaria.db')).toBeTruthy());
    expect(within(dialog).getByText('pid 4242, up 2 min')).toBeTruthy();
    const log = within(dialog).getByLabelText('Agent stderr');
    expect(log.tagName).toBe('PRE');
    expect(log.textContent).toContain('<b>not html</b>');
    expect(log.querySelector('b')).toBeNull();
    await user.click(within(dialog).getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(f.api.getDiagnostics).toHaveBeenCalledTimes(2));
    await user.click(within(dialog).getByRole('button', { name: 'Restart agent' }));
    expect(f.api.restartAgent).toHaveBeenCalled();
    await user.click(within(dialog).getByRole('button', { name: 'Open logs folder' }));
    expect(f.api.openLogsFolder).toHaveBeenCalled();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Close' }));
  });

  it('reports window focus to the host', async () => {
    const { f } = await mount();
    expect(f.api.setWindowFocused).toHaveBeenCalled();
    window.dispatchEvent(new Event('blur'));
    window.dispatchEvent(new Event('focus'));
    // jsdom's hasFocus() decides the value; the calls happen without repeats.
    const calls = f.api.setWindowFocused.mock.calls.map((c) => c[0]);
    for (let i = 1; i < calls.length; i++) expect(calls[i]).not.toBe(calls[i - 1]);
  });
});
