import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, frame, message, session, task } from '../test/fakeApi';
import { answered, until } from '../test/until';
import { ApiError } from './api';
import { AppStore } from './store.svelte';
import { BACKGROUND_HINT } from './tasks';

afterEach(() => {
  vi.useRealTimers();
});

const approval = (id: string, count = 1) => ({
  approval_id: id, command: 'rm -rf dist', description: 'Deletes files', pattern: 'recursive_delete', timeout_s: 300, expires_at: 0, pending_count: count,
});

async function openStore(opts: { busy?: boolean } = {}) {
  const f = fakeApi();
  f.sessions.set('p', session('p', 5, opts.busy ? { active_stream_id: 'st' } : {}));
  f.transcripts.set('p', [message('u1', 'user', 'hi', { stream_id: 'st', position: 0 })]);
  if (opts.busy) f.journals.set('st', [frame('p', 'st', 1, 'run_status', { status: 'working' })]);
  const store = new AppStore(f.api);
  await store.start();
  // Open: its rows and tasks read; a busy one's stream replayed and its cards read.
  await until(() => {
    expect(store.activeId).toBe('p');
    expect(store.messages).toHaveLength(1);
    expect(f.api.listBackgroundTasks).toHaveBeenCalledWith('p');
    if (opts.busy) {
      expect(store.live?.lastSeq).toBe(1);
      expect(f.api.getPending).toHaveBeenCalledWith('p');
    }
  });
  await answered(f.api.listBackgroundTasks);
  await answered(f.api.getPending);
  return { f, store };
}

