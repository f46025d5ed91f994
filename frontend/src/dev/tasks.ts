// DEV ONLY: background tasks and side questions for the dev mock (src/dev/mock.ts).
// Tasks live in memory per parent session, at most `maxRunning` run at once and the rest
// wait in one queue (positions over every session), as on the host; every change emits
// `background_tasks` with the parent's whole list. A side question streams a canned
// answer as the frames of a throwaway session id. `?scenario=tasks` seeds a running
// task, one waiting for an approval, a queued one and a completed one with a result.

import { fail } from './fail';
import type { BackgroundTask, TaskResult } from '../lib/protocol';

export interface TasksHost {
  emit: (name: string, data: unknown) => void;
  /** Opens a journal for a stream (StreamSince) before its first frame. */
  openStream: (streamId: string) => void;
  frame: (sessionId: string, streamId: string, event: string, data: unknown) => void;
}

interface Record_ extends BackgroundTask {
  result: string;
  timers: number[];
}

const tasks: Record_[] = [];
let maxRunning = 3;
let counter = 0;

const noPending = () => ({ approval: null, clarify: null, approval_count: 0, clarify_count: 0 });

function view(t: Record_): BackgroundTask {
  const queue = tasks.filter((x) => x.status === 'queued').sort((a, b) => a.created_at - b.created_at);
  const { result: _r, timers: _t, ...rest } = t;
  return JSON.parse(JSON.stringify({ ...rest, queue_position: t.status === 'queued' ? queue.indexOf(t) + 1 : 0 }));
}

export function list(parent: string): BackgroundTask[] {
  return tasks.filter((t) => t.parent_session_id === parent).sort((a, b) => b.created_at - a.created_at).map(view);
}

function publish(host: TasksHost, parent: string) {
  host.emit('background_tasks', { parent_session_id: parent, tasks: list(parent) });
}

function find(id: string): Record_ {
  const t = tasks.find((x) => x.id === id);
  if (!t) throw fail('not_found', 'that background task no longer exists');
  return t;
}

const RESULTS: Record<string, string> = {
  default: `Done. I went through the workspace and:

1. Updated the three places that mention the old flag.
2. Ran \`go test ./...\`: all packages pass.

Nothing else needed changing.`,
};

function run(host: TasksHost, t: Record_, ms = 6000) {
  t.status = 'running';
  t.started_at = Date.now();
  t.stream_id = `bt${++counter}`;
  t.timers.push(window.setTimeout(() => end(host, t, 'completed'), ms));
}

function end(host: TasksHost, t: Record_, status: 'completed' | 'failed' | 'stopped', error = '') {
  if (t.status !== 'running' && t.status !== 'queued') return;
  for (const x of t.timers) clearTimeout(x);
  t.timers = [];
  const wasRunning = t.status === 'running';
  t.status = status;
  t.ended_at = Date.now();
  t.pending = noPending();
  t.error = error;
  if (status === 'completed') {
    t.result = t.result || RESULTS.default;
    t.result_preview = preview(t.result);
  } else if (status === 'stopped' && wasRunning) {
    t.result = 'I had started on it when I was stopped.';
    t.result_preview = t.result;
  }
  startQueued(host);
  publish(host, t.parent_session_id);
}

function preview(text: string): string {
  return text.length > 280 ? `${text.slice(0, 279)}…` : text;
}

function startQueued(host: TasksHost) {
  for (;;) {
    const running = tasks.filter((t) => t.status === 'running').length;
    const next = tasks.filter((t) => t.status === 'queued').sort((a, b) => a.created_at - b.created_at)[0];
    if (!next || running >= maxRunning) return;
    run(host, next);
    publish(host, next.parent_session_id);
  }
}

function make(parent: string, prompt: string, extra: Partial<Record_> = {}): Record_ {
  const id = `task${++counter}`;
  return {
    id, parent_session_id: parent, session_id: `hidden-${id}`, stream_id: '', prompt, status: 'queued', queue_position: 0,
    result_preview: '', error: '', created_at: Date.now(), started_at: 0, ended_at: 0, pending: noPending(), result: '', timers: [], ...extra,
  };
}

export function start(host: TasksHost, parent: string, prompt: string): BackgroundTask {
  const body = prompt.trim();
  if (!body) throw fail('invalid', 'the prompt is empty');
  const t = make(parent, body);
  tasks.push(t);
  startQueued(host);
  publish(host, parent);
  return view(t);
}

export function result(id: string): TaskResult {
  const t = find(id);
  return { task_id: t.id, session_id: t.session_id, status: t.status, prompt: t.prompt, text: t.result, error: t.error, ended_at: t.ended_at };
}

export function stop(host: TasksHost, id: string) {
  end(host, find(id), 'stopped');
}

export function dismiss(host: TasksHost, id: string) {
  const t = find(id);
  end(host, t, 'stopped');
  tasks.splice(tasks.indexOf(t), 1);
  publish(host, t.parent_session_id);
}

