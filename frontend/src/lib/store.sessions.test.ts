import { afterEach, describe, expect, it, vi } from 'vitest';
import { fakeApi, message, session } from '../test/fakeApi';
import { answered, until } from '../test/until';
import { ApiError } from './api';
import type { SearchHit } from './protocol';
import { AppStore, SEARCH_DEBOUNCE_MS, sortSessions } from './store.svelte';
import { deleteMessage } from './sessions.svelte';

afterEach(() => {
  vi.useRealTimers();
});

const hit = (id: string, position: number, extra: Partial<SearchHit> = {}): SearchHit => ({
  session_id: id, title: `t-${id}`, title_highlight: '', message_id: 7, position, role: 'user',
  snippet: 'a \u0002match\u0003 here', rank: -1, updated_at: 1, archived: false, ...extra,
});

async function twoSessions() {
  const f = fakeApi();
  f.sessions.set('a', session('a', 5));
  f.sessions.set('b', session('b', 1));
  f.transcripts.set('a', [
    message('m0', 'user', 'q', { position: 0 }),
    message('m1', 'assistant', 'r', { position: 1 }),
    message('m2', 'user', 'q2', { position: 2 }),
  ]);
  const store = new AppStore(f.api);
  await store.start();
  await until(() => {
    expect(store.activeId).toBe('a');
    expect(store.messages).toHaveLength(3);
  });
  return { f, store };
}

describe('AppStore: search', () => {
  it('asks the host once typing pauses, with the latest query', async () => {
    const { f, store } = await twoSessions();
    vi.useFakeTimers();
    f.api.searchSessions.mockResolvedValue([hit('b', 3)]);
    store.search.set('m');
    store.search.set('ma');
    store.search.set('mat');
    expect(store.search.searching).toBe(true);
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS - 20);
    expect(f.api.searchSessions).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(40);
    expect(f.api.searchSessions).toHaveBeenCalledTimes(1);
    expect(f.api.searchSessions).toHaveBeenCalledWith('mat', 30);
    await vi.runOnlyPendingTimersAsync();
    expect(store.search.hits).toEqual([hit('b', 3)]);
    expect(store.search.searching).toBe(false);
    store.search.set('  ');
    expect(store.search.hits).toBeNull();
  });

  it('an older answer arriving late never replaces a newer one', async () => {
    const { f, store } = await twoSessions();
    vi.useFakeTimers();
    let slow: (h: SearchHit[]) => void = () => {};
    f.api.searchSessions.mockImplementationOnce(() => new Promise((r) => (slow = r)));
    f.api.searchSessions.mockResolvedValueOnce([hit('a', 1)]);
    store.search.set('old');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    store.search.set('new');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    slow([hit('b', 2)]);
    await vi.runOnlyPendingTimersAsync();
    expect(store.search.hits).toEqual([hit('a', 1)]);
  });

  it('while a search is on its way, only the newest query typed follows it, after its answer', async () => {
    const { f, store } = await twoSessions();
    vi.useFakeTimers();
    let slow: (h: SearchHit[]) => void = () => {};
    f.api.searchSessions.mockImplementationOnce(() => new Promise((r) => (slow = r)));
    f.api.searchSessions.mockResolvedValueOnce([hit('a', 1)]);
    store.search.set('ma');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    store.search.set('mat');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    store.search.set('match');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    expect(f.api.searchSessions).toHaveBeenCalledTimes(1); // 'ma' still on its way
    slow([hit('b', 2)]);
    await vi.runOnlyPendingTimersAsync();
    expect(f.api.searchSessions).toHaveBeenCalledTimes(2);
    expect(f.api.searchSessions).toHaveBeenLastCalledWith('match', 30);
    expect(store.search.hits).toEqual([hit('a', 1)]); // 'ma''s answer was never shown
    expect(store.search.searching).toBe(false);
  });

  it('a query waiting behind a search is dropped when the box is cleared', async () => {
    const { f, store } = await twoSessions();
    vi.useFakeTimers();
    let slow: (h: SearchHit[]) => void = () => {};
    f.api.searchSessions.mockImplementationOnce(() => new Promise((r) => (slow = r)));
    store.search.set('ma');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    store.search.set('mat');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    store.search.set('');
    slow([hit('b', 2)]);
    await vi.runOnlyPendingTimersAsync();
    expect(f.api.searchSessions).toHaveBeenCalledTimes(1);
    expect(store.search.hits).toBeNull();
    expect(store.search.searching).toBe(false);
  });

  it('shows a failed search as its message', async () => {
    const { f, store } = await twoSessions();
    vi.useFakeTimers();
    f.api.searchSessions.mockRejectedValueOnce(new ApiError('database is locked'));
    store.search.set('x');
    await vi.advanceTimersByTimeAsync(SEARCH_DEBOUNCE_MS + 1);
    await vi.runOnlyPendingTimersAsync();
    expect(store.search.error).toBe('database is locked');
    expect(store.search.hits).toEqual([]);
  });

  it('opening a hit opens its session and targets its message', async () => {
    const { store } = await twoSessions();
    await store.openHit(hit('b', 4));
    expect(store.activeId).toBe('b');
    expect(store.focusTarget).toMatchObject({ sessionId: 'b', position: 4 });
    const k = store.focusTarget!.key;
    await store.openHit(hit('b', 4));
    expect(store.focusTarget!.key).not.toBe(k);
    // A title-only hit (position -1) just opens.
    await store.openHit(hit('a', -1));
    expect(store.activeId).toBe('a');
    expect(store.focusTarget).toBeNull();
  });
});

