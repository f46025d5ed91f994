import { describe, expect, it } from 'vitest';
import type { Frame, MessageView } from './protocol';
import { addSteer, dropSteer, initialStreamState, mergeSteers, reduce, reduceAll, type StreamState } from './reducer';

const SID = 'sess-1';
const ST = 'stream-1';

const userMsg: MessageView = {
  id: 1, session_id: SID, position: 0, role: 'user', content: 'Refactor the parser', reasoning: '', kind: '', stream_id: ST, created_at: 1,
};

function frames(...items: Array<[string, unknown]>): Frame[] {
  return items.map(([event, data], i) => ({ session_id: SID, stream_id: ST, seq: i + 1, event, data }));
}

const fresh = () => initialStreamState(ST, SID);
const u = (input: number, output: number, cost = 0) => ({
  input_tokens: input, output_tokens: output, cache_read_tokens: 100, cache_write_tokens: 0, estimated_cost: cost,
});
const a = { id: 'sa', text: 'use the new API', created_at: 10 };
const b = { id: 'sb', text: 'and keep the tests', created_at: 11 };
const c = { id: 'sc', text: 'never mind the docs', created_at: 12 };

// A turn that is steered twice: one steer read between two runs of text, one withdrawn,
// one still queued at the end; with run status, a rate-limit wait and metering.
const steered = frames(
  ['user_message', { message: userMsg }],
  ['run_status', { status: 'working' }],
  ['token', { text: 'Looking at the parser. ' }],
  ['metering', { usage: u(1200, 40), tps: 20, estimated: true }],
  ['steer_queue', { steers: [a] }],
  ['steer_queue', { steers: [a, b] }],
  ['tool', { tid: 't1', name: 'terminal', args: { command: 'go test ./...' }, key_arg: 'go test ./...' }],
  ['steer_consumed', { id: 'sa', text: 'use the new API' }],
  ['steer_queue', { steers: [b] }],
  ['tool_complete', { tid: 't1', name: 'terminal', preview: 'ok', is_error: false, duration: 1.2 }],
  ['run_status', { status: 'rate_limit_wait', until: 1700000012, provider: 'openrouter' }],
  ['run_status', { status: 'working' }],
  ['token', { text: 'Switching to the new API.' }],
  ['steer_queue', { steers: [b, c] }],
  ['steer_withdrawn', { id: 'sb' }],
  ['steer_queue', { steers: [c] }],
  ['metering', { usage: u(2400, 180, 0.0123), tps: 31.5, estimated: false }],
  ['run_status', { status: 'prompt_reading', progress_percent: 55 }],
  ['done', { usage: u(2500, 200, 0.013), duration_seconds: 12.5, tps: 30, terminal_state: 'completed', tool_limit_reached: true }],
  ['run_status', { status: null }],
  ['stream_end', {}],
);

describe('reduce: steering', () => {
  it('keeps the whole queue from steer_queue, the latest frame winning', () => {
    const s = reduceAll(fresh(), steered.slice(0, 6));
    expect(s.steers).toEqual([a, b]);
  });

  it('places a consumed steer in the live items between the texts around it', () => {
    const s = reduceAll(fresh(), steered.slice(0, 13));
    expect(s.items).toEqual([
      { kind: 'text', text: 'Looking at the parser. ' },
      { kind: 'tool', tid: 't1' },
      { kind: 'steer', id: 'sa', text: 'use the new API' },
      { kind: 'text', text: 'Switching to the new API.' },
    ]);
    expect(s.steers).toEqual([b]);
    expect(s.text).toBe('Looking at the parser. Switching to the new API.');
  });

  it('drops a withdrawn steer and never brings back a read or withdrawn one', () => {
    const s = reduceAll(fresh(), steered.slice(0, 16));
    expect(s.steers).toEqual([c]);
    expect(s.steersSettled).toEqual(['sa', 'sb']);
    // A late snapshot (PendingSteers) or a stale frame that still lists them.
    expect(mergeSteers(s, [a, b, c]).steers).toEqual([c]);
    const stale = reduce(s, { session_id: SID, stream_id: ST, seq: 17, event: 'steer_queue', data: { steers: [a, b, c] } });
    expect(stale.steers).toEqual([c]);
  });

  it('a consumed frame for a steer it never saw queued still shows the text, once', () => {
    let s = reduceAll(fresh(), frames(['token', { text: 'x' }], ['steer_consumed', { id: 'zz', text: 'late' }]));
    s = reduce(s, { session_id: SID, stream_id: ST, seq: 3, event: 'steer_consumed', data: { id: 'zz', text: 'late' } });
    expect(s.items.filter((i) => i.kind === 'steer')).toEqual([{ kind: 'steer', id: 'zz', text: 'late' }]);
  });

  it('ends with the run figures, the tool-limit note and an empty queue', () => {
    const s = reduceAll(fresh(), steered);
    expect(s.done).toEqual({ usage: u(2500, 200, 0.013), duration_seconds: 12.5, tps: 30, terminal_state: 'completed', tool_limit_reached: true, cost_source: '', model: '', context: { used_tokens: 0, context_length: 0 } });
    expect(s.usageEstimated).toBe(false);
    expect(s.steers).toEqual([]);
    expect(s.runStatus).toBeNull();
  });

  it('keeps the rate-limit provider and time, and the prompt-reading progress', () => {
    expect(reduceAll(fresh(), steered.slice(0, 11)).runStatus).toEqual({ status: 'rate_limit_wait', until: 1700000012, provider: 'openrouter' });
    expect(reduceAll(fresh(), steered.slice(0, 18)).runStatus).toEqual({ status: 'prompt_reading', progress_percent: 55 });
  });

  it('marks metering whose output count is estimated', () => {
    const s = reduceAll(fresh(), steered.slice(0, 4));
    expect(s.usage).toEqual(u(1200, 40));
    expect(s.usageEstimated).toBe(true);
    expect(s.tps).toBe(20);
  });

  it('a cancel hands back the unsent steers and empties the queue', () => {
    const s = reduceAll(fresh(), frames(
      ['token', { text: 'Half' }],
      ['steer_queue', { steers: [a, b] }],
      ['cancel', { partial: true, duration_seconds: 3, unsent_steers: ['use the new API', 'and keep the tests'] }],
      ['stream_end', {}],
    ));
    expect(s.cancelled).toBe(true);
    expect(s.unsentSteers).toEqual(['use the new API', 'and keep the tests']);
    expect(s.steers).toEqual([]);
    expect(s.text).toBe('Half');
  });

  it('a cancel without unsent_steers (an older host) hands back nothing', () => {
    const s = reduceAll(fresh(), frames(['cancel', { partial: false, unsent_steers: null }]));
    expect(s.unsentSteers).toEqual([]);
  });

  it('ignores steer frames with odd data', () => {
    const base = reduceAll(fresh(), frames(['steer_queue', { steers: [a] }]));
    const odd = reduceAll(base, [
      { session_id: SID, stream_id: ST, seq: 2, event: 'steer_queue', data: { text: 'the sidecar shape' } },
      { session_id: SID, stream_id: ST, seq: 3, event: 'steer_consumed', data: {} },
      { session_id: SID, stream_id: ST, seq: 4, event: 'steer_withdrawn', data: null },
      { session_id: SID, stream_id: ST, seq: 5, event: 'steer_queue', data: { steers: [{ text: 'no id' }, 7, a, a] } },
    ]);
    expect(odd.steers).toEqual([a]);
    expect(odd.items).toEqual([]);
    expect(odd.lastSeq).toBe(5);
  });
});

