import { describe, expect, it } from 'vitest';
import { fakeApi, frame, message, session, usage0 } from '../test/fakeApi';
import { answered, until } from '../test/until';
import { ApiError } from './api';
import { AppStore, sortSessions } from './store.svelte';

describe('AppStore', () => {
  it('starts with sessions newest first and opens the newest', async () => {
    const f = fakeApi();
    f.sessions.set('old', session('old', 1));
    f.sessions.set('new', session('new', 5));
    f.transcripts.set('new', [message('a', 'user', 'hi')]);
    const store = new AppStore(f.api);
    await store.start();
    await until(() => {
      expect(store.list.sessions.map((s) => s.id)).toEqual(['new', 'old']);
      expect(store.activeId).toBe('new');
      expect(store.messages.map((m) => m.id)).toEqual(['a']);
      // The status is read apart from the sessions: either may come first.
      expect(store.supervision.sidecar?.state).toBe('ready');
    });
    expect(store.config.showFirstRun).toBe(false);
  });

  it('shows the first-run screen when the provider check fails', async () => {
    const f = fakeApi();
    f.api.checkProvider.mockResolvedValue({ ok: false, message: 'refused', hint: 'start ollama', models: [] });
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.config.showFirstRun).toBe(true));
    store.config.firstRunDismissed = true;
    expect(store.config.showFirstRun).toBe(false);
  });

  it('runs a turn: live text, then the saved rows after stream_end', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const store = new AppStore(f.api);
    await store.start();
    expect(await store.composer.send('hello')).toBe(true);
    expect(f.api.startTurn).toHaveBeenCalledWith('s', 'hello');
    expect(store.busy).toBe(true);
    expect(store.live?.userMessage?.content).toBe('hello');

    f.emit(frame('s', 'st1', 1, 'user_message', { message: store.live!.userMessage }));
    f.emit(frame('s', 'st1', 2, 'token', { text: 'Hi ' }));
    f.emit(frame('s', 'st1', 3, 'token', { text: 'there' }));
    f.emit(frame('s', 'st1', 4, 'title', { title: 'Greeting' }));
    expect(store.live?.text).toBe('Hi there');
    expect(store.list.sessions[0].title).toBe('Greeting');

    f.transcripts.get('s')!.push(message('a1', 'assistant', 'Hi there', { stream_id: 'st1' }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st1', 5, 'done', { usage: { ...usage0, output_tokens: 2 }, duration_seconds: 1, tps: 2, terminal_state: 'completed' }));
    f.emit(frame('s', 'st1', 6, 'stream_end'));
    await until(() => {
      expect(store.live).toBeNull();
      expect(store.messages.map((m) => m.id)).toEqual(['u-hello', 'a1']);
    });
    expect(store.busy).toBe(false);
    expect(store.stream.lastRuns.s).toEqual({ usage: { ...usage0, output_tokens: 2 }, tps: 2, duration_seconds: 1 });
    expect(store.stream.unsavedStreams).toEqual([]);
    expect(store.notices.banner).toBeNull();
  });

  it('keeps an apperror as the banner after the stream ends', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const store = new AppStore(f.api);
    await store.start();
    await store.composer.send('x');
    f.emit(frame('s', 'st1', 1, 'user_message', { message: message('u-x', 'user', 'x') }));
    f.emit(frame('s', 'st1', 2, 'apperror', { type: 'rate_limit', label: 'Rate limited', message: 'slow down', hint: 'wait' }));
    f.emit(frame('s', 'st1', 3, 'stream_end'));
    await until(() => expect(store.notices.banner).toEqual({ type: 'rate_limit', label: 'Rate limited', message: 'slow down', hint: 'wait' }));
    store.notices.dismissBanner();
    expect(store.notices.banner).toBeNull();
  });

  it('shows why a message was not sent and keeps the composer text', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    f.api.startTurn.mockRejectedValue(new ApiError('the agent is not running'));
    const store = new AppStore(f.api);
    await store.start();
    expect(await store.composer.send('x')).toBe(false);
    expect(store.notices.banner?.message).toBe('the agent is not running');
    expect(store.live).toBeNull();
  });

  it('creates a session when sending with none open', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    expect(store.activeId).toBeNull();
    expect(await store.composer.send('first')).toBe(true);
    expect(f.api.newSession).toHaveBeenCalled();
    expect(store.activeId).toBe('n1');
  });

  it('New chat makes a new chat when the open one has messages it could not load', async () => {
    // The open chat's rows failed to load (the view is empty), but it has messages: it is
    // not the empty chat New chat may reuse, and a message typed next must not go to it.
    const f = fakeApi();
    f.sessions.set('s', session('s', 1, { message_count: 3 }));
    f.api.getTranscript.mockRejectedValueOnce(new ApiError('database is locked'));
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.notices.banner?.message).toBe('database is locked'));
    expect(store.messages).toEqual([]);
    const made = await store.newSession();
    expect(f.api.newSession).toHaveBeenCalled();
    expect(made?.id).not.toBe('s');
    expect(store.activeId).toBe(made?.id);
  });

  it('replays an active stream when a busy session is opened', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1, { active_stream_id: 'st9' }));
    f.transcripts.set('s', [message('u1', 'user', 'q')]);
    f.journals.set('st9', [
      frame('s', 'st9', 1, 'user_message', { message: message('u1', 'user', 'q') }),
      frame('s', 'st9', 2, 'token', { text: 'Par' }),
    ]);
    const store = new AppStore(f.api);
    await store.start();
    await until(() => {
      expect(f.api.streamSince).toHaveBeenCalledWith('st9', 0);
      expect(store.live?.text).toBe('Par');
    });
    expect(store.busy).toBe(true);
    f.emit(frame('s', 'st9', 2, 'token', { text: 'Par' })); // overlap: ignored
    f.emit(frame('s', 'st9', 3, 'token', { text: 'tial' }));
    expect(store.live?.text).toBe('Partial');
  });

  it('cancels the live stream', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const store = new AppStore(f.api);
    await store.start();
    await store.composer.send('x');
    await store.composer.cancel();
    expect(f.api.cancel).toHaveBeenCalledWith('st1');
  });

  it('marks other sessions busy from their frames and idle at stream_end', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    const store = new AppStore(f.api);
    await store.start();
    f.emit(frame('b', 'sb', 3, 'token', { text: 'x' }));
    expect(store.list.sessions.find((s) => s.id === 'b')?.active_stream_id).toBe('sb');
    expect(store.live).toBeNull();
    f.emit(frame('b', 'sb', 4, 'stream_end'));
    expect(store.list.sessions.find((s) => s.id === 'b')?.active_stream_id).toBe('');
  });

  it('follows sidecar status events', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    f.hooks.sidecar({ state: 'restarting', runtime: 'builtin', agent_version: '', sidecar_version: '', attempt: 2, next_retry_s: 4, error: 'crash', hint: '' });
    expect(store.supervision.sidecar?.state).toBe('restarting');
  });

  it('opens the session the host asks for', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    const store = new AppStore(f.api);
    await store.start();
    expect(store.activeId).toBe('a');
    f.hooks.open('b');
    await until(() => expect(store.activeId).toBe('b'));
  });

  it('collapses overlapping re-lists into one more call', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    f.api.listSessionsPage.mockClear();
    const a = store.list.refreshSessions();
    void store.list.refreshSessions();
    void store.list.refreshSessions();
    // `a` settles after the listing and its one collapsed re-list.
    await a;
    expect(f.api.listSessionsPage).toHaveBeenCalledTimes(2);
  });
});

