import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { api, ApiError, errorMessage, holdCallsUntil } from './api';

// The generated bindings call window.go.app.<Service>.<Method>(...) and window.runtime.*;
// install fakes on a global `window` (this file runs in node): every service is the one
// fake `App` (method names are unique across the services).
type Fn = (...args: unknown[]) => unknown;
let App: Record<string, Fn>;
let runtime: Record<string, Fn>;
let handlers: Map<string, Fn>;

beforeEach(() => {
  handlers = new Map();
  App = {};
  runtime = {
    EventsOnMultiple: vi.fn((name: unknown, cb: unknown) => {
      handlers.set(name as string, cb as Fn);
      return () => handlers.delete(name as string);
    }),
    BrowserOpenURL: vi.fn(),
  };
  (globalThis as Record<string, unknown>).window = { go: { app: new Proxy({}, { get: () => App }) }, runtime };
});

afterEach(() => {
  delete (globalThis as Record<string, unknown>).window;
});

describe('api calls', () => {
  it('passes arguments through to the bound methods', async () => {
    App.StartTurn = vi.fn(async () => ({ stream_id: 'st', user_message: { id: 'm' } }));
    App.StreamSince = vi.fn(async () => [{ seq: 3 }]);
    App.Cancel = vi.fn(async () => undefined);
    await expect(api.startTurn('s1', 'hi')).resolves.toMatchObject({ stream_id: 'st', user_message: { id: 'm' } });
    expect(App.StartTurn).toHaveBeenCalledWith('s1', 'hi');
    await api.streamSince('st', 2);
    expect(App.StreamSince).toHaveBeenCalledWith('st', 2);
    await api.cancel('st');
    expect(App.Cancel).toHaveBeenCalledWith('st');
  });

  it('turns a rejected call into an ApiError with the host\'s code, message and hint', async () => {
    // As Wails' ErrorFormatter sends backend.UserError.
    App.StartTurn = vi.fn(() => Promise.reject({ code: 'busy', message: 'session s1 is busy', hint: 'Wait for it to finish or press Stop.' }));
    const err = await api.startTurn('s1', 'hi').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ code: 'busy', message: 'session s1 is busy', hint: 'Wait for it to finish or press Stop.' });
    // Wails' own failures (bad arguments) are bare strings: internal, the text kept.
    App.StartTurn = vi.fn(() => Promise.reject('error parsing arguments: x'));
    expect(await api.startTurn('s1', 'hi').catch((e: unknown) => e)).toMatchObject({ code: 'internal', message: 'error parsing arguments: x' });
    // A code this window does not know (a newer host) is internal, never a wrong decision.
    App.StartTurn = vi.fn(() => Promise.reject({ code: 'brand_new', message: 'm' }));
    expect(await api.startTurn('s1', 'hi').catch((e: unknown) => e)).toMatchObject({ code: 'internal', message: 'm' });
  });

  it('holds the calls made before the first paint and sends them after it, in order', async () => {
    const sent: string[] = [];
    App.GetDraft = vi.fn(async (id: unknown) => {
      sent.push('draft ' + String(id));
      return { text: '' };
    });
    App.ListSessions = vi.fn(async () => {
      sent.push('sessions');
      return [];
    });
    let paint!: () => void;
    holdCallsUntil(new Promise<void>((r) => (paint = r)));
    const draft = api.getDraft('s1');
    const sessions = api.listSessions();
    // Not a wait for time: a call that is not held goes out synchronously, and past one
    // macrotask every microtask chain that does not wait for the paint has run.
    await new Promise((r) => setTimeout(r, 0));
    expect(sent).toEqual([]); // nothing has gone out before the paint
    paint();
    await Promise.all([draft, sessions]);
    expect(sent).toEqual(['draft s1', 'sessions']);
    // After the paint, calls go at once.
    await api.getDraft('s2');
    expect(sent).toEqual(['draft s1', 'sessions', 'draft s2']);
  });

  it('sends held calls when the paint it waited for fails too', async () => {
    App.ListSessions = vi.fn(async () => []);
    holdCallsUntil(Promise.reject(new Error('no paint')));
    await expect(api.listSessions()).resolves.toEqual([]);
    expect(App.ListSessions).toHaveBeenCalledTimes(1);
  });

  it('reports a missing backend as an ApiError too', async () => {
    (globalThis as Record<string, unknown>).window = {};
    await expect(api.listSessions()).rejects.toBeInstanceOf(ApiError);
  });

});

