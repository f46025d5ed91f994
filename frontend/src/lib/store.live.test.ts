import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, frame, message, session, usage0 } from '../test/fakeApi';
import { answered, drained, until } from '../test/until';
import { ApiError } from './api';
import { AppStore, DRAFT_DEBOUNCE_MS } from './store.svelte';
import { LIVE_MS, lostAnswer } from './stream.svelte';
import { initialStreamState } from './reducer';

afterEach(() => {
  vi.useRealTimers();
});

async function busySession() {
  const f = fakeApi();
  f.sessions.set('s', session('s', 1, { active_stream_id: 'st' }));
  f.transcripts.set('s', [message('u1', 'user', 'start', { stream_id: 'st', position: 0 })]);
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

/**
 * After Stop: the stopped turn's partial answer is saved (a1), and the next message,
 * sent while the window still shows that turn running, goes as a steer with which the
 * host, with no turn running, starts the turn st2 (its user row u2).
 */
function stopThenSteer(f: ReturnType<typeof fakeApi>) {
  f.sessions.get('s')!.active_stream_id = '';
  f.transcripts.get('s')!.push(message('a1', 'assistant', 'Part', { stream_id: 'st', position: 1 }));
  f.api.steer.mockImplementationOnce(async (sid: string, text: string) => {
    const user = message('u2', 'user', text, { stream_id: 'st2', position: 2 });
    f.sessions.get(sid)!.active_stream_id = 'st2';
    f.transcripts.get(sid)!.push(user);
    return { steer_id: '', stream_id: 'st2', delivery: 'turn', user_message: user };
  });
}

describe('AppStore: steering', () => {
  it('a message sent while a turn runs is a steer, shown queued until its frames settle it', async () => {
    const { f, store } = await busySession();
    expect(store.busy).toBe(true);
    expect(await store.composer.send('  use the new API  ')).toBe(true);
    expect(f.api.steer).toHaveBeenCalledWith('s', 'use the new API');
    expect(f.api.startTurn).not.toHaveBeenCalled();
    // Shown at once from Steer's answer, before any frame.
    expect(store.steering.steers.map((x) => [x.id, x.text])).toEqual([['steer1', 'use the new API']]);
    f.emit(frame('s', 'st', 2, 'steer_queue', { steers: [{ id: 'steer1', text: 'use the new API', created_at: 1 }] }));
    expect(store.steering.steers).toHaveLength(1);
    f.emit(frame('s', 'st', 3, 'token', { text: 'Before. ' }));
    f.emit(frame('s', 'st', 4, 'steer_consumed', { id: 'steer1', text: 'use the new API' }));
    f.emit(frame('s', 'st', 5, 'steer_queue', { steers: [] }));
    f.emit(frame('s', 'st', 6, 'token', { text: 'After.' }));
    expect(store.steering.steers).toEqual([]);
    expect(store.live?.items.map((i) => i.kind)).toEqual(['text', 'steer', 'text']);
  });

  it('a message sent with no turn running starts one', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const store = new AppStore(f.api);
    await store.start();
    expect(await store.composer.send('hello')).toBe(true);
    expect(f.api.startTurn).toHaveBeenCalledWith('s', 'hello');
    expect(f.api.steer).not.toHaveBeenCalled();
  });

  it('a turn the window had not seen (busy) gets the message as a steer', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const store = new AppStore(f.api);
    await store.start();
    f.api.startTurn.mockRejectedValueOnce(new ApiError('session s is busy', 'busy'));
    f.sessions.get('s')!.active_stream_id = 'st7';
    f.journals.set('st7', [frame('s', 'st7', 1, 'run_status', { status: 'working' })]);
    expect(await store.composer.send('more')).toBe(true);
    expect(f.api.steer).toHaveBeenCalledWith('s', 'more');
    await until(() => {
      expect(store.live?.streamId).toBe('st7');
      expect(store.steering.steers.map((x) => x.text)).toEqual(['more']);
    });
    expect(store.notices.banner).toBeNull();
  });

  it('Edit takes a steer back into the composer, after what is typed there', async () => {
    const { f, store } = await busySession();
    await store.composer.send('first thought');
    store.draft = 'typing';
    const focus = store.composer.focusKey;
    expect(await store.steering.editSteer('steer1')).toBe(true);
    expect(f.api.withdrawSteer).toHaveBeenCalledWith('s', 'steer1');
    expect(store.draft).toBe('typing\n\nfirst thought');
    expect(store.steering.steers).toEqual([]);
    expect(store.composer.focusKey).toBe(focus + 1);
    // The host's withdrawn frame afterwards changes nothing more.
    f.emit(frame('s', 'st', 2, 'steer_withdrawn', { id: 'steer1' }));
    expect(store.steering.steers).toEqual([]);
  });

  it('Cancel drops the text; Send now calls SteerNow', async () => {
    const { f, store } = await busySession();
    await store.composer.send('one');
    await store.composer.send('two');
    expect(await store.steering.steerNow('steer2')).toBe(true);
    expect(f.api.steerNow).toHaveBeenCalledWith('s', 'steer2');
    expect(await store.steering.cancelSteer('steer1')).toBe(true);
    expect(store.draft).toBe('');
    expect(store.steering.steers.map((x) => x.id)).toEqual(['steer2']);
  });

  it('a steer the agent already read is not an error: the queue is refreshed', async () => {
    const { f, store } = await busySession();
    await store.composer.send('late');
    f.api.withdrawSteer.mockRejectedValueOnce(new ApiError('the agent already read this message; it cannot be withdrawn', 'steer_gone'));
    f.steers.set('s', []);
    expect(await store.steering.editSteer('steer1')).toBe(false);
    expect(f.api.pendingSteers).toHaveBeenCalledWith('s');
    expect(store.steering.steers).toEqual([]);
    expect(store.notices.banner).toBeNull();
    expect(store.draft).toBe('');
  });

  it('another withdraw failure goes to the banner and keeps the steer', async () => {
    const { f, store } = await busySession();
    await store.composer.send('x');
    f.api.withdrawSteer.mockRejectedValueOnce(new ApiError('the agent is not running'));
    expect(await store.steering.cancelSteer('steer1')).toBe(false);
    expect(store.notices.banner).toMatchObject({ label: 'Could not cancel the message', message: 'the agent is not running' });
    expect(store.steering.steers.map((x) => x.id)).toEqual(['steer1']);
  });

  it('a cancel puts the unsent steers back into the composer, once, and saves the draft', async () => {
    const { f, store } = await busySession();
    store.draft = 'draft';
    f.emit(frame('s', 'st', 2, 'token', { text: 'Partial' }));
    f.emit(frame('s', 'st', 3, 'cancel', { partial: true, unsent_steers: ['a', 'b'] }));
    await until(() => {
      expect(store.draft).toBe('draft\n\na\n\nb');
      expect(f.api.saveDraft).toHaveBeenLastCalledWith('s', 'draft\n\na\n\nb');
    });
    // A replayed cancel of the same stream adds nothing: it does not even re-read the
    // host's draft (a restore reads it before anything else).
    const reads = f.api.getDraft.mock.calls.length;
    f.emit(frame('s', 'st', 3, 'cancel', { partial: true, unsent_steers: ['a', 'b'] }));
    expect(f.api.getDraft).toHaveBeenCalledTimes(reads);
    expect(store.draft).toBe('draft\n\na\n\nb');
  });

  it('a cancel in another session puts its steers into that session’s saved draft', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1, { active_stream_id: 'sb' }));
    f.drafts.set('b', 'kept');
    const store = new AppStore(f.api);
    await store.start();
    f.emit(frame('b', 'sb', 7, 'cancel', { partial: false, unsent_steers: ['unread'] }));
    await until(() => expect(f.drafts.get('b')).toBe('kept\n\nunread'));
  });

  it('the live view keeps partial text and finished tools after Stop', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'token', { text: 'Part' }));
    f.emit(frame('s', 'st', 3, 'tool', { tid: 't1', name: 'terminal', args: {}, key_arg: 'ls' }));
    f.emit(frame('s', 'st', 4, 'tool_complete', { tid: 't1', name: 'terminal', preview: 'ok' }));
    await store.composer.cancel();
    expect(f.api.cancel).toHaveBeenCalledWith('st');
    f.emit(frame('s', 'st', 5, 'cancel', { partial: true, unsent_steers: [] }));
    expect(store.live?.cancelled).toBe(true);
    expect(store.live?.text).toBe('Part');
    expect(store.live?.tools[0].status).toBe('done');
  });
  it('a stopped turn whose last frames come after the next turn started does not take the chat back', async () => {
    // Stop, then Send at once: the host admits the new turn once the stopped one has
    // left its run, before that one's cancel and stream_end reach the window (F13).
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'token', { text: 'Part' }));
    await store.composer.cancel();
    // The window still shows the stopped turn running: the message goes as a steer,
    // and the host, with no turn running, starts one with it.
    stopThenSteer(f);
    expect(store.busy).toBe(true);
    expect(await store.composer.send('second')).toBe(true);
    expect(f.api.steer).toHaveBeenCalledWith('s', 'second');
    expect(store.live?.streamId).toBe('st2');
    // The stopped turn's last frames, late.
    f.emit(frame('s', 'st', 3, 'cancel', { partial: true, unsent_steers: [] }));
    f.emit(frame('s', 'st', 4, 'stream_end'));
    expect(store.live?.streamId).toBe('st2');
    // Its saved rows are read into the chat; the new turn streams on, shown.
    await until(() => expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2']));
    f.emit(frame('s', 'st2', 1, 'run_status', { status: 'working' }));
    f.emit(frame('s', 'st2', 2, 'token', { text: 'S2 answer' }));
    expect(store.live?.streamId).toBe('st2');
    expect(store.live?.text).toBe('S2 answer');
    expect(store.busy).toBe(true);
  });
  it("a stopped turn's rows read after the next turn's do not take the next turn's rows away", async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'token', { text: 'Part' }));
    await store.composer.cancel();
    stopThenSteer(f);
    await store.composer.send('second');
    // The stopped turn's read of its rows is answered late, with the rows as they were
    // when it was asked for.
    let answerLate: () => void = () => {};
    const late = new Promise<void>((r) => (answerLate = r));
    const asOfThen = f.transcripts.get('s')!.slice();
    f.api.getTranscriptFrom.mockImplementationOnce(async (_id: string, from: number) => {
      await late;
      return { session: { ...f.sessions.get('s')! }, messages: asOfThen.filter((m) => m.position >= from), before: true, after: false };
    });
    f.emit(frame('s', 'st', 3, 'stream_end'));
    // The next turn answers and ends; its end reads its rows.
    f.transcripts.get('s')!.push(message('a2', 'assistant', 'S2 answer', { stream_id: 'st2', position: 3 }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st2', 1, 'token', { text: 'S2 answer' }));
    f.emit(frame('s', 'st2', 2, 'done', { usage: usage0, duration_seconds: 1, tps: 1, terminal_state: 'completed' }));
    f.emit(frame('s', 'st2', 3, 'stream_end'));
    await until(() => expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']));
    answerLate();
    await until(() => expect(f.api.getTranscriptFrom).toHaveBeenCalledTimes(2));
    await new Promise((r) => setTimeout(r, 0));
    expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });

  // The three below came from an adversarial trial: a read that found nothing new
  // doubled every row shown (Svelte then threw on the duplicate keys and the chat
  // froze), and an ended turn's slow read took the next turn's rows away.

  it("a stopped turn's end after the next turn's, with nothing new to read, doubles no row", async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'token', { text: 'Part' }));
    await store.composer.cancel();
    stopThenSteer(f);
    await store.composer.send('second');
    f.transcripts.get('s')!.push(message('a2', 'assistant', 'S2 answer', { stream_id: 'st2', position: 3 }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st2', 1, 'token', { text: 'S2 answer' }));
    f.emit(frame('s', 'st2', 2, 'done', { usage: usage0, duration_seconds: 1, tps: 1, terminal_state: 'completed' }));
    f.emit(frame('s', 'st2', 3, 'stream_end'));
    await until(() => expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']));
    await until(() => expect(store.live).toBeNull());
    const reads = f.api.getTranscriptFrom.mock.calls.length;
    // The stopped turn's last frames: its rows are read from after the newest shown (the
    // window picked the turn up from the journal: its user row's position is unknown).
    f.emit(frame('s', 'st', 3, 'cancel', { partial: true, unsent_steers: [] }));
    f.emit(frame('s', 'st', 4, 'stream_end'));
    await until(() => expect(f.api.getTranscriptFrom.mock.calls.length).toBe(reads + 1));
    await answered(f.api.getTranscriptFrom);
    await drained();
    expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']);
    expect(store.live).toBeNull();
  });

  it("a stopped turn's end while the next one runs, after the chat was opened again, doubles no row", async () => {
    const { f, store } = await busySession();
    f.sessions.set('o', session('o', 2));
    f.transcripts.set('o', [message('o1', 'user', 'other', { position: 0 })]);
    f.emit(frame('s', 'st', 2, 'token', { text: 'Part' }));
    await store.composer.cancel();
    stopThenSteer(f);
    await store.composer.send('second');
    f.journals.set('st2', [frame('s', 'st2', 1, 'token', { text: 'S2' })]);
    f.emit(frame('s', 'st2', 1, 'token', { text: 'S2' }));
    await store.openSession('o');
    await store.openSession('s');
    await until(() => expect(store.live?.streamId).toBe('st2'));
    const reads = f.api.getTranscriptFrom.mock.calls.length;
    f.emit(frame('s', 'st', 3, 'cancel', { partial: true, unsent_steers: [] }));
    f.emit(frame('s', 'st', 4, 'stream_end'));
    f.emit(frame('s', 'st2', 2, 'token', { text: ' more' }));
    await until(() => expect(f.api.getTranscriptFrom.mock.calls.length).toBe(reads + 1));
    await answered(f.api.getTranscriptFrom);
    await drained();
    expect(store.live?.streamId).toBe('st2');
    expect(store.live?.text).toBe('S2 more');
    expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2']);
  });

  it("an ended turn's read answered after the next turn ended keeps the next turn's rows", async () => {
    const { f, store } = await busySession();
    f.transcripts.get('s')!.push(message('a1', 'assistant', 'First answer', { stream_id: 'st', position: 1 }));
    f.sessions.get('s')!.active_stream_id = '';
    let answerLate: () => void = () => {};
    const late = new Promise<void>((r) => (answerLate = r));
    const asOfThen = f.transcripts.get('s')!.slice();
    f.api.getTranscriptFrom.mockImplementationOnce(async (_id: string, from: number) => {
      await late;
      return { session: { ...f.sessions.get('s')! }, messages: asOfThen.filter((m) => m.position >= from), before: true, after: false };
    });
    f.emit(frame('s', 'st', 2, 'token', { text: 'First answer' }));
    f.emit(frame('s', 'st', 3, 'done', { usage: usage0, duration_seconds: 1, tps: 1, terminal_state: 'completed' }));
    f.emit(frame('s', 'st', 4, 'stream_end'));
    await until(() => expect(store.busy).toBe(false));
    f.api.startTurn.mockImplementationOnce(async (sid: string, text: string) => {
      const user = message('u2', 'user', text, { stream_id: 'st2', position: 2 });
      f.sessions.get(sid)!.active_stream_id = 'st2';
      f.transcripts.get(sid)!.push(user);
      return { stream_id: 'st2', user_message: user };
    });
    expect(await store.composer.send('second')).toBe(true);
    f.transcripts.get('s')!.push(message('a2', 'assistant', 'S2 answer', { stream_id: 'st2', position: 3 }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st2', 1, 'token', { text: 'S2 answer' }));
    f.emit(frame('s', 'st2', 2, 'done', { usage: usage0, duration_seconds: 1, tps: 1, terminal_state: 'completed' }));
    f.emit(frame('s', 'st2', 3, 'stream_end'));
    await until(() => expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']));
    answerLate();
    await answered(f.api.getTranscriptFrom);
    await drained();
    expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2', 'a2']);
  });
});

describe('AppStore: run figures and unsaved answers', () => {
  it('keeps the last run figures with the tool-limit note', async () => {
    const { f, store } = await busySession();
    f.transcripts.get('s')!.push(message('a1', 'assistant', 'done', { stream_id: 'st' }));
    f.emit(frame('s', 'st', 2, 'token', { text: 'done' }));
    f.emit(frame('s', 'st', 3, 'done', { usage: { ...usage0, input_tokens: 9 }, duration_seconds: 3, tps: 7, terminal_state: 'completed', tool_limit_reached: true }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st', 4, 'stream_end'));
    await until(() => expect(store.stream.lastRun).toEqual({ usage: { ...usage0, input_tokens: 9 }, tps: 7, duration_seconds: 3, tool_limit_reached: true }));
  });

  it('an answer the host could not save stays on screen with the banner', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'token', { text: 'Precious streamed text' }));
    f.emit(frame('s', 'st', 3, 'apperror', {
      type: 'error', label: 'Could not save the answer', message: 'disk full', hint: 'The answer is still on screen; copy what you need.',
    }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st', 4, 'stream_end'));
    await until(() => {
      expect(store.live).toBeNull();
      expect(store.stream.unsavedStreams.map((s) => s.text)).toEqual(['Precious streamed text']);
    });
    expect(store.notices.banner?.label).toBe('Could not save the answer');
  });

  it('lostAnswer: only when something streamed and no saved row of the stream has it', () => {
    const s = { ...initialStreamState('st', 's'), text: 'x' };
    expect(lostAnswer(s, [message('u', 'user', 'q', { stream_id: 'st' })])).toBe(true);
    expect(lostAnswer(s, [message('a', 'assistant', 'x', { stream_id: 'st' })])).toBe(false);
    expect(lostAnswer({ ...s, text: '' }, [])).toBe(false);
    const failed = { ...s, error: { type: 'save_failed' as const, label: 'Could not save the answer', message: '', hint: '' } };
    expect(lostAnswer(failed, [message('a', 'assistant', 'x', { stream_id: 'st' })])).toBe(true);
  });
});

describe('AppStore: drafts', () => {
  it('saves the composer text debounced and restores it on open', async () => {
    vi.useFakeTimers();
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    f.drafts.set('b', 'saved in b');
    const store = new AppStore(f.api);
    await store.start();
    await vi.runOnlyPendingTimersAsync();
    store.draft = 'h';
    store.draft = 'hel';
    store.draft = 'hello';
    expect(f.api.saveDraft).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(DRAFT_DEBOUNCE_MS + 10);
    expect(f.api.saveDraft).toHaveBeenCalledTimes(1);
    expect(f.api.saveDraft).toHaveBeenCalledWith('a', 'hello');
    await store.openSession('b');
    await vi.runOnlyPendingTimersAsync();
    expect(store.draft).toBe('saved in b');
    await store.openSession('a');
    expect(store.draft).toBe('hello');
  });

  it('a full disk: the failed Send keeps its banner over the draft that could not be saved', async () => {
    // Send empties the composer and puts the text back when it fails; the draft's save
    // that follows fails too (trial F11: only "Could not save the draft" was left).
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    const store = new AppStore(f.api);
    await store.start();
    const full = new ApiError('database or disk is full', 'storage', 'Free some space on the disk, then send again.');
    f.api.startTurn.mockRejectedValueOnce(full);
    f.api.saveDraft.mockRejectedValue(full);
    store.draft = 'hello';
    expect(await store.composer.send('hello')).toBe(false);
    expect(store.notices.banner?.label).toBe('Message not sent');
    await store.drafts.flush('a');
    expect(f.api.saveDraft).toHaveBeenCalled();
    expect(store.notices.banner?.label).toBe('Message not sent');
    expect(store.notices.banner?.hint).toBe('Free some space on the disk, then send again.');
    // With no banner shown, the draft's failure is shown.
    store.notices.dismissBanner();
    store.draft = 'hello again';
    await store.drafts.flush('a');
    expect(store.notices.banner?.label).toBe('Could not save the draft');
  });

  it('saves at once on a session switch', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    const store = new AppStore(f.api);
    await store.start();
    store.draft = 'unsent';
    await store.openSession('b');
    expect(f.api.saveDraft).toHaveBeenCalledWith('a', 'unsent');
    expect(store.draft).toBe('');
  });

  it('typing before the saved draft arrives is not overwritten', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.drafts.set('a', 'old');
    let release: () => void = () => {};
    f.api.getDraft.mockImplementationOnce(
      (id: string) => new Promise((r) => (release = () => r({ session_id: id, text: 'old', updated_at: 1 }))),
    );
    const store = new AppStore(f.api);
    const started = store.start();
    await until(() => expect(f.api.getDraft).toHaveBeenCalledWith('a'));
    store.draft = 'new';
    release();
    await started;
    // The saved draft's answer has been taken in (its reader awaited it first).
    await answered(f.api.getDraft);
    expect(store.draft).toBe('new');
  });
});

describe('AppStore: supervision', () => {
  it('reports window focus on focus, blur and visibility changes, without repeats', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    const win = new EventTarget() as unknown as Window;
    let focused = true;
    let visibility: DocumentVisibilityState = 'visible';
    const doc = Object.defineProperties(new EventTarget(), {
      hasFocus: { value: () => focused },
      visibilityState: { get: () => visibility },
    }) as unknown as Document;
    const stop = store.windowWatch.watch(win, doc);
    expect(f.api.setWindowFocused).toHaveBeenLastCalledWith(true);
    focused = false;
    win.dispatchEvent(new Event('blur'));
    expect(f.api.setWindowFocused).toHaveBeenLastCalledWith(false);
    win.dispatchEvent(new Event('blur'));
    expect(f.api.setWindowFocused).toHaveBeenCalledTimes(2);
    focused = true;
    win.dispatchEvent(new Event('focus'));
    expect(f.api.setWindowFocused).toHaveBeenLastCalledWith(true);
    visibility = 'hidden';
    doc.dispatchEvent(new Event('visibilitychange'));
    expect(f.api.setWindowFocused).toHaveBeenLastCalledWith(false);
    stop();
    visibility = 'visible';
    doc.dispatchEvent(new Event('visibilitychange'));
    expect(f.api.setWindowFocused).toHaveBeenCalledTimes(4);
  });

  it('marks sessions waiting for the user from the activity snapshot', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    const store = new AppStore(f.api);
    await store.start();
    f.hooks.activity({
      state: 'needs_you', full_access: 0, waiting: 1, sidecar: {} as never,
      running: [{ session_id: 'b', parent_session_id: '', task_id: '', title: '', stream_id: 'sb', started_at: 1, approvals: 1, clarifies: 0, full_access: false }],
    });
    expect(store.needsYou('b')).toBe(true);
    f.hooks.activity({ state: 'idle', full_access: 0, waiting: 0, sidecar: {} as never, running: [] });
    expect(store.needsYou('b')).toBe(false);
  });

  it('restarts the agent and loads diagnostics', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    // The status read at start is in (a late one would end the restart below).
    await until(() => expect(store.supervision.sidecar?.state).toBe('ready'));
    store.supervision.openDiagnostics();
    await until(() => expect(store.supervision.diagnostics?.pid).toBe(4242));
    await store.supervision.restartAgent();
    expect(f.api.restartAgent).toHaveBeenCalled();
    expect(store.supervision.restarting).toBe(true);
    f.hooks.sidecar({ state: 'ready', runtime: 'builtin', agent_version: '', sidecar_version: '', attempt: 0, next_retry_s: 0, error: '', hint: '' });
    expect(store.supervision.restarting).toBe(false);
    f.api.openLogsFolder.mockRejectedValueOnce(new ApiError('cannot open /d/logs: no xdg-open'));
    await store.supervision.openLogsFolder();
    expect(store.supervision.diagnosticsError).toBe('cannot open /d/logs: no xdg-open');
  });

  it('notes when the sidecar status arrived, for the restart countdown', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    const before = Date.now();
    f.hooks.sidecar({ state: 'restarting', runtime: '', agent_version: '', sidecar_version: '', attempt: 3, next_retry_s: 8, error: 'exit 1', hint: '' });
    expect(store.supervision.sidecarAt).toBeGreaterThanOrEqual(before);
    expect(store.supervision.sidecar?.attempt).toBe(3);
  });
});