describe('AppStore: background tasks', () => {
  it('lists the open session’s tasks; each background_tasks event replaces the list', async () => {
    const f = fakeApi();
    f.sessions.set('p', session('p', 5));
    f.tasks.set('p', [task('t1', 'p'), task('t2', 'p', { status: 'queued', queue_position: 1, started_at: 0 })]);
    const store = new AppStore(f.api);
    await store.start();
    await until(() => {
      expect(f.api.listBackgroundTasks).toHaveBeenCalledWith('p');
      expect(store.background.activeTasks.map((t) => [t.id, t.status, t.queue_position])).toEqual([['t1', 'running', 0], ['t2', 'queued', 1]]);
    });
    // The event is the whole list: t1 is gone (dismissed elsewhere), t2 runs, t3 waits as #2.
    f.hooks.tasks({
      parent_session_id: 'p',
      tasks: [task('t2', 'p', { status: 'running' }), task('t3', 'p', { status: 'queued', queue_position: 2, started_at: 0 })],
    });
    expect(store.background.activeTasks.map((t) => [t.id, t.status, t.queue_position])).toEqual([['t2', 'running', 0], ['t3', 'queued', 2]]);
    // Another session's event does not touch this one.
    f.hooks.tasks({ parent_session_id: 'other', tasks: [task('x', 'other')] });
    expect(store.background.activeTasks.map((t) => t.id)).toEqual(['t2', 't3']);
    expect(store.background.tasks.other.map((t) => t.id)).toEqual(['x']);
  });

  it('a listing that answers after an event does not replace the newer list', async () => {
    const { f, store } = await openStore();
    let answer!: (v: ReturnType<typeof task>[]) => void;
    f.api.listBackgroundTasks.mockImplementationOnce(() => new Promise((r) => (answer = r)));
    const loading = store.background.loadTasks('p');
    f.hooks.tasks({ parent_session_id: 'p', tasks: [task('new', 'p')] });
    answer([task('old', 'p')]);
    await loading;
    expect(store.background.activeTasks.map((t) => t.id)).toEqual(['new']);
  });

  it('/background <prompt> starts a task of the open session and shows it at once', async () => {
    const { f, store } = await openStore();
    expect(await store.composer.send('/background update the changelog')).toBe(true);
    expect(f.api.startBackgroundTask).toHaveBeenCalledWith('p', 'update the changelog');
    expect(f.api.startTurn).not.toHaveBeenCalled();
    expect(f.api.steer).not.toHaveBeenCalled();
    expect(store.background.activeTasks.map((t) => t.prompt)).toEqual(['update the changelog']);
    expect(store.background.tasksOpen).toBe(true);
  });

  it('/background alone shows a hint and sends nothing; /btw alone does nothing', async () => {
    const { f, store } = await openStore();
    expect(await store.composer.send('/background')).toBe(false);
    expect(store.notices.info).toBe(BACKGROUND_HINT);
    expect(await store.composer.send('/btw  ')).toBe(false);
    expect(f.api.startBackgroundTask).not.toHaveBeenCalled();
    expect(f.api.askSideQuestion).not.toHaveBeenCalled();
    expect(f.api.startTurn).not.toHaveBeenCalled();
    expect(f.api.steer).not.toHaveBeenCalled();
  });

  it('Run in background sends the composer text as the prompt', async () => {
    const { f, store } = await openStore({ busy: true });
    expect(await store.background.runInBackground('  write the release notes ')).toBe(true);
    expect(f.api.startBackgroundTask).toHaveBeenCalledWith('p', 'write the release notes');
    expect(f.api.steer).not.toHaveBeenCalled();
  });

  it('a refused start goes to the banner', async () => {
    const { f, store } = await openStore();
    f.api.startBackgroundTask.mockRejectedValueOnce(new ApiError('Talaria is quitting: start it again to run this'));
    expect(await store.composer.send('/background x')).toBe(false);
    expect(store.notices.banner).toMatchObject({ label: 'Could not start the background task' });
  });

  it('a task’s approval is answered with its hidden session id, and the card goes until the next list', async () => {
    const { f, store } = await openStore();
    const waitingTask = task('t1', 'p', { session_id: 'hidden-1', pending: { approval: approval('a1', 2), clarify: null, approval_count: 2, clarify_count: 0 } });
    f.hooks.tasks({ parent_session_id: 'p', tasks: [waitingTask] });
    const t = store.background.activeTasks[0];
    expect(store.background.taskApproval(t)?.approval_id).toBe('a1');
    expect(store.needsYou('p')).toBe(true);
    expect(await store.background.respondTaskApproval(t, 'a1', 'once')).toBe(true);
    expect(f.api.respondApproval).toHaveBeenCalledWith('hidden-1', 'a1', 'once');
    expect(store.background.taskApproval(store.background.activeTasks[0])).toBeNull();
    // The host's next list: the second approval of the same hidden session.
    f.hooks.tasks({ parent_session_id: 'p', tasks: [{ ...waitingTask, pending: { approval: approval('a2'), clarify: null, approval_count: 1, clarify_count: 0 } }] });
    expect(store.background.taskApproval(store.background.activeTasks[0])?.approval_id).toBe('a2');
    // The same approval id in another task's hidden session is another card.
    f.hooks.tasks({ parent_session_id: 'p', tasks: [task('t2', 'p', { session_id: 'hidden-2', pending: { approval: approval('a1'), clarify: null, approval_count: 1, clarify_count: 0 } })] });
    expect(store.background.taskApproval(store.background.activeTasks[0])?.approval_id).toBe('a1');
    // The open session's own dock is not involved.
    expect(store.cards.approval).toBeNull();
  });

  it('a stale task answer drops the card and re-lists; another error stays on the card', async () => {
    const { f, store } = await openStore();
    const t = task('t1', 'p', { session_id: 'h1', pending: { approval: approval('a1'), clarify: null, approval_count: 1, clarify_count: 0 } });
    f.tasks.set('p', [t]);
    f.hooks.tasks({ parent_session_id: 'p', tasks: [t] });
    f.api.respondApproval.mockRejectedValueOnce(new ApiError('the agent is not running'));
    expect(await store.background.respondTaskApproval(store.background.activeTasks[0], 'a1', 'deny')).toBe(false);
    expect(store.cards.cardError).toEqual({ id: 'a1', message: 'the agent is not running' });
    expect(store.background.taskApproval(store.background.activeTasks[0])).not.toBeNull();
    f.api.respondApproval.mockRejectedValueOnce(new ApiError('already answered', 'stale'));
    f.api.listBackgroundTasks.mockClear();
    expect(await store.background.respondTaskApproval(store.background.activeTasks[0], 'a1', 'deny')).toBe(false);
    expect(store.background.taskApproval(store.background.activeTasks[0])).toBeNull();
    expect(f.api.listBackgroundTasks).toHaveBeenCalledWith('p');
  });

  it('clarify and vault cards of a task go to the hidden session too; the value is not kept', async () => {
    const { f, store } = await openStore();
    const vault = { clarify_id: 'v1', kind: 'vault', question: '', choices: [], multi_select: false, questions: [], timeout_s: 300, expires_at: 0, pending_count: 1, name: 'NPM_TOKEN' };
    const t = task('t1', 'p', { session_id: 'h1', pending: { approval: null, clarify: vault as never, approval_count: 0, clarify_count: 1 } });
    f.hooks.tasks({ parent_session_id: 'p', tasks: [t] });
    const card = store.background.taskClarify(store.background.activeTasks[0])!;
    expect(card.kind).toBe('vault');
    expect(await store.background.respondTaskVault(store.background.activeTasks[0], card, { value: 's3cret', use_saved: false, decline: false }, false)).toBe(true);
    expect(f.api.respondVault).toHaveBeenCalledWith('h1', 'v1', { value: 's3cret', use_saved: false, decline: false }, false);
    expect(store.notices.info).toBe('Secret NPM_TOKEN provided to the background task');
    expect(JSON.stringify(store.background.tasks)).not.toContain('s3cret');
    expect(store.background.taskClarify(store.background.activeTasks[0])).toBeNull();
    await store.background.respondTaskClarify(store.background.activeTasks[0], 'c9', ['yes']);
    expect(f.api.respondClarify).toHaveBeenCalledWith('h1', 'c9', ['yes']);
  });

  it('Show result reads the whole result; Stop and Dismiss call the host', async () => {
    const { f, store } = await openStore();
    f.tasks.set('p', [task('t1', 'p', { status: 'completed', result_preview: 'All **done**', ended_at: 2000 })]);
    await store.background.loadTasks('p');
    await store.background.showTaskResult('t1');
    expect(store.background.taskResults.t1).toMatchObject({ loading: false, result: { text: 'All **done**' } });
    store.background.hideTaskResult('t1');
    expect(store.background.taskResults.t1).toBeUndefined();
    await store.background.stopTask('t1');
    expect(f.api.stopBackgroundTask).toHaveBeenCalledWith('t1');
    await store.background.dismissTask('t1');
    expect(f.api.dismissBackgroundTask).toHaveBeenCalledWith('t1');
    expect(store.background.activeTasks).toEqual([]);
    f.api.stopBackgroundTask.mockRejectedValueOnce(new ApiError('that background task no longer exists'));
    expect(await store.background.stopTask('gone')).toBe(false);
    expect(store.background.taskError).toEqual({ id: 'gone', message: 'Could not stop the task: that background task no longer exists' });
  });

  it('frames of a task’s hidden session never reach the chat', async () => {
    const { f, store } = await openStore();
    f.hooks.tasks({ parent_session_id: 'p', tasks: [task('t1', 'p', { session_id: 'h1', stream_id: 'hs' })] });
    f.emit(frame('h1', 'hs', 1, 'approval', approval('a1')));
    f.emit(frame('h1', 'hs', 2, 'token', { text: 'hidden' }));
    expect(store.live).toBeNull();
    expect(store.cards.waitingFor.h1).toBeUndefined();
  });

  it('the limit setting reads and saves through the host', async () => {
    const { f, store } = await openStore();
    await store.background.loadMaxTasks();
    expect(store.background.maxTasks).toBe(3);
    await store.background.saveMaxTasks(5);
    expect(f.api.setMaxBackgroundTasks).toHaveBeenCalledWith(5);
    expect(store.background.maxTasks).toBe(5);
    await expect(store.background.saveMaxTasks(11)).rejects.toThrow('between 1 and 10');
    expect(store.background.maxTasks).toBe(5);
  });
});