describe('api: shapes as the Go host sends them', () => {
  it('fills omitted message fields and accepts numeric ids', async () => {
    App.GetSession = vi.fn(async () => ({
      session: { id: 's1', active_stream_id: '' },
      messages: [{ id: 7, session_id: 's1', position: 0, role: 'user', content: 'hi', created_at: 1 }],
    }));
    App.StartTurn = vi.fn(async () => ({ stream_id: 'st', user_message: { id: 8, role: 'user', content: 'x' } }));
    const v = await api.getSession('s1');
    expect(v.messages[0]).toMatchObject({ id: 7, reasoning: '', kind: '', stream_id: '', content: 'hi' });
    const t = await api.startTurn('s1', 'x');
    expect(t.user_message).toMatchObject({ id: 8, reasoning: '', kind: '', stream_id: '' });
  });
});

describe('api: approvals, clarify, vault, allowlist', () => {
  it('passes the card answers through to the bound methods', async () => {
    for (const m of ['RespondApproval', 'SetYolo', 'RespondClarify', 'RemoveAllowlist']) App[m] = vi.fn(async () => undefined);
    await api.respondApproval('s1', 'a1', 'session');
    expect(App.RespondApproval).toHaveBeenCalledWith('s1', 'a1', 'session');
    await api.setYolo('s1', true, 'a1');
    expect(App.SetYolo).toHaveBeenCalledWith('s1', true, 'a1');
    await api.respondClarify('s1', 'c1', ['a', ['b', 'c']]);
    expect(App.RespondClarify).toHaveBeenCalledWith('s1', 'c1', ['a', ['b', 'c']]);
    await api.removeAllowlist('recursive_delete');
    expect(App.RemoveAllowlist).toHaveBeenCalledWith('recursive_delete');
  });

  it('marks a stale refusal', async () => {
    App.RespondApproval = vi.fn(() => Promise.reject({ code: 'stale', message: 'this approval (a1) is no longer waiting', hint: '' }));
    const err = await api.respondApproval('s1', 'a1', 'once').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).stale).toBe(true);
    App.RespondApproval = vi.fn(() => Promise.reject({ code: 'agent_unavailable', message: 'stale: the agent is not running', hint: '' }));
    const other = await api.respondApproval('s1', 'a1', 'once').catch((e: unknown) => e);
    expect((other as ApiError).stale).toBe(false);
  });

  it('sends the vault answer as its own object and reads the reply', async () => {
    App.RespondVault = vi.fn(async () => ({ ok: true, kept: 'keychain' }));
    const answer = { value: 's3cr3t', use_saved: false, decline: false };
    await expect(api.respondVault('s1', 'v1', answer, true)).resolves.toEqual({ ok: true, kept: 'keychain' });
    expect(App.RespondVault).toHaveBeenCalledWith('s1', 'v1', { value: 's3cr3t', use_saved: false, decline: false }, true);
    App.RespondVault = vi.fn(async () => null);
    await expect(api.respondVault('s1', 'v1', { value: '', use_saved: false, decline: true }, false)).resolves.toEqual({ ok: true, kept: 'declined' });
  });

  it('normalises GetPending and reads GetAllowlist', async () => {
    App.GetPending = vi.fn(async () => ({ approval: null, clarify: null, approval_count: 0, clarify_count: 0, yolo: false }));
    await expect(api.getPending('s1')).resolves.toEqual({ approval: null, clarify: null, approval_count: 0, clarify_count: 0, yolo: false });
    expect(App.GetPending).toHaveBeenCalledWith('s1');
    // Go sends every member and never null for the list (TestBoundResultsHaveNoNullLists).
    App.GetAllowlist = vi.fn(async () => [{ pattern: 'sudo', description: 'runs as root', added_at: 5 }]);
    await expect(api.getAllowlist()).resolves.toEqual([{ pattern: 'sudo', description: 'runs as root', added_at: 5 }]);
  });

  it('keeps the tool calls of saved rows and drops empty ones', async () => {
    const calls = [{ id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{}' } }];
    App.GetSession = vi.fn(async () => ({
      session: { id: 's1', active_stream_id: '' },
      messages: [
        { id: 1, role: 'assistant', content: null, tool_calls: calls },
        { id: 2, role: 'assistant', content: 'x', tool_calls: null },
      ],
    }));
    const v = await api.getSession('s1');
    expect(v.messages[0].tool_calls).toEqual(calls);
    expect(v.messages[0].content).toBe('');
    expect('tool_calls' in v.messages[1]).toBe(false);
  });
});

