import { describe, expect, it } from 'vitest';
import type { Frame, MessageView } from './protocol';
import { initialStreamState, isTerminal, MAX_KEYED, MAX_NOTICES, reduce, reduceAll, type StreamState } from './reducer';

const SID = 'sess-1';
const ST = 'stream-1';

const userMsg: MessageView = {
  id: 1, session_id: SID, position: 1, role: 'user', content: 'hello', reasoning: '', kind: '', stream_id: ST, created_at: 1,
};

/** Builds a stream's frames with consecutive seq numbers. */
function frames(...items: Array<[string, unknown]>): Frame[] {
  return items.map(([event, data], i) => ({ session_id: SID, stream_id: ST, seq: i + 1, event, data }));
}

const fresh = () => initialStreamState(ST, SID);

const usage = { input_tokens: 10, output_tokens: 5, cache_read_tokens: 2, cache_write_tokens: 0, estimated_cost: 0.001 };

const happy = frames(
  ['user_message', { message: userMsg }],
  ['run_status', { status: 'working' }],
  ['reasoning', { text: 'Think' }],
  ['reasoning', { text: 'ing.' }],
  ['token', { text: 'Hel' }],
  ['token', { text: 'lo **there**' }],
  ['metering', { usage, tps: 12.5 }],
  ['title', { title: 'Greeting' }],
  ['done', { usage, duration_seconds: 1.5, tps: 13, terminal_state: 'completed' }],
  ['stream_end', {}],
);

describe('reduce: a completed turn', () => {
  const s = reduceAll(fresh(), happy);

  it('collects the user message, text and reasoning', () => {
    expect(s.userMessage).toEqual(userMsg);
    expect(s.text).toBe('Hello **there**');
    expect(s.reasoning).toBe('Thinking.');
  });

  it('keeps usage, tps, title and the done frame', () => {
    expect(s.usage).toEqual(usage);
    expect(s.tps).toBe(13);
    expect(s.title).toBe('Greeting');
    expect(s.done).toEqual({ usage, duration_seconds: 1.5, tps: 13, terminal_state: 'completed', tool_limit_reached: false, cost_source: '', model: '', context: { used_tokens: 0, context_length: 0 } });
  });

  it('ends with no run status, no error, lastSeq at the last frame', () => {
    expect(s.runStatus).toBeNull();
    expect(s.error).toBeNull();
    expect(s.cancelled).toBe(false);
    expect(s.ended).toBe(true);
    expect(s.lastSeq).toBe(10);
    expect(isTerminal(s)).toBe(true);
  });

  it('shows the run status while the turn works', () => {
    const mid = reduceAll(fresh(), happy.slice(0, 5));
    expect(mid.runStatus).toEqual({ status: 'working' });
    expect(mid.ended).toBe(false);
    expect(isTerminal(mid)).toBe(false);
  });

  it('never mutates the state it is given', () => {
    const before = reduceAll(fresh(), happy.slice(0, 4));
    const snapshot = structuredClone(before);
    reduceAll(before, happy.slice(4));
    expect(before).toEqual(snapshot);
  });
});

describe('reduce: run status', () => {
  it('keeps until and progress, and null clears it', () => {
    let s = reduceAll(fresh(), frames(
      ['run_status', { status: 'rate_limit_wait', until: 1700000000 }],
    ));
    expect(s.runStatus).toEqual({ status: 'rate_limit_wait', until: 1700000000 });
    s = reduce(s, { session_id: SID, stream_id: ST, seq: 2, event: 'run_status', data: { status: 'prompt_reading', progress_percent: 40 } });
    expect(s.runStatus).toEqual({ status: 'prompt_reading', progress_percent: 40 });
    s = reduce(s, { session_id: SID, stream_id: ST, seq: 3, event: 'run_status', data: { status: null } });
    expect(s.runStatus).toBeNull();
  });

  it("keeps the agent's own status line (agent_status, relayed as detail)", () => {
    const s = reduceAll(fresh(), frames(['run_status', { status: 'working', detail: '  Waiting for Hermes…  ' }]));
    expect(s.runStatus).toEqual({ status: 'working', detail: 'Waiting for Hermes…' });
  });

  it('treats an unknown status as none', () => {
    const s = reduceAll(fresh(), frames(['run_status', { status: 'dancing' }]));
    expect(s.runStatus).toBeNull();
  });
});