describe('AppStore: side questions', () => {
  it('/btw asks beside a running turn and follows only the copy’s frames until stream_end', async () => {
    const { f, store } = await openStore({ busy: true });
    expect(await store.composer.send('/btw what does the parser do?')).toBe(true);
    expect(f.api.askSideQuestion).toHaveBeenCalledWith('p', 'what does the parser do?');
    // It neither steers nor starts a turn: the running turn goes on.
    expect(f.api.steer).not.toHaveBeenCalled();
    expect(f.api.startTurn).not.toHaveBeenCalled();
    expect(store.background.side?.q?.session_id).toBe('copy1');
    f.emit(frame('copy1', 'sq1', 1, 'token', { text: 'It reads ' }));
    f.emit(frame('p', 'st', 2, 'token', { text: 'main answer' }));
    f.emit(frame('other', 'sq1', 2, 'token', { text: 'WRONG' }));
    f.emit(frame('copy1', 'sq1', 2, 'token', { text: 'the config.' }));
    expect(store.background.side?.stream?.text).toBe('It reads the config.');
    // The main turn got its own frame and nothing of the side answer.
    expect(store.live?.text).toBe('main answer');
    expect(store.busy).toBe(true);
    f.emit(frame('copy1', 'sq1', 3, 'done', { usage: null, duration_seconds: 1, tps: 1, terminal_state: 'completed', tool_limit_reached: false }));
    f.emit(frame('copy1', 'sq1', 4, 'stream_end'));
    expect(store.background.side?.stream?.ended).toBe(true);
    f.emit(frame('copy1', 'sq1', 5, 'token', { text: ' late' }));
    expect(store.background.side?.stream?.text).toBe('It reads the config.');
    // The copy is not a session of the sidebar and is not re-read.
    expect(f.api.getTranscript).not.toHaveBeenCalledWith('copy1', expect.anything(), expect.anything());
    expect(f.api.getTranscriptFrom).not.toHaveBeenCalledWith('copy1', expect.anything(), expect.anything());
    await store.background.closeSide();
    expect(store.background.side).toBeNull();
    expect(f.api.cancelSideQuestion).not.toHaveBeenCalled();
  });

  it('frames that come before AskSideQuestion answers are kept for the panel', async () => {
    const { f, store } = await openStore();
    f.api.askSideQuestion.mockImplementationOnce(async (sid: string, question: string) => {
      f.emit(frame('copy1', 'sq1', 1, 'token', { text: 'Early ' }));
      return { id: 'side1', parent_session_id: sid, session_id: 'copy1', stream_id: 'sq1', question };
    });
    await store.composer.send('/btw quick?');
    f.emit(frame('copy1', 'sq1', 2, 'token', { text: 'and late.' }));
    expect(store.background.side?.stream?.text).toBe('Early and late.');
  });

  it('Cancel stops the answer; Close while it runs stops it too; a failed ask shows why', async () => {
    const { f, store } = await openStore();
    await store.composer.send('/btw one');
    f.emit(frame('copy1', 'sq1', 1, 'token', { text: 'part' }));
    await store.background.cancelSide();
    expect(f.api.cancelSideQuestion).toHaveBeenCalledWith('side1');
    f.emit(frame('copy1', 'sq1', 2, 'cancel', { partial: true }));
    expect(store.background.side?.stream?.cancelled).toBe(true);
    expect(store.background.side?.stream?.text).toBe('part');
    await store.composer.send('/btw two');
    f.api.cancelSideQuestion.mockClear();
    await store.background.closeSide();
    expect(f.api.cancelSideQuestion).toHaveBeenCalledWith('side1');
    f.api.askSideQuestion.mockRejectedValueOnce(new ApiError('the agent is not running'));
    expect(await store.composer.send('/btw three')).toBe(false);
    expect(store.background.side?.error).toBe('the agent is not running');
  });
});

