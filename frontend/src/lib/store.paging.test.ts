// @vitest-environment jsdom
// The open chat's rows a page at a time, the sidebar a page at a time, and the window
// after the background database check (lib/transcript.ts, AppStore).
import { describe, expect, it } from 'vitest';
import { AppStore } from './store.svelte';
import { fakeApi, frame, message, session } from '../test/fakeApi';
import { answered, until } from '../test/until';
import type { MessageView, TranscriptPage } from './protocol';
import { FIRST_PAGE, PAGE, SESSION_PAGE, spliceFrom, TranscriptMemo } from './transcript';

function rows(n: number, prefix = 'm'): MessageView[] {
  return Array.from({ length: n }, (_, i) => message(`${prefix}${i}`, i % 2 ? 'assistant' : 'user', `${prefix} text ${i}`, { position: i }));
}

describe('AppStore: the transcript a page at a time', () => {
  it('opens a long chat at its last page and reads older pages as asked', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.transcripts.set('a', rows(500));
    const store = new AppStore(f.api);
    await store.start();
    await until(() => {
      expect(f.api.getTranscript).toHaveBeenCalledWith('a', -1, FIRST_PAGE);
      expect(store.messages).toHaveLength(FIRST_PAGE);
    });
    expect(f.api.getSession).not.toHaveBeenCalled();
    expect(store.messages.at(-1)?.position).toBe(499);
    expect(store.transcriptBefore).toBe(true);
    expect(store.transcriptAfter).toBe(false);
    const kept = store.messages[0];
    expect(await store.paging.loadOlder()).toBe(true);
    expect(store.messages).toHaveLength(FIRST_PAGE + PAGE);
    expect(store.messages[PAGE]).toBe(kept); // rows already loaded keep their objects
    while (store.transcriptBefore) await store.paging.loadOlder();
    expect(store.messages.map((m) => m.position)).toEqual([...Array(500).keys()]);
    expect(await store.paging.loadOlder()).toBe(false);
  });

  it('keeps the older rows read when the open chat is clicked again', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.transcripts.set('a', rows(500));
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.messages).toHaveLength(FIRST_PAGE));
    expect(await store.paging.loadOlder()).toBe(true);
    const shown = store.messages;
    const asked = f.api.getTranscript.mock.calls.length;
    await store.openSession('a');
    expect(store.messages).toBe(shown);
    expect(f.api.getTranscript.mock.calls.length).toBe(asked);
  });

  it('opens a search hit in the middle of a chat, reads newer rows below it, and jumps to the latest', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 9));
    f.transcripts.set('a', rows(1000));
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.activeId).toBe('b'));
    await store.openHit({ session_id: 'a', title: '', title_highlight: '', message_id: 0, position: 300, role: 'user', snippet: '', rank: 0, updated_at: 0, archived: false });
    await until(() => {
      expect(f.api.getTranscriptFrom).toHaveBeenCalledWith('a', 280, PAGE);
      expect(store.messages[0]?.position).toBe(280);
    });
    expect(store.messages.some((m) => m.position === 300)).toBe(true);
    expect(store.transcriptBefore && store.transcriptAfter).toBe(true);
    await store.paging.loadNewer();
    expect(store.messages.at(-1)?.position).toBe(280 + 2 * PAGE - 1);
    await store.paging.jumpToLatest();
    expect(store.messages.at(-1)?.position).toBe(999);
    expect(store.transcriptAfter).toBe(false);
  });

  it('never shows the previous chat while the next one loads', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 9));
    f.sessions.set('b', session('b', 5));
    f.transcripts.set('a', rows(10, 'a'));
    f.transcripts.set('b', rows(10, 'b'));
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.messages[0]?.content).toBe('a text 0'));
    let release: (p: TranscriptPage) => void = () => {};
    f.api.getTranscript.mockImplementationOnce(() => new Promise<TranscriptPage>((r) => (release = r)));
    const opening = store.openSession('b');
    // Before the first page of b arrives: no row of a, and the chat says it is loading.
    expect(store.messages).toEqual([]);
    expect(store.loadingSession).toBe(true);
    release({ session: f.sessions.get('b')!, messages: f.transcripts.get('b')!, before: false, after: false });
    await opening;
    expect(store.messages[0].content).toBe('b text 0');
  });

  it('re-reads only the rows from the settled turn on, keeping the loaded ones', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const saved = rows(4, 's');
    f.transcripts.set('s', saved);
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.messages).toHaveLength(4));
    const before = [...store.messages];
    const user = message('u-next', 'user', 'next', { position: 4, stream_id: 'st1' });
    f.api.startTurn.mockImplementationOnce(async () => ({ stream_id: 'st1', user_message: user }));
    await store.composer.send('next');
    // The host saved the user row at position 4 and, at settlement, the answer at 5.
    f.transcripts.set('s', [...saved, user, message('a5', 'assistant', 'done', { position: 5, stream_id: 'st1' })]);
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st1', 1, 'done', {}));
    f.emit(frame('s', 'st1', 2, 'stream_end', {}));
    await until(() => {
      expect(f.api.getTranscriptFrom).toHaveBeenCalledWith('s', 4, expect.any(Number));
      expect(store.messages.map((m) => m.position)).toEqual([0, 1, 2, 3, 4, 5]);
    });
    for (let i = 0; i < 4; i++) expect(store.messages[i]).toBe(before[i]);
  });
});

