// @vitest-environment jsdom
// A chat's figures are read for the turns of the rows shown, once each, so what a turn
// brings does not grow with the chat (issue 16).
import { describe, expect, it } from 'vitest';
import { AppStore } from './store.svelte';
import { fakeApi, message, session } from '../test/fakeApi';
import { until } from '../test/until';
import type { ChatFigures, MessageView } from './protocol';

const usage = { input_tokens: 1, output_tokens: 2, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0.01 };

function rows(turns: number): MessageView[] {
  return Array.from({ length: turns * 2 }, (_, i) =>
    message(`m${i}`, i % 2 ? 'assistant' : 'user', `row ${i}`, { position: i, stream_id: `st${Math.floor(i / 2)}` }),
  );
}

describe('ChatFeatures: turn figures', () => {
  it('asks only for the turns of rows it has no figures for, and keeps the newest cost', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 5));
    f.transcripts.set('a', rows(5));
    let cost = 0.05;
    f.api.chatFigures.mockImplementation(async (_sid: string, streams: string[]): Promise<ChatFigures> => ({
      turns: streams.map((id) => ({ stream_id: id, started_at: 1, ended_at: 2, terminal: 'completed', usage, model: 'm', context_tokens: 0, cost_source: 'provider' }) as never),
      cost, cost_known: 5, cost_unknown: 0,
      context: { used_tokens: 1, estimated: false, context_length: 8, source: 'provider', note: '', compact_at: 0.8, model: 'm', available: true },
    }));
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.messages).toHaveLength(10));
    store.chat.needFigures('a'); // the window does this when the rows shown change
    // needFigures asks at once; its answer is in when a turn's figures are.
    await until(() => expect(store.chat.turnOf('a', 'st3')?.stream_id).toBe('st3'));
    const asked = f.api.chatFigures.mock.calls.flatMap((c) => c[1]);
    expect([...new Set(asked)].sort()).toEqual(['st0', 'st1', 'st2', 'st3', 'st4']);
    expect(asked).toHaveLength(5); // each once
    // Nothing new on screen: nothing asked (needFigures would ask at once).
    const calls = f.api.chatFigures.mock.calls.length;
    store.chat.needFigures('a');
    expect(f.api.chatFigures).toHaveBeenCalledTimes(calls);
    // A turn settled: only its stream is asked for; the earlier turns are kept.
    store.messages = [...store.messages, ...rows(6).slice(10)];
    cost = 0.06;
    await store.chat.refreshFigures('a');
    expect(f.api.chatFigures.mock.calls.at(-1)?.[1]).toEqual(['st5']);
    expect(store.chat.figures.a.cost).toBe(0.06);
    expect(store.chat.figures.a.turns.map((t) => t.stream_id).sort()).toEqual(['st0', 'st1', 'st2', 'st3', 'st4', 'st5']);
    // An older answer arriving last adds its turns but not its (older) cost.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    f.api.chatFigures.mockImplementationOnce(async (_sid: string, streams: string[]) => {
      await gate;
      return { turns: streams.map((id) => ({ stream_id: id, usage }) as never), cost: 0.01, cost_known: 1, cost_unknown: 0, context: store.chat.figures.a.context };
    });
    store.messages = [...store.messages, ...rows(7).slice(12)];
    const older = store.chat.refreshFigures('a');
    cost = 0.07;
    await store.chat.refreshFigures('a');
    release();
    await older;
    expect(store.chat.figures.a.cost).toBe(0.07);
    expect(store.chat.turnOf('a', 'st6')).not.toBeNull();
  });

  // Issue 24: the figures are kept as the host's answer brought them. Deep state made a
  // proxy (with its handler's functions and a signal per field) of each turn's figures
  // as they were read, one more kept every turn for as long as the chat's figures.
  it('keeps the figures of each turn as the objects the host answered, not proxies of them', async () => {
    const f = fakeApi();
    f.sessions.set('a', session('a', 3));
    f.transcripts.set('a', rows(3));
    const answered = new Map<string, object>();
    f.api.chatFigures.mockImplementation(async (_sid: string, streams: string[]): Promise<ChatFigures> => {
      const turns = streams.map((id) => ({ stream_id: id, started_at: 1, ended_at: 2, terminal: 'completed', usage, model: 'm', context_tokens: 0, cost_source: 'provider' }) as never);
      for (const t of turns) answered.set((t as { stream_id: string }).stream_id, t);
      return { turns, cost: 0.03, cost_known: 3, cost_unknown: 0, context: { used_tokens: 1, estimated: false, context_length: 8, source: 'provider', note: '', compact_at: 0.8, model: 'm', available: true } };
    });
    const store = new AppStore(f.api);
    await store.start();
    await until(() => expect(store.messages).toHaveLength(6));
    store.chat.needFigures('a');
    await until(() => expect(store.chat.turnOf('a', 'st2')).not.toBeNull());
    for (const id of ['st0', 'st1', 'st2']) {
      expect(store.chat.turnOf('a', id)).toBe(answered.get(id));
      expect(store.chat.figures.a.turns.find((t) => t.stream_id === id)).toBe(answered.get(id));
    }
  });
});
