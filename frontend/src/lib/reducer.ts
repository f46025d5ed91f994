// The one pure reducer that turns a stream's frames into view state.
//
// reduce(state, frame) never mutates `state`. Frames of another stream and frames whose
// seq is not newer than the last one applied are ignored, so replaying a stream
// (StreamSince) over frames that already arrived live changes nothing. Unknown events
// only advance lastSeq.
//
// Besides frames, pure transforms change the card and steer queues: mergePending (a
// GetPending snapshot), withdrawApproval and withdrawClarify (an answer the host took,
// or a card it called stale), addSteer / mergeSteers / dropSteer (Steer's answer, a
// PendingSteers snapshot, a withdrawn steer). They never touch lastSeq, so frames apply
// on top as usual.

import { toToolRef, toToolResult } from './mcp';
import { asRecord, str, toApproval, toClarify, toEditDiff, toTodos, type ToolView } from './cards';
import type {
  AppErrorData,
  ApprovalData,
  CancelData,
  ClarifyData,
  DoneData,
  Frame,
  FrameEvent,
  MessageView,
  PendingView,
  RunStatus,
  RunStatusKind,
  SteerInfo,
  TodoItem,
  Usage,
} from './protocol';
import { APP_ERROR_TYPE_VALUES, COST_SOURCE_VALUES, oneOf, RESULT_STATUS_VALUES } from './protocol';

export interface StreamNotice {
  event: 'status' | 'warning';
  /** status.kind or warning.type */
  kind: string;
  message: string;
}

/**
 * A runtime's note under a key (a notice frame): a newer notice of the same key replaces
 * it, notice_clear of the key ends it, and it is not shown after expiresAt (epoch
 * milliseconds; 0: no expiry).
 */
export interface KeyedNotice {
  key: string;
  text: string;
  /** info, warning or error (anything else is shown as info) */
  level: 'info' | 'warning' | 'error';
  expiresAt: number;
}

/** The turn's error (an apperror frame). */
export type StreamError = AppErrorData;

/**
 * The live answer in arrival order: text runs, the tool calls between them, and the
 * queued messages the agent read at that point (`steer`, shown as user bubbles).
 */
export type LiveItem =
  | { kind: 'text'; text: string }
  | { kind: 'tool'; tid: string }
  | { kind: 'steer'; id: string; text: string };

/** A tool call of the live stream (a ToolView keyed by tid, plus its arguments). */
export interface ToolRun extends ToolView {
  args: Record<string, unknown>;
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
  /** The last metering guessed the output count from token deltas. */
  usageEstimated: boolean;
  tps: number | null;
  notices: StreamNotice[];
  /** The runtime's keyed notices (notice / notice_clear), oldest first, unique by key. */
  keyed: KeyedNotice[];
  title: string | null;
  done: DoneData | null;
  error: StreamError | null;
  cancelled: boolean;
  /** From cancel: whether part of an answer was kept. */
  partial: boolean;
  /** stream_end seen: the window re-reads the session and drops this state. */
  ended: boolean;
  /** Text runs and tool calls in the order they came. */
  items: LiveItem[];
  /** Tool calls in the order they started, unique by tid (id). */
  tools: ToolRun[];
  /** The session's todo list as last sent (null before any). */
  todos: TodoItem[] | null;
  /** Approvals waiting, oldest (the head) first, unique by approval_id. */
  approvals: ApprovalData[];
  /** The host's count of waiting approvals (pending_count of the newest frame). */
  approvalCount: number;
  /** Clarify and vault prompts waiting, oldest first, unique by clarify_id. */
  clarifies: ClarifyData[];
  clarifyCount: number;
  /** Settled cards ("a:<id>" / "c:<id>"), newest last, so nothing settled comes back. */
  settled: string[];
  /** Messages queued for the agent, oldest first (steer_queue: the latest wins). */
  steers: SteerInfo[];
  /** Steers read or withdrawn ("<id>"), newest last: a late snapshot cannot revive them. */
  steersSettled: string[];
  /** From cancel: queued messages the agent never read (they go back to the composer). */
  unsentSteers: string[];
}