describe('AppStore: the sidebar a page at a time', () => {
  it('lists the first page, then the next ones, until every session is listed', async () => {
    const f = fakeApi();
    for (let i = 0; i < 250; i++) f.sessions.set(`s${i}`, session(`s${i}`, 10_000 - i));
    const store = new AppStore(f.api);
    await store.start();
    expect(f.api.listSessionsPage).toHaveBeenCalledWith(0, SESSION_PAGE);
    expect(store.list.sessions).toHaveLength(SESSION_PAGE);
    expect(store.list.sessionsMore).toBe(true);
    await store.list.loadMoreSessions();
    await store.list.loadMoreSessions();
    expect(store.list.sessions).toHaveLength(250);
    expect(store.list.sessionsMore).toBe(false);
    expect(new Set(store.list.sessions.map((s) => s.id)).size).toBe(250);
    // A refresh keeps what was listed below the first pages.
    await store.list.refreshSessions();
    expect(store.list.sessions).toHaveLength(250);
  });

  it('a next page asked for while the list is read again comes after it, not never', async () => {
    const f = fakeApi();
    for (let i = 0; i < 250; i++) f.sessions.set(`s${i}`, session(`s${i}`, 10_000 - i));
    const store = new AppStore(f.api);
    await store.start();
    expect(store.list.sessions).toHaveLength(SESSION_PAGE);
    const relist = store.list.refreshSessions(); // e.g. a title changed: sessions_changed
    const more = store.list.loadMoreSessions(); // the user scrolled to the end meanwhile
    await Promise.all([relist, more]);
    expect(store.list.sessions).toHaveLength(2 * SESSION_PAGE);
    expect(new Set(store.list.sessions.map((s) => s.id)).size).toBe(2 * SESSION_PAGE);
    // Two at once ask for one page, not the same page twice.
    const calls = f.api.listSessionsPage.mock.calls.length;
    await Promise.all([store.list.loadMoreSessions(), store.list.loadMoreSessions()]);
    expect(f.api.listSessionsPage.mock.calls.length).toBe(calls + 1);
    expect(store.list.sessions).toHaveLength(250);
  });

  it('a chat shown out of the pages (opened from a search hit) does not make the paging skip one', async () => {
    const f = fakeApi();
    for (let i = 0; i < 250; i++) f.sessions.set(`s${i}`, session(`s${i}`, 10_000 - i));
    const store = new AppStore(f.api);
    await store.start();
    store.list.upsertSession({ ...f.sessions.get('s240')! }); // far below the first page
    while (store.list.sessionsMore) await store.list.loadMoreSessions();
    expect(new Set(store.list.sessions.map((s) => s.id)).size).toBe(250);
    expect(store.list.sessions.at(-1)?.id).toBe('s249'); // the oldest is listed
  });

  it('a chat deleted elsewhere while the list is paged does not make the paging skip one', async () => {
    const f = fakeApi();
    for (let i = 0; i < 250; i++) f.sessions.set(`s${i}`, session(`s${i}`, 10_000 - i));
    const store = new AppStore(f.api);
    await store.start();
    await store.list.loadMoreSessions();
    f.sessions.delete('s3'); // another window, or the agent's own cleanup: no event yet
    while (store.list.sessionsMore) await store.list.loadMoreSessions();
    const ids = new Set(store.list.sessions.map((s) => s.id));
    for (let i = 0; i < 250; i++) if (i !== 3) expect(ids.has(`s${i}`), `s${i} listed`).toBe(true);
  });

  it('a list that was short and is read again full can be paged on', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start(); // no chats yet
    expect(store.list.sessionsMore).toBe(false);
    for (let i = 0; i < 250; i++) f.sessions.set(`s${i}`, session(`s${i}`, 10_000 - i)); // imported
    await store.list.refreshSessions(); // sessions_changed
    expect(store.list.sessions).toHaveLength(SESSION_PAGE);
    expect(store.list.sessionsMore).toBe(true);
    while (store.list.sessionsMore) await store.list.loadMoreSessions();
    expect(store.list.sessions).toHaveLength(250);
  });
});