describe('steer transforms outside frames', () => {
  it('addSteer adds once, and never a settled steer or after the end', () => {
    let s = addSteer(fresh(), a);
    expect(addSteer(s, a)).toBe(s);
    s = reduce(s, steered[4]); // steer_queue [a]: the frame after the optimistic add
    expect(s.steers).toEqual([a]);
    const read = reduceAll(fresh(), frames(['steer_consumed', { id: 'sa', text: a.text }]));
    expect(addSteer(read, a)).toBe(read);
    const ended = reduceAll(fresh(), frames(['stream_end', {}]));
    expect(addSteer(ended, a)).toBe(ended);
  });

  it('dropSteer removes and settles; a withdrawn frame after it changes nothing more', () => {
    let s = reduceAll(fresh(), frames(['steer_queue', { steers: [a, b] }]));
    s = dropSteer(s, 'sa', true);
    expect(s.steers).toEqual([b]);
    expect(reduce(s, { session_id: SID, stream_id: ST, seq: 2, event: 'steer_withdrawn', data: { id: 'sa' } }).steers).toEqual([b]);
    expect(dropSteer(s, 'nope', false)).toBe(s);
  });

  it('transforms keep lastSeq and never mutate', () => {
    const s = reduceAll(fresh(), steered.slice(0, 6));
    const snapshot = structuredClone(s);
    const t = dropSteer(mergeSteers(addSteer(s, c), [a]), 'sb', true);
    expect(t.lastSeq).toBe(s.lastSeq);
    expect(s).toEqual(snapshot);
  });
});

describe('replay equals live with steer, run_status and metering frames', () => {
  const whole = reduceAll(fresh(), steered);

  it('one by one equals all at once, at every step', () => {
    let inc: StreamState = fresh();
    steered.forEach((f, i) => {
      inc = reduce(inc, f);
      expect(inc).toEqual(reduceAll(fresh(), steered.slice(0, i + 1)));
    });
    expect(inc).toEqual(whole);
  });

  it('an overlapping replay at any cut changes nothing', () => {
    for (let cut = 0; cut <= steered.length; cut++) {
      const live = reduceAll(fresh(), steered.slice(0, cut));
      expect(reduceAll(live, steered.slice(0, cut))).toEqual(live);
      expect(reduceAll(reduceAll(live, steered), steered.slice(cut))).toEqual(whole);
    }
  });

  it('a window that opens mid-turn (replay of a prefix, then live with overlap) ends equal', () => {
    for (let cut = 1; cut < steered.length; cut++) {
      const opened = reduceAll(fresh(), steered.slice(0, cut));
      const overlap = Math.max(0, cut - 3);
      expect(reduceAll(opened, steered.slice(overlap))).toEqual(whole);
    }
  });

  it('an optimistic addSteer in the live window does not change the end state', () => {
    // The live window adds steer b from Steer's answer before its frame arrives.
    let live = reduceAll(fresh(), steered.slice(0, 5));
    live = addSteer(live, b);
    live = reduceAll(live, steered.slice(5));
    expect(live).toEqual(whole);
  });
});
