import { describe, expect, it } from 'vitest';
import { fakeApi, frame, message, session, usage0 } from '../test/fakeApi';
import { until } from '../test/until';
import { AppStore } from './store.svelte';

// Issue 24, item 5: what the window keeps per turn once the turn has settled. Many
// turns through the store must not add event subscriptions, nor leave entries in its
// per-turn state (the live stream, steers, banners, unsaved answers), nor grow its
// per-session records beyond one entry for the session.
describe('AppStore: many settled turns', () => {
  it('leave no subscription and no per-turn entry behind', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    let n = 0;
    f.api.startTurn.mockImplementation(async (sid: string, text: string) => {
      n++;
      const user = message(`u${n}`, 'user', text, { stream_id: `st${n}` });
      f.sessions.get(sid)!.active_stream_id = `st${n}`;
      f.transcripts.set(sid, [...(f.transcripts.get(sid) ?? []), user]);
      return { stream_id: `st${n}`, user_message: user };
    });
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.activeId).toBe('s'));
    const subscriptions = [f.api.onFrame, f.api.onSessionsChanged, f.api.onActivity].map((fn) => fn.mock.calls.length);
    await until(() => expect(f.api.chatFigures).toHaveBeenCalled());
    const listings = f.api.listSessionsPage.mock.calls.length;
    const figures = f.api.chatFigures.mock.calls.length;

    const turns = 40;
    for (let i = 1; i <= turns; i++) {
      expect(await store.composer.send(`question ${i}`)).toBe(true);
      const st = `st${i}`;
      f.emit(frame('s', st, 1, 'user_message', { message: store.live!.userMessage }));
      f.emit(frame('s', st, 2, 'run_status', { status: 'working' }));
      f.emit(frame('s', st, 3, 'token', { text: `Answer ${i} ` }));
      f.emit(frame('s', st, 4, 'token', { text: 'with **markdown**.' }));
      f.transcripts.get('s')!.push(message(`a${i}`, 'assistant', `Answer ${i} with **markdown**.`, { stream_id: st }));
      f.sessions.get('s')!.active_stream_id = '';
      f.emit(frame('s', st, 5, 'done', { usage: { ...usage0, output_tokens: 5 }, duration_seconds: 1, tps: 5, terminal_state: 'completed' }));
      f.emit(frame('s', st, 6, 'stream_end'));
      f.hooks.changed(); // the host's sessions_changed after stream_end (backend/turn/settle.go)
      await until(() => {
        expect(store.live).toBeNull();
        expect(store.messages.at(-1)?.id).toBe(`a${i}`);
        expect(f.api.chatFigures.mock.calls.length).toBe(figures + i);
      });
      // The new turn's figures are among those asked for.
      expect(f.api.chatFigures.mock.calls.at(-1)![1]).toContain(st);
    }

    expect([f.api.onFrame, f.api.onSessionsChanged, f.api.onActivity].map((fn) => fn.mock.calls.length)).toEqual(subscriptions);
    expect(store.busy).toBe(false);
    expect(store.stream.liveShown).toBeNull();
    expect(store.steering.steers).toEqual([]);
    expect(store.stream.unsavedStreams).toEqual([]);
    expect(Object.keys(store.stream.unsaved)).toEqual([]);
    expect(Object.keys(store.stream.lastRuns)).toEqual(['s']);
    expect(Object.keys(store.notices.banners)).toEqual([]);
    expect(Object.keys(store.notices.bannerStreams)).toEqual([]);
    expect(store.messages).toHaveLength(2 * turns);
    // What a settled turn asks of the host: one listing of the sidebar (on the host's
    // sessions_changed) and one read of the chat's figures. Each answer is a script the
    // web view evaluates and keeps in its code cache; a turn asked for the listing
    // twice and the figures twice (issue 24).
    expect(f.api.listSessionsPage.mock.calls.length - listings).toBe(turns);
    expect(f.api.chatFigures.mock.calls.length - figures).toBe(turns);
  });
});