describe('AppStore: a follow-up turn right after the end', () => {
  it('re-reads the finished rows even when the next stream already started', async () => {
    const { f, store } = await busySession();
    f.emit(frame('s', 'st', 2, 'token', { text: 'First answer' }));
    f.emit(frame('s', 'st', 3, 'steer_queue', { steers: [{ id: 'x', text: 'later', created_at: 1 }] }));
    f.emit(frame('s', 'st', 4, 'done', { usage: usage0, duration_seconds: 1, tps: 1, terminal_state: 'completed' }));
    // The host saved the answer and starts the follow-up with the unread steer.
    f.transcripts.get('s')!.push(message('a1', 'assistant', 'First answer', { stream_id: 'st' }), message('u2', 'user', 'later', { stream_id: 'st2' }));
    f.sessions.get('s')!.active_stream_id = 'st2';
    f.emit(frame('s', 'st', 5, 'stream_end'));
    f.emit(frame('s', 'st2', 1, 'user_message', { message: message('u2', 'user', 'later', { stream_id: 'st2' }) }));
    await until(() => {
      expect(store.live?.streamId).toBe('st2');
      expect(store.messages.map((m) => m.id)).toEqual(['u1', 'a1', 'u2']);
    });
    expect(store.list.sessions.find((x) => x.id === 's')?.active_stream_id).toBe('st2');
    expect(store.busy).toBe(true);
  });
});