describe('api events', () => {
  it('passes open_session requests on', () => {
    const ids: string[] = [];
    api.onOpenSession((id) => ids.push(id));
    handlers.get('open_session')!({ session_id: 's9' });
    handlers.get('open_session')!({});
    expect(ids).toEqual(['s9']);
  });

  it('subscribes to frame, sessions_changed and sidecar_status', () => {
    const frames: unknown[] = [];
    let changed = 0;
    const statuses: unknown[] = [];
    const offs = [
      api.onFrame((f) => frames.push(f)),
      api.onSessionsChanged(() => changed++),
      api.onSidecarStatus((s) => statuses.push(s)),
    ];
    expect(runtime.EventsOnMultiple).toHaveBeenCalledWith('frames', expect.any(Function), -1);
    handlers.get('frames')!([{ seq: 1 }, null, { seq: 2 }]); // a batch, in order; null ignored
    handlers.get('frames')!(null); // ignored
    handlers.get('frames')!({ seq: 3 }); // not a batch: ignored
    handlers.get('sessions_changed')!();
    handlers.get('sidecar_status')!({ state: 'ready' });
    expect(frames).toEqual([{ seq: 1 }, { seq: 2 }]);
    expect(changed).toBe(1);
    expect(statuses).toEqual([{ state: 'ready' }]);
    offs.forEach((off) => off());
    expect(handlers.size).toBe(0);
  });

  it('gives the other frames of a batch to a callback that threw on one, and throws its error again on its own', () => {
    const later: (() => void)[] = [];
    const spy = vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((fn) => void later.push(fn));
    try {
      const seen: number[] = [];
      const off = api.onFrame((f) => {
        if (f.seq === 2) throw new Error('bad frame');
        seen.push(f.seq);
      });
      handlers.get('frames')!([{ seq: 1 }, { seq: 2 }, { seq: 3 }]);
      expect(seen).toEqual([1, 3]);
      expect(later).toHaveLength(1);
      expect(() => later[0]()).toThrow('bad frame');
      off();
    } finally {
      spy.mockRestore();
    }
  });

  it('opens URLs with the runtime', () => {
    api.openURL('https://example.com');
    expect(runtime.BrowserOpenURL).toHaveBeenCalledWith('https://example.com');
  });
});

describe('errorMessage', () => {
  it('reads strings, Errors and message objects', () => {
    expect(errorMessage('plain')).toBe('plain');
    expect(errorMessage(new Error('boom'))).toBe('boom');
    expect(errorMessage({ message: 'obj' })).toBe('obj');
    expect(errorMessage({ code: 1 })).toBe('{"code":1}');
    expect(errorMessage(undefined)).toBe('undefined');
  });
});