/** How many status/warning notices a stream keeps (the newest). */
export const MAX_NOTICES = 5;
/** How many keyed notices a stream keeps (the newest keys). */
export const MAX_KEYED = 8;
/** The longest notice text kept (characters). */
const NOTICE_MAX = 500;
/** How many settled card ids a stream remembers. */
export const MAX_SETTLED = 200;

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
    usageEstimated: false,
    tps: null,
    notices: [],
    keyed: [],
    title: null,
    done: null,
    error: null,
    cancelled: false,
    partial: false,
    ended: false,
    items: [],
    tools: [],
    todos: null,
    approvals: [],
    approvalCount: 0,
    clarifies: [],
    clarifyCount: 0,
    settled: [],
    steers: [],
    steersSettled: [],
    unsentSteers: [],
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

  // Typed by the generated contract: a case for a name Go does not declare fails to
  // compile. Unknown names (a newer host) fall to default.
  switch (frame.event as FrameEvent) {
    case 'user_message': {
      const m = asRecord(d.message);
      if (typeof m.id !== 'undefined') next.userMessage = m as unknown as MessageView;
      return next;
    }
    case 'token': {
      const t = str(d.text);
      next.text = state.text + t;
      if (t) next.items = appendText(state.items, t);
      return next;
    }
    case 'interim_assistant': {
      // Assistant prose between tool calls, sent whole: a text run of its own.
      const t = str(d.text);
      if (!t) return next;
      const last = state.items.at(-1);
      const sep = last?.kind === 'text' && last.text && !last.text.endsWith('\n\n') ? '\n\n' : '';
      next.text = state.text + sep + t;
      next.items = appendText(state.items, sep + t);
      return next;
    }
    case 'notice': {
      const key = str(d.key);
      const text = str(d.text).slice(0, NOTICE_MAX);
      if (!key || !text) return next;
      const level: KeyedNotice['level'] = d.level === 'warning' || d.level === 'error' ? d.level : 'info';
      const expiresAt = typeof d.expires_at === 'number' && d.expires_at > 0 ? d.expires_at : 0;
      next.keyed = [...state.keyed.filter((n) => n.key !== key), { key, text, level, expiresAt }].slice(-MAX_KEYED);
      return next;
    }
    case 'notice_clear': {
      const key = str(d.key);
      if (key) next.keyed = state.keyed.filter((n) => n.key !== key);
      return next;
    }
    case 'reasoning':
      next.reasoning = state.reasoning + str(d.text);
      return next;
    case 'usage':
      next.usage = usage(d) ?? state.usage;
      return next;
    case 'metering':
      next.usage = usage(asRecord(d.usage)) ?? state.usage;
      next.usageEstimated = d.estimated === true;
      if (typeof d.tps === 'number') next.tps = d.tps;
      return next;
    case 'steer_queue': {
      // The whole queue; a frame of the sidecar (data.text) is the host's business only.
      if (!Array.isArray(d.steers)) return next;
      next.steers = toSteers(d.steers).filter((x) => !state.steersSettled.includes(x.id));
      return next;
    }
    case 'steer_consumed': {
      const id = str(d.id);
      if (!id) return next;
      next.steers = state.steers.filter((x) => x.id !== id);
      next.steersSettled = settle(state.steersSettled, id);
      if (!state.items.some((x) => x.kind === 'steer' && x.id === id)) {
        const text = str(d.text) || state.steers.find((x) => x.id === id)?.text || '';
        next.items = [...state.items, { kind: 'steer', id, text }];
      }
      return next;
    }
    case 'steer_withdrawn': {
      const id = str(d.id);
      if (!id) return next;
      next.steers = state.steers.filter((x) => x.id !== id);
      next.steersSettled = settle(state.steersSettled, id);
      return next;
    }
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
    case 'tool': {
      const tid = str(d.tid);
      if (!tid) return next;
      const args = asRecord(d.args);
      const i = state.tools.findIndex((t) => t.id === tid);
      if (i >= 0) {
        // A repeated start: keep the run, refresh what it shows.
        next.tools = replaceAt(state.tools, i, { ...state.tools[i], name: str(d.name) || state.tools[i].name, args, keyArg: str(d.key_arg) || state.tools[i].keyArg });
        return next;
      }
      const ref = toToolRef(d.mcp);
      next.tools = [...state.tools, { ...newRun(tid, str(d.name), args, str(d.key_arg)), ...(ref ? { mcp: ref } : {}) }];
      next.items = [...state.items, { kind: 'tool', tid }];
      return next;
    }
    case 'tool_complete': {
      const tid = str(d.tid);
      if (!tid) return next;
      let i = state.tools.findIndex((t) => t.id === tid);
      let tools = state.tools;
      if (i < 0) {
        // Its start was never seen: show the result all the same.
        tools = [...tools, newRun(tid, str(d.name), {}, '')];
        next.items = [...state.items, { kind: 'tool', tid }];
        i = tools.length - 1;
      }
      const duration = typeof d.duration === 'number' ? d.duration : typeof d.duration_s === 'number' ? d.duration_s : null;
      next.tools = replaceAt(tools, i, {
        ...tools[i],
        name: tools[i].name || str(d.name),
        status: 'done',
        isError: d.is_error === true,
        duration: duration !== null && Number.isFinite(duration) ? duration : null,
        output: str(d.preview),
        result: d.raw_result && typeof d.raw_result === 'object' && !Array.isArray(d.raw_result) ? (d.raw_result as Record<string, unknown>) : null,
        diff: str(d.result_diff),
        editDiff: toEditDiff(d.edit_diff),
        ...(d.mcp ? { mcpResult: toToolResult(d.mcp) } : {}),
      });
      const todos = toTodos(d.todo_result);
      if (todos) next.todos = todos;
      return next;
    }
    case 'todo_state': {
      const todos = toTodos(d);
      if (todos) next.todos = todos;
      return next;
    }
    case 'approval': {
      const a = toApproval(d);
      if (!a || state.settled.includes(`a:${a.approval_id}`)) return next;
      next.approvals = upsert(state.approvals, a, (x) => x.approval_id === a.approval_id);
      next.approvalCount = a.pending_count;
      return next;
    }
    case 'approval_resolved': {
      const id = str(d.approval_id);
      if (!id) return next;
      next.approvals = state.approvals.filter((x) => x.approval_id !== id);
      next.approvalCount = count(d.pending_count, next.approvals.length);
      next.settled = settle(state.settled, `a:${id}`);
      return next;
    }
    case 'clarify': {
      const c = toClarify(d);
      if (!c || state.settled.includes(`c:${c.clarify_id}`)) return next;
      next.clarifies = upsert(state.clarifies, c, (x) => x.clarify_id === c.clarify_id);
      next.clarifyCount = c.pending_count;
      return next;
    }
    case 'clarify_resolved': {
      const id = str(d.clarify_id);
      if (!id) return next;
      next.clarifies = state.clarifies.filter((x) => x.clarify_id !== id);
      next.clarifyCount = count(d.pending_count, next.clarifies.length);
      next.settled = settle(state.settled, `c:${id}`);
      return next;
    }
    case 'done': {
      const u = usage(asRecord(d.usage)) ?? state.usage;
      next.done = {
        usage: u ?? emptyUsage(),
        duration_seconds: num(d.duration_seconds),
        tps: num(d.tps),
        terminal_state: oneOf(RESULT_STATUS_VALUES, d.terminal_state, 'completed'),
        tool_limit_reached: d.tool_limit_reached === true,
        cost_source: oneOf(COST_SOURCE_VALUES, d.cost_source, ''),
        model: str(d.model),
        context: { used_tokens: num(asRecord(d.context).used_tokens), context_length: num(asRecord(d.context).context_length) },
      };
      next.usage = u;
      next.usageEstimated = false;
      if (typeof d.tps === 'number') next.tps = d.tps;
      next.runStatus = null;
      return next;
    }
    case 'apperror': {
      const e: AppErrorData = {
        type: oneOf(APP_ERROR_TYPE_VALUES, d.type, 'error'),
        label: str(d.label),
        message: str(d.message),
        hint: str(d.hint),
      };
      next.error = e;
      next.runStatus = null;
      next.tools = interruptRunning(state.tools);
      return next;
    }
    case 'cancel': {
      const c = d as Partial<CancelData>;
      next.cancelled = true;
      next.partial = c.partial === true;
      next.runStatus = null;
      next.tools = interruptRunning(state.tools);
      next.unsentSteers = Array.isArray(c.unsent_steers) ? c.unsent_steers.filter((t): t is string => typeof t === 'string' && t !== '') : [];
      // Nothing stays queued: what the agent did not read goes back to the composer.
      next.steers = [];
      return next;
    }
    case 'stream_end':
      // Nothing can wait for an answer once the stream is over.
      next.ended = true;
      next.runStatus = null;
      next.tools = interruptRunning(state.tools);
      next.approvals = [];
      next.approvalCount = 0;
      next.clarifies = [];
      next.clarifyCount = 0;
      // Steers left over become the host's follow-up turn (a stream of its own).
      next.steers = [];
      return next;
    default:
      // Frames of later views only advance lastSeq.
      return next;
  }
}

