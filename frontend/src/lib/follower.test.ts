import { describe, expect, it, vi } from 'vitest';
import { until } from '../test/until';
import { StreamFollower } from './follower';
import type { Frame } from './protocol';
import { initialStreamState, reduceAll, type StreamState } from './reducer';

const SID = 's';
const ST = 'st';

function journal(n: number): Frame[] {
  const out: Frame[] = [{ session_id: SID, stream_id: ST, seq: 1, event: 'user_message', data: { message: { id: 'u' } } }];
  for (let i = 2; i < n; i++) out.push({ session_id: SID, stream_id: ST, seq: i, event: 'token', data: { text: `${i},` } });
  out.push({ session_id: SID, stream_id: ST, seq: n, event: 'stream_end', data: {} });
  return out;
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}


describe('StreamFollower', () => {
  const all = journal(10);
  const expected = reduceAll(initialStreamState(ST, SID), all);

  it('applies in-order live frames without asking the journal', () => {
    const streamSince = vi.fn();
    let last: StreamState | null = null;
    const f = new StreamFollower({ sessionId: SID, streamId: ST, streamSince, onState: (s) => (last = s) });
    for (const fr of all) f.push(fr);
    expect(streamSince).not.toHaveBeenCalled();
    expect(last).toEqual(expected);
  });

  it('replays the journal and merges live frames that overlap it', async () => {
    const d = deferred<Frame[]>();
    const streamSince = vi.fn(() => d.promise);
    const f = new StreamFollower({ sessionId: SID, streamId: ST, streamSince, onState: () => {} });
    const replaying = f.replay();
    // Live frames 6..8 arrive while the replay is in flight.
    f.push(all[5]);
    f.push(all[6]);
    f.push(all[7]);
    d.resolve(all.slice(0, 7)); // the journal had 1..7 when it answered
    await replaying;
    expect(streamSince).toHaveBeenCalledWith(ST, 0);
    expect(f.current.lastSeq).toBe(8);
    f.push(all[8]);
    f.push(all[9]);
    expect(f.current).toEqual(expected);
  });

  it('fills a gap when the first live frame is not the next one', async () => {
    const streamSince = vi.fn(async (_id: string, seq: number) => all.filter((x) => x.seq > seq && x.seq <= 6));
    const f = new StreamFollower({ sessionId: SID, streamId: ST, streamSince, onState: () => {} });
    f.push(all[0]);
    f.push(all[1]);
    f.push(all[5]); // seq 6: 3..5 were missed
    await until(() => {
      expect(streamSince).toHaveBeenCalledWith(ST, 2);
      expect(f.current.lastSeq).toBe(6);
    });
    for (const fr of all.slice(6)) f.push(fr);
    expect(f.current).toEqual(expected);
  });

  it('ignores frames of other streams, duplicates and frames after stop', () => {
    const onState = vi.fn();
    const f = new StreamFollower({ sessionId: SID, streamId: ST, streamSince: vi.fn(), onState });
    f.push(all[0]);
    f.push(all[0]);
    f.push({ ...all[1], stream_id: 'other' });
    expect(onState).toHaveBeenCalledTimes(1);
    f.stop();
    f.push(all[1]);
    expect(onState).toHaveBeenCalledTimes(1);
  });

  it('reports a failed catch-up and retries on the next live frame', async () => {
    let fail = true;
    const streamSince = vi.fn(async (_id: string, seq: number) => {
      if (fail) throw 'agent down';
      return all.filter((x) => x.seq > seq);
    });
    const onError = vi.fn();
    const f = new StreamFollower({ sessionId: SID, streamId: ST, streamSince, onState: () => {}, onError });
    f.push(all[3]);
    await until(() => expect(onError).toHaveBeenCalledWith('agent down'));
    fail = false;
    f.push(all[4]);
    await until(() => expect(f.current).toEqual(expected));
  });

  it('starts from a known user message', () => {
    const f = new StreamFollower({
      sessionId: SID, streamId: ST, streamSince: vi.fn(), onState: () => {},
      userMessage: { id: 1, session_id: SID, position: 1, role: 'user', content: 'hi', reasoning: '', kind: '', stream_id: ST, created_at: 0 },
    });
    expect(f.current.userMessage?.content).toBe('hi');
  });
});