describe('AppStore: the background database check', () => {
  it('shows the recovery report and reads the sessions again when the file was recovered', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.transcripts.set('a', rows(3));
    const store = new AppStore(f.api);
    await store.start();
    await until(() => {
      expect(store.messages).toHaveLength(3);
      expect(f.api.getRecoveryReport).toHaveBeenCalled();
    });
    // The report read at start (nothing recovered) is in before the check's events.
    await answered(f.api.getRecoveryReport);
    f.hooks.database({ state: 'recovering', message: 'The database file is damaged.' });
    expect(store.notices.info).toContain('damaged');
    f.api.listSessionsPage.mockClear();
    f.api.getTranscript.mockClear();
    const report = { recovered: true, backup_path: '/d/talaria.db.damaged-x', sessions: 1, messages: 3, message: 'Recovered 1 conversation.', problems: ['x'], at: 1 };
    f.hooks.database({ state: 'recovered', report });
    await until(() => {
      expect(store.database.recovery).toEqual(report);
      expect(f.api.listSessionsPage).toHaveBeenCalled();
      expect(f.api.getTranscript).toHaveBeenCalledWith('a', -1, FIRST_PAGE);
    });
    expect(store.notices.info).toBeNull();
  });

  it('says what to do when the recovery failed', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    f.hooks.database({ state: 'failed', message: 'The database file is damaged and could not be recovered: disk full.', hint: 'Quit Talaria, move the file aside.' });
    await until(() => {
      expect(store.notices.globalError).toContain('could not be recovered');
      expect(store.notices.globalError).toContain('Quit Talaria');
    });
  });
});

describe('transcript helpers', () => {
  it('spliceFrom replaces the rows from the page on and keeps the objects of rows that stayed', () => {
    const loaded = rows(5);
    const page = [loaded[3], message('n4', 'assistant', 'new', { position: 4 }), message('n5', 'user', 'x', { position: 5 })];
    const out = spliceFrom(loaded, page.map((m) => ({ ...m })));
    expect(out.map((m) => m.position)).toEqual([0, 1, 2, 3, 4, 5]);
    expect(out[3]).toBe(loaded[3]);
    expect(out[4].content).toBe('new');
  });

  it('TranscriptMemo returns the same items for rows that did not change', () => {
    const memo = new TranscriptMemo();
    const m = rows(4);
    const first = memo.build(m);
    const second = memo.build([...m, message('x', 'user', 'later', { position: 4 })]);
    for (let i = 0; i < 4; i++) expect(second[i]).toBe(first[i]);
    expect(second).toHaveLength(5);
    const changed = memo.build([m[0], { ...m[1] }, m[2], m[3]]);
    expect(changed[0]).toBe(first[0]);
    expect(changed[1]).not.toBe(first[1]);
  });
});

describe('AppStore: an agent notice', () => {
  it('shows what the agent did not do (a deleted chat it kept) as a short notice', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    f.hooks.agentNotice({ session_id: 'gone', message: 'Some Agent did not delete its session: no such session (code -32602)' });
    expect(store.notices.info).toBe('Some Agent did not delete its session: no such session (code -32602)');
  });
});