/** Applies frames in order (the caller sorts when they may arrive out of order). */
export function reduceAll(state: StreamState, frames: readonly Frame[]): StreamState {
  let s = state;
  for (const f of frames) s = reduce(s, f);
  return s;
}

// ---- card queues outside frames ------------------------------------------------------

/**
 * Folds a GetPending snapshot in: a head the stream does not know (and has not seen
 * settled) goes first in its queue, and the host's counts are taken when they are
 * larger. A snapshot whose head was settled meanwhile is older than the frames: its
 * counts are ignored. Idempotent.
 */
export function mergePending(state: StreamState, p: PendingView): StreamState {
  if (state.ended) return state;
  let next = state;
  const a = p.approval;
  if (a && !state.settled.includes(`a:${a.approval_id}`)) {
    const known = state.approvals.some((x) => x.approval_id === a.approval_id);
    next = {
      ...next,
      approvals: known ? next.approvals : [a, ...next.approvals],
      approvalCount: Math.max(next.approvalCount, p.approval_count, known ? 0 : next.approvals.length + 1),
    };
  } else if (!a && state.approvals.length === 0 && p.approval_count === 0 && state.approvalCount !== 0) {
    next = { ...next, approvalCount: 0 };
  }
  const c = p.clarify;
  if (c && !state.settled.includes(`c:${c.clarify_id}`)) {
    const known = state.clarifies.some((x) => x.clarify_id === c.clarify_id);
    next = {
      ...next,
      clarifies: known ? next.clarifies : [c, ...next.clarifies],
      clarifyCount: Math.max(next.clarifyCount, p.clarify_count, known ? 0 : next.clarifies.length + 1),
    };
  } else if (!c && state.clarifies.length === 0 && p.clarify_count === 0 && state.clarifyCount !== 0) {
    next = { ...next, clarifyCount: 0 };
  }
  return next;
}

