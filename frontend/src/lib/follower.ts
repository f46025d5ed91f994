// Follows one live stream: feeds its frames to the reducer in seq order, and fills gaps
// from the host's journal (StreamSince) when the window missed frames (it opened a
// session mid-turn, was reloaded, or the first live frame it saw was not seq 1).

import type { Frame, MessageView } from './protocol';
import { initialStreamState, reduce, type StreamState } from './reducer';

export type StreamSince = (streamId: string, seq: number) => Promise<Frame[]>;

export interface FollowerOptions {
  streamId: string;
  sessionId: string;
  streamSince: StreamSince;
  onState: (state: StreamState) => void;
  /** Called when a catch-up fails; the follower retries on the next live frame. */
  onError?: (err: unknown) => void;
  userMessage?: MessageView | null;
}

export class StreamFollower {
  readonly streamId: string;
  readonly sessionId: string;
  private state: StreamState;
  /** Live frames that arrived ahead of a gap, waiting for the catch-up. */
  private pending: Frame[] = [];
  private catchingUp = false;
  private stopped = false;
  private readonly opts: FollowerOptions;

  constructor(opts: FollowerOptions) {
    this.opts = opts;
    this.streamId = opts.streamId;
    this.sessionId = opts.sessionId;
    this.state = initialStreamState(opts.streamId, opts.sessionId, opts.userMessage ?? null);
  }

  get current(): StreamState {
    return this.state;
  }

  /** Reads the whole journal of the stream so far (a window that opens mid-turn). */
  replay(): Promise<void> {
    return this.catchUp();
  }

  /** Hands a live frame of this stream to the follower. */
  push(frame: Frame): void {
    if (this.stopped || frame.stream_id !== this.streamId) return;
    if (frame.seq <= this.state.lastSeq) return;
    if (this.catchingUp || frame.seq > this.state.lastSeq + 1) {
      this.pending.push(frame);
      if (!this.catchingUp) void this.catchUp();
      return;
    }
    this.apply([frame]);
  }

  /**
   * Applies a pure transform of the state that is not a frame (a GetPending snapshot, a
   * withdrawn card). lastSeq stays as it is, so frames keep applying on top.
   */
  patch(fn: (state: StreamState) => StreamState): void {
    if (this.stopped) return;
    const s = fn(this.state);
    if (s !== this.state) {
      this.state = s;
      this.opts.onState(s);
    }
  }

  stop(): void {
    this.stopped = true;
    this.pending = [];
  }

  private apply(frames: Frame[]): void {
    let s = this.state;
    for (const f of frames) s = reduce(s, f);
    if (s !== this.state) {
      this.state = s;
      this.opts.onState(s);
    }
  }

  private async catchUp(): Promise<void> {
    if (this.catchingUp || this.stopped) return;
    this.catchingUp = true;
    try {
      // Loop: frames may keep arriving live while a fetch is in flight.
      for (;;) {
        const from = this.state.lastSeq;
        const frames = await this.opts.streamSince(this.streamId, from);
        if (this.stopped) return;
        this.apply(sortBySeq(frames ?? []));
        const held = sortBySeq(this.pending);
        this.pending = [];
        const contiguous: Frame[] = [];
        let last = this.state.lastSeq;
        let gap = false;
        for (const f of held) {
          if (f.seq <= last) continue;
          if (f.seq === last + 1 && !gap) {
            contiguous.push(f);
            last = f.seq;
          } else {
            gap = true;
            this.pending.push(f);
          }
        }
        this.apply(contiguous);
        // Stop when nothing is left waiting, or the journal had nothing new for the gap
        // (the frames are still in flight; the next live frame retries).
        if (this.pending.length === 0 || this.state.lastSeq === from) break;
      }
    } catch (err) {
      this.opts.onError?.(err);
    } finally {
      this.catchingUp = false;
    }
  }
}

function sortBySeq(frames: Frame[]): Frame[] {
  return [...frames].sort((a, b) => a.seq - b.seq);
}
