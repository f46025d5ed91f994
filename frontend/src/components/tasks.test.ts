// @vitest-environment jsdom
// Background tasks and side questions through App with a fake backend: the task panel
// (statuses, queue positions, results through the sanitiser, Stop and Dismiss), a task's
// approval card answered with its hidden session only by a click, the side panel beside
// a running turn, "Run in background" and the Settings limit.
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import App from '../App.svelte';
import { fakeApi, frame, session, task } from '../test/fakeApi';

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

const approval = (id: string) => ({
  approval_id: id, command: 'npm publish', description: 'Publishes the package', pattern: 'publish', timeout_s: 300, expires_at: 0, pending_count: 1,
});

async function app(opts: { busy?: boolean } = {}) {
  const f = fakeApi();
  f.sessions.set('p', session('p', 5, opts.busy ? { active_stream_id: 'st' } : {}));
  if (opts.busy) f.journals.set('st', [frame('p', 'st', 1, 'run_status', { status: 'working' })]);
  const now = Date.now();
  f.tasks.set('p', [
    task('run', 'p', { prompt: 'Update the changelog', started_at: now - 65_000 }),
    task('q1', 'p', { prompt: 'Bump the version', status: 'queued', queue_position: 1, started_at: 0 }),
    task('done', 'p', { prompt: 'Summarise open issues', status: 'completed', started_at: now - 60_000, ended_at: now - 30_000, result_preview: 'Three issues <b>open</b>' }),
    task('wait', 'p', { prompt: 'Publish the docs', session_id: 'hidden-wait', pending: { approval: approval('ap1'), clarify: null, approval_count: 1, clarify_count: 0 } }),
  ]);
  render(App, { backend: f.api, armDelayMs: 0 });
  // Up: the chat is open with its tasks listed (a busy one with its stream replayed).
  await waitFor(() => {
    expect(screen.getByRole('button', { name: 't-p' }).getAttribute('aria-current')).toBe('page');
    expect(row('wait')).not.toBeNull();
    if (opts.busy) expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
  });
  const composer = screen.getByLabelText('Message') as HTMLTextAreaElement;
  return { f, composer };
}

const row = (id: string) => document.querySelector(`[data-task="${id}"]`) as HTMLElement;

describe('the task panel', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lists the tasks with status, queue position and elapsed time, and follows the event', async () => {
    // Elapsed times read the clock: it stands still here, so the running task has run
    // 65 s however long the machine takes to draw it.
    vi.useFakeTimers({ toFake: ['Date'] });
    const { f } = await app();
    const panel = screen.getByRole('region', { name: 'Background tasks' });
    expect(within(panel).getByText('2 running · 1 queued · 1 waiting for you')).toBeTruthy();
    expect(within(row('q1')).getByText('Queued (#1)')).toBeTruthy();
    expect(within(row('run')).getByText('Running')).toBeTruthy();
    expect(row('run').textContent).toContain('1:05');
    expect(within(row('done')).getByText('Completed')).toBeTruthy();
    expect(within(row('done')).getByText('0:30')).toBeTruthy();
    // The preview is text, never HTML.
    expect(row('done').querySelector('b')).toBeNull();
    expect(row('done').textContent).toContain('Three issues <b>open</b>');
    f.hooks.tasks({ parent_session_id: 'p', tasks: [task('q1', 'p', { prompt: 'Bump the version', status: 'failed', error: 'Model not found: no such model', ended_at: 2000 })] });
    await waitFor(() => expect(row('run')).toBeNull());
    expect(within(row('q1')).getByText('Failed')).toBeTruthy();
    expect(within(row('q1')).getByText('Model not found: no such model')).toBeTruthy();
  });

  it('collapses and expands', async () => {
    const user = userEvent.setup();
    await app();
    const head = screen.getByRole('button', { name: /Background tasks/ });
    expect(head.getAttribute('aria-expanded')).toBe('true');
    await user.click(head);
    expect(head.getAttribute('aria-expanded')).toBe('false');
    expect(row('run')).toBeNull();
    await user.click(head);
    expect(row('run')).not.toBeNull();
  });

  it('Show result renders the whole answer through the sanitiser; Stop and Dismiss', async () => {
    const user = userEvent.setup();
    const { f } = await app();
    f.api.getBackgroundTaskResult.mockResolvedValueOnce({
      task_id: 'done', session_id: 'h', status: 'completed', prompt: 'x', text: '## Open issues\n\n<img src=x onerror=alert(1)> **three**', error: '', ended_at: 1,
    });
    await user.click(within(row('done')).getByRole('button', { name: 'Show result' }));
    const result = await screen.findByRole('region', { name: 'Result of Summarise open issues' });
    expect(result.querySelector('h2')?.textContent).toBe('Open issues');
    expect(result.querySelector('strong')?.textContent).toBe('three');
    expect(result.querySelector('img')).toBeNull();
    await user.click(within(row('done')).getByRole('button', { name: 'Hide result' }));
    expect(screen.queryByRole('region', { name: 'Result of Summarise open issues' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Stop task: Update the changelog' }));
    await waitFor(() => expect(f.api.stopBackgroundTask).toHaveBeenCalledWith('run'));
    await user.click(screen.getByRole('button', { name: 'Dismiss task: Summarise open issues' }));
    await waitFor(() => {
      expect(f.api.dismissBackgroundTask).toHaveBeenCalledWith('done');
      expect(row('done')).toBeNull();
    });
  });

  it('a task’s approval card is in the panel, answered by a click with the hidden session, never by Enter in the composer', async () => {
    const user = userEvent.setup();
    const { f, composer } = await app({ busy: true });
    const card = row('wait').querySelector('[data-card="approval"]') as HTMLElement;
    expect(card).not.toBeNull();
    // No YOLO switch on a task's card.
    expect(within(card).queryByText(/YOLO/)).toBeNull();
    await user.click(composer);
    await user.type(composer, 'keep going{Enter}');
    await user.keyboard('{Control>}{Enter}{/Control}');
    expect(f.api.respondApproval).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(composer);
    await user.click(within(card).getByRole('button', { name: 'Allow once' }));
    await waitFor(() => expect(f.api.respondApproval).toHaveBeenCalledWith('hidden-wait', 'ap1', 'once'));
    // The click's answer is the first and only one: the keys before it answered nothing.
    expect(f.api.respondApproval).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(row('wait').querySelector('[data-card="approval"]')).toBeNull());
  });
});