/**
 * Takes an approval card away. `settled`: the host took an answer for it, so a late
 * snapshot may not bring it back; otherwise (a stale card) a snapshot that still lists
 * it as the head shows it again.
 */
export function withdrawApproval(state: StreamState, id: string, settled: boolean): StreamState {
  const had = state.approvals.some((x) => x.approval_id === id);
  return {
    ...state,
    approvals: state.approvals.filter((x) => x.approval_id !== id),
    approvalCount: had ? Math.max(0, state.approvalCount - 1) : state.approvalCount,
    settled: settled ? settle(state.settled, `a:${id}`) : state.settled,
  };
}

/** Takes a clarify or vault card away; see withdrawApproval. */
export function withdrawClarify(state: StreamState, id: string, settled: boolean): StreamState {
  const had = state.clarifies.some((x) => x.clarify_id === id);
  return {
    ...state,
    clarifies: state.clarifies.filter((x) => x.clarify_id !== id),
    clarifyCount: had ? Math.max(0, state.clarifyCount - 1) : state.clarifyCount,
    settled: settled ? settle(state.settled, `c:${id}`) : state.settled,
  };
}

// ---- the steer queue outside frames --------------------------------------------------

/**
 * Adds a steer Steer just queued (its steer_queue frame may come later, or may have
 * come already). A steer already read or withdrawn is not added. Idempotent.
 */