describe('AppStore: the live answer shown', () => {
  const shown = (store: AppStore) =>
    (store.stream.liveShown?.items ?? []).map((i) => (i.kind === 'text' ? i.text : `[${i.kind}]`)).join('');

  it('shows the first token at once, later ones at most every LIVE_MS, whatever comes between', async () => {
    const { f, store } = await busySession();
    vi.useFakeTimers();
    // A frame that is not a token (a tool's call) is shown at once, and does not hold
    // the token after it (the turn's first words) back.
    f.emit(frame('s', 'st', 2, 'tool', { tid: 't1', name: 'terminal', args: {}, key_arg: 'ls' }));
    expect(shown(store)).toBe('[tool]');
    f.emit(frame('s', 'st', 3, 'token', { text: 'First' }));
    expect(shown(store)).toBe('[tool]First');
    // The next token within LIVE_MS of that waits, also past a frame that is not one
    // (shown at once, with the text so far).
    f.emit(frame('s', 'st', 4, 'token', { text: ' second' }));
    expect(shown(store)).toBe('[tool]First');
    expect(store.live?.lastSeq).toBe(4);
    f.emit(frame('s', 'st', 5, 'tool', { tid: 't2', name: 'terminal', args: {}, key_arg: 'pwd' }));
    expect(shown(store)).toBe('[tool]First second[tool]');
    f.emit(frame('s', 'st', 6, 'token', { text: 'Third' }));
    expect(shown(store)).toBe('[tool]First second[tool]');
    vi.advanceTimersByTime(LIVE_MS);
    expect(shown(store)).toBe('[tool]First second[tool]Third');
    // After LIVE_MS without a token (a tool that ran long), the next shows at once.
    vi.advanceTimersByTime(LIVE_MS);
    f.emit(frame('s', 'st', 7, 'token', { text: ' fourth' }));
    expect(shown(store)).toBe('[tool]First second[tool]Third fourth');
  });
});