describe('AppStore: session actions', () => {
  it('renames, pins (pinned first) and unpins', async () => {
    const { f, store } = await twoSessions();
    expect(await store.list.renameSession('b', 'Better name')).toBe(true);
    expect(f.api.renameSession).toHaveBeenCalledWith('b', 'Better name');
    expect(store.list.sessions.find((s) => s.id === 'b')?.title).toBe('Better name');
    await store.list.pinSession('b', true);
    expect(store.list.sessions.map((s) => s.id)).toEqual(['b', 'a']);
    await store.list.pinSession('b', false);
    expect(store.list.sessions.map((s) => s.id)).toEqual(['a', 'b']);
  });

  it('archives into the archived list, shown on request, and back', async () => {
    const { f, store } = await twoSessions();
    await store.list.archiveSession('b', true);
    expect(f.api.archiveSession).toHaveBeenCalledWith('b', true);
    expect(store.list.sessions.map((s) => s.id)).toEqual(['a']);
    expect(store.list.archived).toEqual([]);
    await store.list.setShowArchived(true);
    expect(store.list.archived.map((s) => s.id)).toEqual(['b']);
    await store.list.archiveSession('b', false);
    expect(store.list.archived).toEqual([]);
    expect(store.list.sessions.map((s) => s.id)).toEqual(['a', 'b']);
  });

  it('an archived session opened from a search hit is the active session', async () => {
    const { f, store } = await twoSessions();
    f.sessions.get('b')!.archived_at = 50;
    await store.list.refreshSessions();
    expect(store.list.sessions.map((s) => s.id)).toEqual(['a']);
    await store.openHit({ session_id: 'b', title: 't-b', title_highlight: '', message_id: 0, position: -1, role: '', snippet: '', rank: 0, updated_at: 1, archived: true });
    expect(store.activeSession?.id).toBe('b');
    expect(store.list.sessions.map((s) => s.id)).toEqual(['a']);
    await store.list.setShowArchived(true);
    await store.list.setShowArchived(false);
    expect(store.activeSession?.id).toBe('b');
  });

  it('deletes only after confirmation, and opens another session when it was open', async () => {
    const { f, store } = await twoSessions();
    store.list.askDelete('a');
    expect(store.list.confirmDelete?.id).toBe('a');
    expect(f.api.deleteSession).not.toHaveBeenCalled();
    expect(await store.list.deleteSession('a')).toBe(true);
    expect(store.list.confirmDelete).toBeNull();
    expect(store.list.sessions.map((s) => s.id)).toEqual(['b']);
    expect(store.activeId).toBe('b');
  });

  it('the delete dialog says when the agent keeps the chat (continued from its own sessions)', async () => {
    const { f, store } = await twoSessions();
    f.api.historyKeptBy.mockImplementation(async (id: string) => (id === 'b' ? 'OpenCode' : ''));
    await store.list.askDelete('b');
    expect(f.api.historyKeptBy).toHaveBeenCalledWith('b');
    expect(store.list.confirmKeptBy).toBe('OpenCode');
    expect(deleteMessage('t-b', store.list.confirmKeptBy)).toBe(
      '“t-b” will be removed from Talaria. Its history stays in OpenCode: Talaria does not delete the session there.',
    );
    await store.list.askDelete('a');
    expect(store.list.confirmKeptBy).toBe('');
    expect(deleteMessage('t-a', store.list.confirmKeptBy)).toBe('“t-a” and all its messages will be deleted for good. This cannot be undone.');
    // A failed look-up leaves the plain words; the host decides what it deletes.
    f.api.historyKeptBy.mockRejectedValueOnce(new Error('gone'));
    await store.list.askDelete('b');
    expect(store.list.confirmDelete?.id).toBe('b');
    expect(store.list.confirmKeptBy).toBe('');
    expect(await store.list.deleteSession('b')).toBe(true);
    expect(f.api.deleteSession).toHaveBeenCalledWith('b');
  });

  it('duplicates and forks with a fresh request key each time, opening the copy', async () => {
    const { f, store } = await twoSessions();
    await store.list.duplicateSession('a');
    expect(store.activeId).toBe('dup1');
    await store.openSession('a');
    await store.list.forkFrom(1);
    await store.openSession('a');
    await store.list.forkFrom(1);
    const k1 = f.api.forkSession.mock.calls[0][2];
    const k2 = f.api.forkSession.mock.calls[1][2];
    expect(f.api.forkSession.mock.calls[0].slice(0, 2)).toEqual(['a', 1]);
    expect(k1).toMatch(/^[0-9a-f-]{36}$/);
    expect(k1).not.toBe(k2);
    expect(f.api.duplicateSession.mock.calls[0][1]).not.toBe(k1);
    expect(store.activeId).toBe('fork3');
    expect(store.messages.map((m) => m.id)).toEqual(['m0', 'm1']);
  });

  it('exports (the path is told), imports (opened) and ignores a cancelled dialog', async () => {
    const { f, store } = await twoSessions();
    await store.list.exportSession('a', 'json');
    expect(f.api.exportSession).toHaveBeenCalledWith('a', 'json');
    expect(store.notices.info).toBe('Exported to /home/me/export.json');
    f.api.exportSession.mockResolvedValueOnce('');
    await store.list.exportSession('a', 'markdown');
    expect(store.notices.info).toBeNull();
    expect(await store.list.importSession()).toBe(true);
    expect(store.activeId).toBe('a');
    const imported = session('imp', 30, { title: 'Imported chat' });
    f.sessions.set('imp', imported);
    f.api.importSession.mockResolvedValueOnce(imported);
    await store.list.importSession();
    expect(store.activeId).toBe('imp');
    expect(store.notices.info).toBe('Imported “Imported chat”: it works in your default folder and sandbox');
  });

  it('shows a failed action in the banner with its message', async () => {
    const { f, store } = await twoSessions();
    f.api.renameSession.mockRejectedValueOnce(new ApiError('the title is empty: type a name for the conversation'));
    expect(await store.list.renameSession('a', '')).toBe(false);
    expect(store.notices.banner).toMatchObject({ label: 'Could not rename the conversation', message: 'the title is empty: type a name for the conversation' });
    f.api.importSession.mockRejectedValueOnce(new ApiError('not a Talaria export: missing "version"'));
    await store.list.importSession();
    expect(store.notices.banner?.message).toBe('not a Talaria export: missing "version"');
  });

  it('shows the recovery report until dismissed', async () => {
    const f = fakeApi();
    Object.assign(f.recovery, {
      recovered: true, backup_path: '/d/talaria.db.damaged-1', sessions: 12, messages: 340,
      message: 'The database was damaged; 12 conversations were recovered.', problems: ['page 7: btree'], at: 1,
    });
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.database.recovery?.backup_path).toBe('/d/talaria.db.damaged-1'));
    await store.database.dismissRecovery();
    expect(f.api.dismissRecoveryReport).toHaveBeenCalled();
    expect(store.database.recovery).toBeNull();
  });

  it('shows no recovery banner when nothing was recovered', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    // The report was read and said nothing was recovered.
    await until(() => expect(f.api.getRecoveryReport).toHaveBeenCalled());
    await answered(f.api.getRecoveryReport);
    expect(store.database.recovery).toBeNull();
  });
});

describe('sortSessions with pins', () => {
  it('puts pinned sessions first, each group newest first', () => {
    const list = [session('a', 1), session('b', 3, { pinned: true }), session('c', 2), session('d', 0, { pinned: true })];
    expect(sortSessions(list).map((s) => s.id)).toEqual(['b', 'd', 'c', 'a']);
  });
});