describe('reduce: errors and cancel', () => {
  it('records an apperror with its label, message and hint', () => {
    const s = reduceAll(fresh(), frames(
      ['user_message', { message: userMsg }],
      ['run_status', { status: 'working' }],
      ['token', { text: 'Partial' }],
      ['apperror', { type: 'model_not_found', label: 'Model not found', message: 'no llama3.2', hint: 'ollama pull llama3.2' }],
      ['stream_end', {}],
    ));
    expect(s.error).toEqual({ type: 'model_not_found', label: 'Model not found', message: 'no llama3.2', hint: 'ollama pull llama3.2' });
    expect(s.text).toBe('Partial');
    expect(s.runStatus).toBeNull();
    expect(s.ended).toBe(true);
    expect(s.done).toBeNull();
  });

  it('defaults a typeless apperror to "error"', () => {
    const s = reduceAll(fresh(), frames(['apperror', { message: 'boom' }]));
    expect(s.error).toEqual({ type: 'error', label: '', message: 'boom', hint: '' });
    expect(isTerminal(s)).toBe(true);
  });

  it('records a cancel and whether part of the answer was kept', () => {
    const s = reduceAll(fresh(), frames(
      ['token', { text: 'Half an ans' }],
      ['cancel', { partial: true }],
      ['stream_end', {}],
    ));
    expect(s.cancelled).toBe(true);
    expect(s.partial).toBe(true);
    expect(s.ended).toBe(true);
    const none = reduceAll(fresh(), frames(['cancel', { partial: false }]));
    expect(none.cancelled).toBe(true);
    expect(none.partial).toBe(false);
  });

  it('keeps the newest status and warning notices', () => {
    const items: Array<[string, unknown]> = [];
    for (let i = 0; i < MAX_NOTICES + 2; i++) items.push(['warning', { type: 'retry', message: `retry ${i}` }]);
    items.push(['status', { kind: 'terminal_error', message: 'gave up' }]);
    const s = reduceAll(fresh(), frames(...items));
    expect(s.notices).toHaveLength(MAX_NOTICES);
    expect(s.notices.at(-1)).toEqual({ event: 'status', kind: 'terminal_error', message: 'gave up' });
    expect(s.notices[0].message).toBe(`retry 3`);
  });
});

describe('reduce: ordering and replay', () => {
  it('ignores duplicate and old seq frames', () => {
    const s = reduceAll(fresh(), happy.slice(0, 6));
    expect(reduce(s, happy[5])).toBe(s);
    expect(reduce(s, happy[0])).toBe(s);
    expect(reduce(s, { ...happy[4], data: { text: 'XXX' } })).toBe(s);
  });

  it('ignores frames of another stream', () => {
    const s = fresh();
    expect(reduce(s, { ...happy[4], stream_id: 'other' })).toBe(s);
  });

  it('replay equals live: all at once == one by one', () => {
    const all = reduceAll(fresh(), happy);
    let inc: StreamState = fresh();
    const seen: StreamState[] = [];
    for (const f of happy) {
      inc = reduce(inc, f);
      seen.push(inc);
    }
    expect(inc).toEqual(all);
    // Every intermediate state equals the state built from that prefix.
    seen.forEach((st, i) => expect(st).toEqual(reduceAll(fresh(), happy.slice(0, i + 1))));
  });

  it('replaying an overlapping prefix changes nothing', () => {
    for (let cut = 0; cut <= happy.length; cut++) {
      const live = reduceAll(fresh(), happy.slice(0, cut));
      // StreamSince(id, 0) returns everything so far, overlapping what arrived live.
      const replayed = reduceAll(live, happy.slice(0, cut));
      expect(replayed).toEqual(live);
      // Live frames after a replay that already had them are no-ops too.
      const both = reduceAll(reduceAll(live, happy), happy.slice(cut));
      expect(both).toEqual(reduceAll(fresh(), happy));
    }
  });

  it('a replay then the rest live equals the whole stream live', () => {
    const replay = happy.slice(0, 7);
    const liveTail = happy.slice(4); // overlaps seq 5..7
    const s = reduceAll(reduceAll(fresh(), replay), liveTail);
    expect(s).toEqual(reduceAll(fresh(), happy));
  });
});