export function getMax(): number {
  return maxRunning;
}

export function setMax(host: TasksHost, n: number) {
  if (!Number.isInteger(n) || n < 1 || n > 10) throw fail('invalid', 'the number of background tasks at once must be between 1 and 10');
  maxRunning = n;
  startQueued(host);
}

/** An approval of a task's hidden session; false when sessionId is no task's. */
export function respondApproval(host: TasksHost, sessionId: string, approvalId: string, choice: string): boolean {
  const t = tasks.find((x) => x.session_id === sessionId);
  if (!t) return false;
  if (t.pending.approval?.approval_id !== approvalId) throw fail('stale', 'that approval was already answered or has timed out');
  t.pending = noPending();
  if (choice === 'deny') {
    t.result = 'The command was denied, so the docs were not published. The build output is in `site/`.';
  } else {
    t.result = 'Published the docs to the `gh-pages` branch. The site updates in a minute or two.';
  }
  t.timers.push(window.setTimeout(() => end(host, t, 'completed'), 2500));
  publish(host, t.parent_session_id);
  return true;
}

/** The tasks scenario: four tasks of `parent`, two running at once. */
export function seed(host: TasksHost, parent: string) {
  maxRunning = 2;
  const now = Date.now();
  const done = make(parent, 'Summarise the open issues labelled "bug" and group them by area', {
    status: 'completed', created_at: now - 600_000, started_at: now - 590_000, ended_at: now - 470_000,
    result: `**12 open bugs**, in three areas:

- **Sidecar** (5): restarts under load, a stuck \`chat.steer\`, two log-rotation issues, one Windows path bug.
- **Store** (4): slow search on very long sessions, an FTS rebuild after import, two migration edge cases.
- **Window** (3): focus after a dialog, a scroll jump, and a dark-mode contrast issue.

The sidecar ones look the most urgent: #412 and #418 both lose a turn's last tokens.`,
  });
  done.result_preview = preview(done.result);
  const running = make(parent, 'Update CHANGELOG.md with everything merged since v0.3.0', {
    status: 'running', created_at: now - 100_000, started_at: now - 95_000, stream_id: 'bt-run',
  });
  const waiting = make(parent, 'Build the docs site and publish it', {
    status: 'running', created_at: now - 90_000, started_at: now - 62_000, stream_id: 'bt-wait',
    pending: {
      approval: {
        approval_id: 'task-ap1', command: 'git push origin gh-pages --force', description: 'Force-pushes a branch, replacing its history',
        pattern: 'force_push', timeout_s: 600, expires_at: 0, pending_count: 1,
      },
      clarify: null, approval_count: 1, clarify_count: 0,
    },
  });
  const queued = make(parent, 'Check every link in docs/ and list the broken ones', { created_at: now - 30_000 });
  tasks.push(done, running, waiting, queued);
  running.timers.push(window.setTimeout(() => end(host, running, 'completed'), 120_000));
  publish(host, parent);
}

// ---- side questions ------------------------------------------------------------------

interface Side {
  id: string;
  sessionId: string;
  streamId: string;
  timers: number[];
  ended: boolean;
}
const sides = new Map<string, Side>();

const SIDE_ANSWER = `Short answer: **no**, it does not block anything.

The task queue only limits how many background tasks run *at once* (Settings → Background tasks at once).
Your own turns in this chat are never queued behind them, and this side answer runs beside the turn too.`;

export function ask(host: TasksHost, parent: string, question: string) {
  const body = question.trim();
  if (!body) throw fail('invalid', 'the question is empty');
  const n = ++counter;
  const side: Side = { id: `side${n}`, sessionId: `side-copy-${n}`, streamId: `sq${n}`, timers: [], ended: false };
  sides.set(side.id, side);
  host.openStream(side.streamId);
  const push = (event: string, data: unknown) => host.frame(side.sessionId, side.streamId, event, data);
  let t = 200;
  side.timers.push(window.setTimeout(() => push('run_status', { status: 'working' }), 50));
  for (const c of SIDE_ANSWER.match(/[\s\S]{1,10}/g) ?? []) side.timers.push(window.setTimeout(() => push('token', { text: c }), (t += 35)));
  side.timers.push(window.setTimeout(() => {
    side.ended = true;
    push('done', { usage: { input_tokens: 900, output_tokens: 80, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 }, duration_seconds: 2, tps: 40, terminal_state: 'completed', tool_limit_reached: false });
    push('stream_end', {});
    sides.delete(side.id);
  }, t + 100));
  return { id: side.id, parent_session_id: parent, session_id: side.sessionId, stream_id: side.streamId, question: body };
}

export function cancelSide(host: TasksHost, id: string) {
  const side = sides.get(id);
  if (!side || side.ended) return;
  for (const x of side.timers) clearTimeout(x);
  side.ended = true;
  host.frame(side.sessionId, side.streamId, 'cancel', { partial: true });
  host.frame(side.sessionId, side.streamId, 'stream_end', {});
  sides.delete(id);
}