export function addSteer(state: StreamState, s: SteerInfo): StreamState {
  if (state.ended || state.cancelled || !s.id) return state;
  if (state.steersSettled.includes(s.id) || state.steers.some((x) => x.id === s.id)) return state;
  return { ...state, steers: [...state.steers, s] };
}

/**
 * Folds a PendingSteers snapshot in: the steers it lists that the stream has not seen
 * read or withdrawn are added (in the snapshot's order, after the known ones); a
 * snapshot never removes a steer (the frames do). Idempotent.
 */
export function mergeSteers(state: StreamState, list: readonly SteerInfo[]): StreamState {
  let next = state;
  for (const s of list) next = addSteer(next, s);
  return next;
}

/** Takes a steer off the queue (withdrawn here, or the host says it is gone). */
export function dropSteer(state: StreamState, id: string, settled: boolean): StreamState {
  if (!state.steers.some((x) => x.id === id) && (!settled || state.steersSettled.includes(id))) return state;
  return {
    ...state,
    steers: state.steers.filter((x) => x.id !== id),
    steersSettled: settled ? settle(state.steersSettled, id) : state.steersSettled,
  };
}

/** How many cards of a queue wait: the host's count, at least the known entries. */
export function waiting(queueLength: number, hostCount: number): number {
  return Math.max(queueLength, hostCount);
}

function appendText(items: LiveItem[], t: string): LiveItem[] {
  const last = items[items.length - 1];
  if (last && last.kind === 'text') return replaceAt(items, items.length - 1, { kind: 'text', text: last.text + t });
  return [...items, { kind: 'text', text: t }];
}

function newRun(tid: string, name: string, args: Record<string, unknown>, keyArg: string): ToolRun {
  return { id: tid, name, args, keyArg, status: 'running', isError: false, duration: null, output: '', diff: '', editDiff: null };
}

function interruptRunning(tools: ToolRun[]): ToolRun[] {
  return tools.some((t) => t.status === 'running')
    ? tools.map((t) => (t.status === 'running' ? { ...t, status: 'interrupted' } : t))
    : tools;
}

function replaceAt<T>(list: readonly T[], i: number, v: T): T[] {
  const out = [...list];
  out[i] = v;
  return out;
}

function upsert<T>(list: readonly T[], v: T, same: (x: T) => boolean): T[] {
  const i = list.findIndex(same);
  return i >= 0 ? replaceAt(list, i, v) : [...list, v];
}

function settle(list: readonly string[], key: string): string[] {
  if (list.includes(key)) return list as string[];
  return [...list, key].slice(-MAX_SETTLED);
}

function count(v: unknown, fallback: number): number {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? Math.floor(v) : fallback;
}

export function emptyUsage(): Usage {
  return { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 };
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

function toSteers(list: unknown[]): SteerInfo[] {
  const out: SteerInfo[] = [];
  for (const raw of list) {
    const x = asRecord(raw);
    const id = str(x.id);
    if (!id || out.some((y) => y.id === id)) continue;
    out.push({ id, text: str(x.text), created_at: num(x.created_at) });
  }
  return out;
}

function runStatus(d: Record<string, unknown>): RunStatus | null {
  const s = d.status;
  if (typeof s !== 'string' || !RUN_STATUSES.includes(s as RunStatusKind)) return null;
  const rs: RunStatus = { status: s as RunStatusKind };
  if (typeof d.until === 'number') rs.until = d.until;
  if (typeof d.provider === 'string' && d.provider) rs.provider = d.provider;
  if (typeof d.progress_percent === 'number') rs.progress_percent = d.progress_percent;
  if (typeof d.detail === 'string' && d.detail.trim()) rs.detail = d.detail.trim().slice(0, 300);
  return rs;
}
