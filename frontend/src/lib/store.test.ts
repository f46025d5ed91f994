import { describe, expect, it, vi } from 'vitest';
import type { Api } from './api';
import { ApiError } from './api';
import type { Frame, MessageView, SessionInfo, SessionView } from './protocol';
import { AppStore, sortSessions } from './store.svelte';

const usage0 = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 };

function session(id: string, updated: number, extra: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id, title: `t-${id}`, title_manual: false, model: 'm', workspace: '/w', created_at: updated, updated_at: updated,
    active_stream_id: '', message_count: 0, usage: usage0, ...extra,
  };
}

function message(id: string, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  return { id, position: 1, role, content, reasoning: '', kind: '', stream_id: '', created_at: 0, ...extra };
}

/** A fake backend: sessions and messages in memory, journals per stream, event hooks. */
function fakeApi() {
  const sessions = new Map<string, SessionInfo>();
  const transcripts = new Map<string, MessageView[]>();
  const journals = new Map<string, Frame[]>();
  const hooks = { frame: (_f: Frame) => {}, changed: () => {}, sidecar: (_s: unknown) => {}, open: (_id: string) => {} };
  const emit = (f: Frame) => {
    journals.set(f.stream_id, [...(journals.get(f.stream_id) ?? []), f]);
    hooks.frame(f);
  };
  const api = {
    newSession: vi.fn(async () => {
      const s = session(`n${sessions.size + 1}`, 10_000);
      sessions.set(s.id, s);
      return s;
    }),
    listSessions: vi.fn(async () => [...sessions.values()].map((s) => ({ ...s }))),
    getSession: vi.fn(async (id: string): Promise<SessionView> => ({
      session: { ...sessions.get(id)! }, messages: [...(transcripts.get(id) ?? [])],
    })),
    startTurn: vi.fn(async (sid: string, text: string) => {
      const user = message(`u-${text}`, 'user', text, { stream_id: 'st1' });
      sessions.get(sid)!.active_stream_id = 'st1';
      transcripts.set(sid, [...(transcripts.get(sid) ?? []), user]);
      return { stream_id: 'st1', user_message: user };
    }),
    cancel: vi.fn(async () => {}),
    streamSince: vi.fn(async (id: string, seq: number) => (journals.get(id) ?? []).filter((f) => f.seq > seq)),
    getSettings: vi.fn(async () => ({
      provider_name: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: 'm', has_api_key: false,
      keyring_available: true, keyring_error: '', data_dir: '/d', log_dir: '/l',
    })),
    saveSettings: vi.fn(),
    checkProvider: vi.fn(async () => ({ ok: true, message: '', hint: '', models: ['m'] })),
    getStatus: vi.fn(async () => ({
      sidecar: { state: 'ready' as const, runtime: 'builtin', agent_version: '1', sidecar_version: '1', attempt: 0, next_retry_s: 0, error: '', hint: '' },
      data_dir: '/d', log_dir: '/l', db_path: '/d/db', version: 'v',
    })),
    openURL: vi.fn(),
    onFrame: vi.fn((cb: (f: Frame) => void) => ((hooks.frame = cb), () => {})),
    onSessionsChanged: vi.fn((cb: () => void) => ((hooks.changed = cb), () => {})),
    onSidecarStatus: vi.fn((cb: (s: unknown) => void) => ((hooks.sidecar = cb), () => {})),
    onOpenSession: vi.fn((cb: (id: string) => void) => ((hooks.open = cb), () => {})),
  };
  return { api: api as unknown as Api & typeof api, sessions, transcripts, journals, emit, hooks };
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

function frame(sid: string, st: string, seq: number, event: string, data: unknown = {}): Frame {
  return { session_id: sid, stream_id: st, seq, event, data };
}

describe('AppStore', () => {
  it('starts with sessions newest first and opens the newest', async () => {
    const f = fakeApi();
    f.sessions.set('old', session('old', 1));
    f.sessions.set('new', session('new', 5));
    f.transcripts.set('new', [message('a', 'user', 'hi')]);
    const store = new AppStore(f.api);
    await store.start();
    await flush();
    expect(store.sessions.map((s) => s.id)).toEqual(['new', 'old']);
    expect(store.activeId).toBe('new');
    expect(store.messages.map((m) => m.id)).toEqual(['a']);
    expect(store.sidecar?.state).toBe('ready');
    expect(store.showFirstRun).toBe(false);
  });

  it('shows the first-run screen when the provider check fails', async () => {
    const f = fakeApi();
    f.api.checkProvider.mockResolvedValue({ ok: false, message: 'refused', hint: 'start ollama', models: [] });
    const store = new AppStore(f.api);
    await store.start();
    await flush();
    expect(store.showFirstRun).toBe(true);
    store.firstRunDismissed = true;
    expect(store.showFirstRun).toBe(false);
  });

  it('runs a turn: live text, then the saved rows after stream_end', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const store = new AppStore(f.api);
    await store.start();
    expect(await store.send('hello')).toBe(true);
    expect(f.api.startTurn).toHaveBeenCalledWith('s', 'hello');
    expect(store.busy).toBe(true);
    expect(store.live?.userMessage?.content).toBe('hello');

    f.emit(frame('s', 'st1', 1, 'user_message', { message: store.live!.userMessage }));
    f.emit(frame('s', 'st1', 2, 'token', { text: 'Hi ' }));
    f.emit(frame('s', 'st1', 3, 'token', { text: 'there' }));
    f.emit(frame('s', 'st1', 4, 'title', { title: 'Greeting' }));
    expect(store.live?.text).toBe('Hi there');
    expect(store.sessions[0].title).toBe('Greeting');

    f.transcripts.get('s')!.push(message('a1', 'assistant', 'Hi there'));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st1', 5, 'done', { usage: { ...usage0, output_tokens: 2 }, duration_seconds: 1, tps: 2, terminal_state: 'completed' }));
    f.emit(frame('s', 'st1', 6, 'stream_end'));
    await flush();
    expect(store.live).toBeNull();
    expect(store.busy).toBe(false);
    expect(store.messages.map((m) => m.id)).toEqual(['u-hello', 'a1']);
    expect(store.lastRuns.s).toEqual({ usage: { ...usage0, output_tokens: 2 }, tps: 2, duration_seconds: 1 });
    expect(store.banner).toBeNull();
  });

  it('keeps an apperror as the banner after the stream ends', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    const store = new AppStore(f.api);
    await store.start();
    await store.send('x');
    f.emit(frame('s', 'st1', 1, 'user_message', { message: message('u-x', 'user', 'x') }));
    f.emit(frame('s', 'st1', 2, 'apperror', { type: 'rate_limit', label: 'Rate limited', message: 'slow down', hint: 'wait' }));
    f.emit(frame('s', 'st1', 3, 'stream_end'));
    await flush();
    expect(store.banner).toEqual({ type: 'rate_limit', label: 'Rate limited', message: 'slow down', hint: 'wait' });
    store.dismissBanner();
    expect(store.banner).toBeNull();
  });

  it('shows why a message was not sent and keeps the composer text', async () => {
    const f = fakeApi();
    f.sessions.set('s', session('s', 1));
    f.api.startTurn.mockRejectedValue(new ApiError('session is busy'));
    const store = new AppStore(f.api);
    await store.start();
    expect(await store.send('x')).toBe(false);
    expect(store.banner?.message).toBe('session is busy');
    expect(store.live).toBeNull();
  });

  it('creates a session when sending with none open', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    expect(store.activeId).toBeNull();
    expect(await store.send('first')).toBe(true);
    expect(f.api.newSession).toHaveBeenCalled();
    expect(store.activeId).toBe('n1');
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
    await flush();
    expect(f.api.streamSince).toHaveBeenCalledWith('st9', 0);
    expect(store.live?.text).toBe('Par');
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
    await store.send('x');
    await store.cancel();
    expect(f.api.cancel).toHaveBeenCalledWith('st1');
  });

  it('marks other sessions busy from their frames and idle at stream_end', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    const store = new AppStore(f.api);
    await store.start();
    f.emit(frame('b', 'sb', 3, 'token', { text: 'x' }));
    expect(store.sessions.find((s) => s.id === 'b')?.active_stream_id).toBe('sb');
    expect(store.live).toBeNull();
    f.emit(frame('b', 'sb', 4, 'stream_end'));
    expect(store.sessions.find((s) => s.id === 'b')?.active_stream_id).toBe('');
  });

  it('follows sidecar status events', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    f.hooks.sidecar({ state: 'restarting', runtime: 'builtin', agent_version: '', sidecar_version: '', attempt: 2, next_retry_s: 4, error: 'crash', hint: '' });
    expect(store.sidecar?.state).toBe('restarting');
  });

  it('opens the session the host asks for', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.sessions.set('b', session('b', 1));
    const store = new AppStore(f.api);
    await store.start();
    expect(store.activeId).toBe('a');
    f.hooks.open('b');
    await flush();
    expect(store.activeId).toBe('b');
  });

  it('collapses overlapping re-lists into one more call', async () => {
    const f = fakeApi();
    const store = new AppStore(f.api);
    await store.start();
    f.api.listSessions.mockClear();
    const a = store.refreshSessions();
    void store.refreshSessions();
    void store.refreshSessions();
    await a;
    await flush();
    expect(f.api.listSessions).toHaveBeenCalledTimes(2);
  });
});

describe('sortSessions', () => {
  it('puts the most recently updated first', () => {
    expect(sortSessions([session('a', 1), session('b', 3), session('c', 2)]).map((s) => s.id)).toEqual(['b', 'c', 'a']);
  });
});