describe('/background, Run in background and /btw in the composer', () => {
  it('/background alone shows a hint and keeps the text; /btw alone does nothing', async () => {
    const user = userEvent.setup();
    const { f, composer } = await app();
    await user.type(composer, '/background{Enter}');
    expect(await screen.findByText(/Type what the task should do after \/background/)).toBeTruthy();
    expect(composer.value).toBe('/background');
    await user.clear(composer);
    await user.type(composer, '/btw{Enter}');
    expect(composer.value).toBe('/btw');
    expect(f.api.askSideQuestion).not.toHaveBeenCalled();
    expect(f.api.startTurn).not.toHaveBeenCalled();
  });

  it('Run in background starts a task with the composer text and clears it', async () => {
    const user = userEvent.setup();
    const { f, composer } = await app();
    await user.type(composer, 'Check the links in the docs');
    await user.click(screen.getByRole('button', { name: 'Run in background' }));
    await waitFor(() => {
      expect(f.api.startBackgroundTask).toHaveBeenCalledWith('p', 'Check the links in the docs');
      expect(composer.value).toBe('');
    });
    expect(f.api.startTurn).not.toHaveBeenCalled();
  });

  it('/btw opens the side panel beside the running turn; the composer stays usable', async () => {
    const user = userEvent.setup();
    const { f, composer } = await app({ busy: true });
    await user.type(composer, '/btw what is this file for?{Enter}');
    const panel = await screen.findByRole('complementary', { name: 'Side question' });
    expect(within(panel).getByText('what is this file for?')).toBeTruthy();
    expect(within(panel).getByText('Side answers are not saved.')).toBeTruthy();
    f.emit(frame('copy1', 'sq1', 1, 'token', { text: 'It configures **the build**.' }));
    f.emit(frame('p', 'st', 2, 'token', { text: 'Main turn text.' }));
    await waitFor(() => expect(panel.querySelector('strong')?.textContent).toBe('the build'));
    expect(panel.textContent).not.toContain('Main turn text.');
    expect(await screen.findByText('Main turn text.')).toBeTruthy();
    expect(composer.disabled).toBe(false);
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    await user.click(within(panel).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(f.api.cancelSideQuestion).toHaveBeenCalledWith('side1'));
    expect(f.api.cancel).not.toHaveBeenCalled();
    f.emit(frame('copy1', 'sq1', 2, 'cancel', { partial: true }));
    f.emit(frame('copy1', 'sq1', 3, 'stream_end'));
    await waitFor(() => expect(within(panel).queryByRole('button', { name: 'Cancel' })).toBeNull());
    await user.click(within(panel).getByRole('button', { name: 'Close' }));
    await waitFor(() => expect(screen.queryByRole('complementary', { name: 'Side question' })).toBeNull());
  });
});

describe('Settings: background tasks at once', () => {
  it('reads the limit and saves a new one with the form', async () => {
    const user = userEvent.setup();
    const { f } = await app();
    f.api.saveSettings.mockImplementation(async () => (await f.api.getSettings()));
    await user.click(screen.getByRole('button', { name: /Settings/ }));
    const input = (await screen.findByLabelText('Background tasks at once')) as HTMLInputElement;
    await waitFor(() => {
      expect(input.value).toBe('3');
      expect(input.disabled).toBe(false);
    });
    await user.clear(input);
    await user.type(input, '5');
    await user.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(f.api.setMaxBackgroundTasks).toHaveBeenCalledWith(5));
  });
});
