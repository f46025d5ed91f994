// The one pure reducer that turns a stream's frames into view state.
//
// reduce(state, frame) never mutates `state`. Frames of another stream and frames whose
// seq is not newer than the last one applied are ignored, so replaying a stream
// (StreamSince) over frames that already arrived live changes nothing. Unknown events
// only advance lastSeq.

import type {
  AppErrorData,
  CancelData,
  DoneData,
  Frame,
  MessageView,
  RunStatus,
  RunStatusKind,
  Usage,
} from './protocol';

export interface StreamNotice {
  event: 'status' | 'warning';
  /** status.kind or warning.type */
  kind: string;
  message: string;
}

export interface StreamError {
  type: string;
  label: string;
  message: string;
  hint: string;
}

export interface StreamState {
  streamId: string;
  sessionId: string;
  /** seq of the last frame applied; 0 before any. */
  lastSeq: number;
  userMessage: MessageView | null;
  /** The visible answer so far. */
  text: string;
  reasoning: string;
  runStatus: RunStatus | null;
  usage: Usage | null;
  tps: number | null;
  notices: StreamNotice[];
  title: string | null;
  done: DoneData | null;
  error: StreamError | null;
  cancelled: boolean;
  /** From cancel: whether part of an answer was kept. */
  partial: boolean;
  /** stream_end seen: the window re-reads the session and drops this state. */
  ended: boolean;
}

/** How many status/warning notices a stream keeps (the newest). */
export const MAX_NOTICES = 5;

const RUN_STATUSES: readonly RunStatusKind[] = ['working', 'compressing', 'rate_limit_wait', 'prompt_reading'];

export function initialStreamState(
  streamId: string,
  sessionId: string,
  userMessage: MessageView | null = null,
): StreamState {
  return {
    streamId,
    sessionId,
    lastSeq: 0,
    userMessage,
    text: '',
    reasoning: '',
    runStatus: null,
    usage: null,
    tps: null,
    notices: [],
    title: null,
    done: null,
    error: null,
    cancelled: false,
    partial: false,
    ended: false,
  };
}

/** True once a terminal frame (done, apperror, cancel) or stream_end was applied. */
export function isTerminal(s: StreamState): boolean {
  return s.ended || s.done !== null || s.error !== null || s.cancelled;
}

export function reduce(state: StreamState, frame: Frame): StreamState {
  if (!frame || frame.stream_id !== state.streamId) return state;
  const seq = Number(frame.seq);
  if (!Number.isFinite(seq) || seq <= state.lastSeq) return state;

  const next: StreamState = { ...state, lastSeq: seq };
  const d = asRecord(frame.data);

  switch (frame.event) {
    case 'user_message': {
      const m = asRecord(d.message);
      if (typeof m.id !== 'undefined') next.userMessage = m as unknown as MessageView;
      return next;
    }
    case 'token':
      next.text = state.text + str(d.text);
      return next;
    case 'reasoning':
      next.reasoning = state.reasoning + str(d.text);
      return next;
    case 'usage':
      next.usage = usage(d) ?? state.usage;
      return next;
    case 'metering':
      next.usage = usage(asRecord(d.usage)) ?? state.usage;
      if (typeof d.tps === 'number') next.tps = d.tps;
      return next;
    case 'run_status':
      next.runStatus = runStatus(d);
      return next;
    case 'status':
    case 'warning': {
      const event: StreamNotice['event'] = frame.event === 'status' ? 'status' : 'warning';
      const kind = str(event === 'status' ? d.kind : d.type);
      const notice: StreamNotice = { event, kind, message: str(d.message) };
      next.notices = [...state.notices, notice].slice(-MAX_NOTICES);
      return next;
    }
    case 'title':
      next.title = str(d.title);
      return next;
    case 'done': {
      const u = usage(asRecord(d.usage)) ?? state.usage;
      next.done = {
        usage: u ?? emptyUsage(),
        duration_seconds: num(d.duration_seconds),
        tps: num(d.tps),
        terminal_state: str(d.terminal_state),
      };
      next.usage = u;
      if (typeof d.tps === 'number') next.tps = d.tps;
      next.runStatus = null;
      return next;
    }
    case 'apperror': {
      const e: AppErrorData = {
        type: str(d.type) || 'error',
        label: str(d.label),
        message: str(d.message),
        hint: str(d.hint),
      };
      next.error = e;
      next.runStatus = null;
      return next;
    }
    case 'cancel': {
      next.cancelled = true;
      next.partial = (d as Partial<CancelData>).partial === true;
      next.runStatus = null;
      return next;
    }
    case 'stream_end':
      next.ended = true;
      next.runStatus = null;
      return next;
    default:
      // interim_assistant, tool, approval, clarify, todo_state, steer_* and anything
      // newer are handled by later views; here they only advance lastSeq.
      return next;
  }
}

/** Applies frames in order (the caller sorts when they may arrive out of order). */
export function reduceAll(state: StreamState, frames: readonly Frame[]): StreamState {
  let s = state;
  for (const f of frames) s = reduce(s, f);
  return s;
}

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 };
}

function asRecord(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

function usage(d: Record<string, unknown>): Usage | null {
  const keys = ['input_tokens', 'output_tokens', 'cache_read_tokens', 'cache_write_tokens', 'estimated_cost'];
  if (!keys.some((k) => typeof d[k] === 'number')) return null;
  return {
    input_tokens: num(d.input_tokens),
    output_tokens: num(d.output_tokens),
    cache_read_tokens: num(d.cache_read_tokens),
    cache_write_tokens: num(d.cache_write_tokens),
    estimated_cost: num(d.estimated_cost),
  };
}

function runStatus(d: Record<string, unknown>): RunStatus | null {
  const s = d.status;
  if (typeof s !== 'string' || !RUN_STATUSES.includes(s as RunStatusKind)) return null;
  const rs: RunStatus = { status: s as RunStatusKind };
  if (typeof d.until === 'number') rs.until = d.until;
  if (typeof d.progress_percent === 'number') rs.progress_percent = d.progress_percent;
  return rs;
}