describe('sortSessions', () => {
  it('puts the most recently updated first', () => {
    expect(sortSessions([session('a', 1), session('b', 3), session('c', 2)]).map((s) => s.id)).toEqual(['b', 'c', 'a']);
  });
});

describe('AppStore: cards', () => {
  const approval = (id: string, pending = 1) => ({
    approval_id: id, command: 'rm -rf build', description: 'recursive delete', pattern: 'recursive_delete', timeout_s: 300, expires_at: 0, pending_count: pending,
  });
  const vault = (id: string) => ({
    clarify_id: id, kind: 'vault', question: '', choices: [], multi_select: false, questions: [], timeout_s: 60, expires_at: 0, pending_count: 1,
    name: 'GITHUB_TOKEN', reason: 'push', saved_available: false, keyring_available: true, keyring_error: '',
  });

  async function busySession() {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1, { active_stream_id: 'st' }));
    f.journals.set('st', [frame('s', 'st', 1, 'run_status', { status: 'working' })]);
    const store = new AppStore(f.api);
    await store.start();
    // Opened: its stream replayed from the journal and the host's pending cards read.
    await until(() => {
      expect(store.live?.streamId).toBe('st');
      expect(store.live?.lastSeq).toBe(1);
      expect(f.api.getPending).toHaveBeenCalledWith('s');
    });
    await answered(f.api.getPending);
    return { f, store };
  }

  it('shows the head approval and how many wait; an answer withdraws it at once', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1', 1)));
    f.emit(frame('s', 'st', 3, 'approval', approval('a2', 2)));
    expect(store.cards.approval?.approval_id).toBe('a1');
    expect(store.cards.approvalsWaiting).toBe(2);
    expect(await store.cards.respondApproval('a1', 'once')).toBe(true);
    expect(f.api.respondApproval).toHaveBeenCalledWith('s', 'a1', 'once');
    expect(store.cards.approval?.approval_id).toBe('a2');
    // The host's resolve arriving afterwards changes nothing more.
    f.emit(frame('s', 'st', 4, 'approval_resolved', { approval_id: 'a1', reason: 'answered', choice: 'once', pending_count: 1 }));
    expect(store.cards.approval?.approval_id).toBe('a2');
    expect(store.cards.approvalsWaiting).toBe(1);
  });

  it('a stale answer removes the card and re-reads the queue from the host', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1', 2)));
    f.api.respondApproval.mockRejectedValueOnce(new ApiError('this approval (a1) is no longer waiting', 'stale'));
    f.pending.set('s', { approval: approval('a2', 1), clarify: null, approval_count: 1, clarify_count: 0, yolo: false });
    f.api.getPending.mockClear();
    expect(await store.cards.respondApproval('a1', 'deny')).toBe(false);
    expect(f.api.getPending).toHaveBeenCalledWith('s');
    expect(store.cards.approval?.approval_id).toBe('a2');
    expect(store.cards.cardNotice).toMatch(/already answered or has timed out/);
    expect(store.cards.cardError).toBeNull();
  });

  it('another failure keeps the card and shows the error on it', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    f.api.respondApproval.mockRejectedValueOnce(new ApiError('the agent is not running'));
    expect(await store.cards.respondApproval('a1', 'once')).toBe(false);
    expect(store.cards.approval?.approval_id).toBe('a1');
    expect(store.cards.cardError).toEqual({ id: 'a1', message: 'the agent is not running' });
    expect(store.cards.answering).toEqual([]);
  });

  it('opening a busy session merges GetPending (a window opened late) and reads YOLO', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1, { active_stream_id: 'st' }));
    f.journals.set('st', [frame('s', 'st', 1, 'run_status', { status: 'working' })]);
    f.pending.set('s', { approval: approval('a9'), clarify: null, approval_count: 3, clarify_count: 0, yolo: true });
    const store = new AppStore(f.api);
    await store.start();
    await until(() => {
      expect(store.cards.approval?.approval_id).toBe('a9');
      expect(store.cards.approvalsWaiting).toBe(3);
      expect(store.cards.activeYolo).toBe(true);
    });
  });

  it('YOLO from a card passes the card id; from the bar passes ""', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'approval', approval('a1')));
    expect(await store.cards.setYolo(true, 'a1')).toBe(true);
    expect(f.api.setYolo).toHaveBeenCalledWith('s', true, 'a1');
    expect(store.cards.activeYolo).toBe(true);
    // The card goes when the host lets it through.
    expect(store.cards.approval?.approval_id).toBe('a1');
    f.emit(frame('s', 'st', 3, 'approval_resolved', { approval_id: 'a1', reason: 'yolo', pending_count: 0 }));
    expect(store.cards.approval).toBeNull();
    expect(await store.cards.setYolo(false)).toBe(true);
    expect(f.api.setYolo).toHaveBeenLastCalledWith('s', false, '');
    expect(store.cards.activeYolo).toBe(false);
  });

  it('a vault answer keeps no trace of the value, only that it was provided', async () => {
    const SECRET = 'ghp_topsecret123';
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'clarify', vault('v1')));
    const card = store.cards.clarify!;
    expect(card.kind).toBe('vault');
    const r = await store.cards.respondVault(card, { value: SECRET, use_saved: false, decline: false }, true);
    expect(r).toEqual({ ok: true, kept: 'keychain' });
    expect(f.api.respondVault).toHaveBeenCalledWith('s', 'v1', { value: SECRET, use_saved: false, decline: false }, true);
    expect(store.cards.clarify).toBeNull();
    expect(store.cards.notes).toEqual(['Secret GITHUB_TOKEN provided (saved in the system keychain)']);
    const state = JSON.stringify({
      live: store.live, notes: store.cards.vaultNotes, error: store.cards.cardError, notice: store.cards.cardNotice, banners: store.notices.banners,
      pending: store.cards.idlePending, answering: store.cards.answering,
    });
    expect(state).not.toContain(SECRET);
  });

  it('clarify answers go out with the session and card ids', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'clarify', { clarify_id: 'c1', kind: 'clarify', question: 'q', choices: ['a'], multi_select: false, questions: [], timeout_s: 60, expires_at: 0, pending_count: 1 }));
    expect(await store.cards.respondClarify('c1', ['a'])).toBe(true);
    expect(f.api.respondClarify).toHaveBeenCalledWith('s', 'c1', ['a']);
    expect(store.cards.clarify).toBeNull();
  });

  it('keeps the todo list after the turn, and reads it from a saved transcript', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'todo_state', { todos: [{ id: '1', content: 'Build', status: 'in_progress' }] }));
    expect(store.stream.todos).toEqual([{ id: '1', content: 'Build', status: 'in_progress' }]);
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st', 3, 'stream_end'));
    await until(() => expect(store.live).toBeNull());
    expect(store.stream.todos).toEqual([{ id: '1', content: 'Build', status: 'in_progress' }]);

    const g = fakeApi();
    g.sessions.set('t', session('t', 1));
    g.transcripts.set('t', [message('x', 'tool', '{"todos":[{"id":"1","content":"Saved","status":"completed"}]}', { name: 'todo' })]);
    const other = new AppStore(g.api);
    await other.start();
    await until(() => expect(other.stream.todos).toEqual([{ id: '1', content: 'Saved', status: 'completed' }]));
  });

  it('marks another session that waits for the user, until its cards are settled', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    const store = new AppStore(f.api);
    await store.start();
    expect(store.activeId).toBe('a');
    f.emit(frame('b', 'sb', 1, 'approval', approval('x', 1)));
    expect(store.needsYou('b')).toBe(true);
    expect(store.needsYou('a')).toBe(false);
    f.emit(frame('b', 'sb', 2, 'clarify', vault('v')));
    f.emit(frame('b', 'sb', 3, 'approval_resolved', { approval_id: 'x', reason: 'timeout', pending_count: 0 }));
    expect(store.needsYou('b')).toBe(true);
    f.emit(frame('b', 'sb', 4, 'stream_end'));
    expect(store.needsYou('b')).toBe(false);
  });

  it('a vault answer the host did not take is handled like a stale card', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'clarify', vault('v1')));
    f.api.respondVault.mockResolvedValueOnce({ ok: false, kept: 'session' });
    expect(await store.cards.respondVault(store.cards.clarify!, { value: 'x', use_saved: false, decline: false }, false)).toBeNull();
    expect(store.cards.clarify).toBeNull();
    expect(store.cards.notes).toEqual([]);
    expect(store.cards.cardNotice).toMatch(/already answered/);
  });

  it('loads and edits the allowlist', async () => {
    const f = fakeApi();
    f.allowlist.push({ pattern: 'sudo', description: 'runs as root', added_at: 1 });
    const store = new AppStore(f.api);
    await store.cards.loadAllowlist();
    expect(store.cards.allowlist.map((e) => e.pattern)).toEqual(['sudo']);
    await store.cards.removeAllowlist('sudo');
    expect(f.api.removeAllowlist).toHaveBeenCalledWith('sudo');
    expect(store.cards.allowlist).toEqual([]);
  });
});