describe('reduce: unknown and malformed frames', () => {
  it('ignores unknown and not-yet-handled events except for lastSeq', () => {
    const base = reduceAll(fresh(), happy.slice(0, 5));
    for (const event of ['steer_pending', 'brand_new_event']) {
      const next = reduce(base, { session_id: SID, stream_id: ST, seq: 6, event, data: { text: 'x', tid: 't1' } });
      expect(next).toEqual({ ...base, lastSeq: 6 });
    }
    // Card and tool frames without their id only advance lastSeq too.
    for (const event of ['tool', 'tool_complete', 'approval', 'approval_resolved', 'clarify', 'clarify_resolved', 'todo_state']) {
      const next = reduce(base, { session_id: SID, stream_id: ST, seq: 6, event, data: { text: 'x' } });
      expect(next).toEqual({ ...base, lastSeq: 6 });
    }
  });

  it('survives missing or odd data', () => {
    let s = fresh();
    const odd: Frame[] = [
      { session_id: SID, stream_id: ST, seq: 1, event: 'token', data: null },
      { session_id: SID, stream_id: ST, seq: 2, event: 'token', data: { text: 42 } },
      { session_id: SID, stream_id: ST, seq: 3, event: 'reasoning', data: 'not an object' },
      { session_id: SID, stream_id: ST, seq: 4, event: 'usage', data: [] },
      { session_id: SID, stream_id: ST, seq: 5, event: 'metering', data: { usage: null, tps: 'fast' } },
      { session_id: SID, stream_id: ST, seq: 6, event: 'user_message', data: {} },
      { session_id: SID, stream_id: ST, seq: 7, event: 'done', data: undefined },
      { session_id: SID, stream_id: ST, seq: Number.NaN, event: 'token', data: { text: 'nan' } },
    ];
    s = reduceAll(s, odd);
    expect(s.text).toBe('');
    expect(s.reasoning).toBe('');
    expect(s.usage).toBeNull();
    expect(s.tps).toBeNull();
    expect(s.userMessage).toBeNull();
    expect(s.done).toEqual({
      usage: { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 },
      duration_seconds: 0, tps: 0, terminal_state: 'completed', tool_limit_reached: false, cost_source: '', model: '', context: { used_tokens: 0, context_length: 0 },
    });
    expect(s.lastSeq).toBe(7);
  });

  it('takes the usage frame as the session counters so far', () => {
    const s = reduceAll(fresh(), frames(['usage', usage]));
    expect(s.usage).toEqual(usage);
  });
});

describe('reduce: notices by key and interim text', () => {
  it('a notice replaces the one of its key, notice_clear ends it, others stay', () => {
    const s = reduceAll(fresh(), frames(
      ['notice', { key: 'model', text: 'Switched to hermes-4', level: 'info', expires_at: 0 }],
      ['notice', { key: 'quota', text: 'Quota at 90 %', level: 'warning', expires_at: 1700000005000 }],
      ['notice', { key: 'model', text: 'Switched back to hermes-4-mini', level: 'bogus', expires_at: 0 }],
    ));
    expect(s.keyed).toEqual([
      { key: 'quota', text: 'Quota at 90 %', level: 'warning', expiresAt: 1700000005000 },
      { key: 'model', text: 'Switched back to hermes-4-mini', level: 'info', expiresAt: 0 },
    ]);
    const cleared = reduce(s, { session_id: SID, stream_id: ST, seq: 4, event: 'notice_clear', data: { key: 'quota' } });
    expect(cleared.keyed.map((n) => n.key)).toEqual(['model']);
    // A notice without key or text, and a clear of an unknown key, change nothing else.
    const same = reduceAll(cleared, [
      { session_id: SID, stream_id: ST, seq: 5, event: 'notice', data: { key: '', text: 'x' } },
      { session_id: SID, stream_id: ST, seq: 6, event: 'notice', data: { key: 'k', text: '' } },
      { session_id: SID, stream_id: ST, seq: 7, event: 'notice_clear', data: { key: 'nope' } },
    ]);
    expect(same).toEqual({ ...cleared, lastSeq: 7 });
  });

  it('keeps the newest keys only, and a replay changes nothing', () => {
    const many = frames(...Array.from({ length: MAX_KEYED + 3 }, (_, i): [string, unknown] => ['notice', { key: `k${i}`, text: `n${i}`, level: 'info' }]));
    const s = reduceAll(fresh(), many);
    expect(s.keyed.length).toBe(MAX_KEYED);
    expect(s.keyed[0].key).toBe('k3');
    expect(reduceAll(s, many)).toEqual(s);
  });

  it('interim_assistant is shown as a text run of its own between tool calls', () => {
    const s = reduceAll(fresh(), frames(
      ['token', { text: 'Let me look.' }],
      ['interim_assistant', { text: 'Checking the files first.' }],
      ['tool', { tid: 't1', name: 'terminal', args: { command: 'ls' } }],
      ['interim_assistant', { text: 'Now the tests.' }],
      ['interim_assistant', { text: '' }],
    ));
    expect(s.text).toBe('Let me look.\n\nChecking the files first.Now the tests.');
    expect(s.items).toEqual([
      { kind: 'text', text: 'Let me look.\n\nChecking the files first.' },
      { kind: 'tool', tid: 't1' },
      { kind: 'text', text: 'Now the tests.' },
    ]);
  });
});