describe('AppStore: a stopped turn’s unsent steers (kept in the draft by the host)', () => {
  it('re-reads the draft the host extended: shown once, nothing saved back, no doubling', async () => {
    const { f, store } = await openStore({ busy: true });
    f.drafts.set('p', 'my notes');
    store.draft = 'my notes';
    await store.drafts.flush('p');
    f.api.saveDraft.mockClear();
    // The host kept the two unsent steers after the saved draft, then sent the cancel.
    f.drafts.set('p', 'my notes\n\nuse the new API\n\nand the tests');
    f.emit(frame('p', 'st', 2, 'cancel', { partial: true, unsent_steers: ['use the new API', 'and the tests'] }));
    await until(() => {
      expect(f.api.getDraft).toHaveBeenLastCalledWith('p');
      expect(store.draft).toBe('my notes\n\nuse the new API\n\nand the tests');
    });
    // The draft is shown once the host's answer is merged, and whether to save is decided
    // then: the merge equals the host's draft.
    expect(f.api.saveDraft).not.toHaveBeenCalled();
    // A replayed cancel of the same stream changes nothing: not even a re-read (a restore
    // reads the host's draft before anything else).
    const reads = f.api.getDraft.mock.calls.length;
    f.emit(frame('p', 'st', 2, 'cancel', { partial: true, unsent_steers: ['use the new API', 'and the tests'] }));
    expect(f.api.getDraft).toHaveBeenCalledTimes(reads);
    expect(store.draft).toBe('my notes\n\nuse the new API\n\nand the tests');
  });

  it('merges with what the user typed since the last save, and saves the merge', async () => {
    const { f, store } = await openStore({ busy: true });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    f.drafts.set('p', 'old\n\nsteer one');
    store.draft = 'old plus typing';
    f.emit(frame('p', 'st', 2, 'cancel', { partial: false, unsent_steers: ['steer one'] }));
    await vi.advanceTimersByTimeAsync(0);
    await vi.advanceTimersByTimeAsync(0);
    expect(store.draft).toBe('old plus typing\n\nsteer one');
    expect(f.drafts.get('p')).toBe('old plus typing\n\nsteer one');
    // The debounced save of the text before the merge never lands over it.
    await vi.advanceTimersByTimeAsync(2000);
    expect(f.drafts.get('p')).toBe('old plus typing\n\nsteer one');
    expect(f.api.saveDraft).toHaveBeenCalledTimes(1);
  });

  it('typing during the re-read is kept', async () => {
    const { f, store } = await openStore({ busy: true });
    let answer!: (d: { session_id: string; text: string; updated_at: number }) => void;
    f.api.getDraft.mockImplementationOnce(() => new Promise((r) => (answer = r)));
    f.emit(frame('p', 'st', 2, 'cancel', { partial: false, unsent_steers: ['s1'] }));
    store.draft = 'typed meanwhile';
    answer({ session_id: 'p', text: 's1', updated_at: 1 });
    await until(() => expect(store.draft).toBe('typed meanwhile\n\ns1'));
  });

  it('a session not open: its draft is re-read so reopening it shows the steers', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1, { active_stream_id: 'sb' }));
    const store = new AppStore(f.api);
    await store.start();
    f.drafts.set('b', 'kept\n\nunread');
    f.emit(frame('b', 'sb', 7, 'cancel', { partial: false, unsent_steers: ['unread'] }));
    // b's draft was re-read and, equal to the merge, not saved back.
    await until(() => expect(f.api.getDraft).toHaveBeenCalledWith('b'));
    await answered(f.api.getDraft);
    expect(f.drafts.get('b')).toBe('kept\n\nunread');
    expect(f.api.saveDraft).not.toHaveBeenCalled();
    await store.openSession('b');
    await until(() => expect(store.draft).toBe('kept\n\nunread'));
  });
});

describe('AppStore: steer answers', () => {
  it('a steer that started a turn shows its user message at once', async () => {
    const { f, store } = await openStore();
    const um = message('u9', 'user', 'go on', { stream_id: 'st9', position: 1 });
    f.api.steer.mockResolvedValueOnce({ steer_id: '', stream_id: 'st9', delivery: 'turn', user_message: um });
    // The window thinks a turn runs (so Enter steers); the host had none and started one.
    f.sessions.get('p')!.active_stream_id = 'gone';
    await store.list.refreshSessions();
    expect(await store.composer.send('go on')).toBe(true);
    expect(store.live?.streamId).toBe('st9');
    expect(store.live?.userMessage?.content).toBe('go on');
  });

  it('SteerNow refused as still on its way is a short notice, not an error', async () => {
    const { f, store } = await openStore({ busy: true });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    await store.composer.send('later');
    f.api.steerNow.mockRejectedValueOnce(new ApiError('this message is still on its way to the agent; try Send now again in a moment', 'steer_in_flight'));
    expect(await store.steering.steerNow('steer1')).toBe(false);
    expect(store.notices.banner).toBeNull();
    expect(store.notices.info).toMatch(/still on its way/);
    await vi.advanceTimersByTimeAsync(7000);
    expect(store.notices.info).toBeNull();
  });
});
