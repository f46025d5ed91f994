// Background tasks and side questions: defensive readers of what the host sends, the
// composer's slash commands (/background, /btw), and the draft merge after a stopped
// turn's unsent steers were kept in the draft by the host. Pure functions, tested.

import { asRecord, str, toApproval, toClarify } from './cards';
import type { BackgroundTask, BackgroundTasksUpdate, SideQuestion, TaskPending, TaskResult } from './protocol';
import { oneOf, TASK_STATUS_VALUES } from './protocol';

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function toTaskPending(raw: unknown): TaskPending {
  const d = asRecord(raw);
  const approval = toApproval(d.approval);
  const clarify = toClarify(d.clarify);
  return {
    approval,
    clarify,
    approval_count: Math.max(approval ? 1 : 0, Math.floor(num(d.approval_count))),
    clarify_count: Math.max(clarify ? 1 : 0, Math.floor(num(d.clarify_count))),
  };
}

/** A task with every field present; null without an id. */
export function toTask(raw: unknown): BackgroundTask | null {
  const d = asRecord(raw);
  const id = str(d.id);
  if (!id) return null;
  return {
    id,
    parent_session_id: str(d.parent_session_id),
    session_id: str(d.session_id),
    stream_id: str(d.stream_id),
    prompt: str(d.prompt),
    status: oneOf(TASK_STATUS_VALUES, d.status, 'queued'),
    queue_position: Math.max(0, Math.floor(num(d.queue_position))),
    result_preview: str(d.result_preview),
    error: str(d.error),
    created_at: num(d.created_at),
    started_at: num(d.started_at),
    ended_at: num(d.ended_at),
    pending: toTaskPending(d.pending),
  };
}

export function toTasks(raw: unknown): BackgroundTask[] {
  return (Array.isArray(raw) ? raw : []).map(toTask).filter((t): t is BackgroundTask => t !== null);
}

/** The `background_tasks` event; null when it names no session. */
export function toTasksUpdate(raw: unknown): BackgroundTasksUpdate | null {
  const d = asRecord(raw);
  const parent = str(d.parent_session_id);
  if (!parent) return null;
  return { parent_session_id: parent, tasks: toTasks(d.tasks) };
}

export function toTaskResult(raw: unknown, taskId = ''): TaskResult {
  const d = asRecord(raw);
  return {
    task_id: str(d.task_id) || taskId,
    session_id: str(d.session_id),
    status: oneOf(TASK_STATUS_VALUES, d.status, 'failed'),
    prompt: str(d.prompt),
    text: str(d.text),
    error: str(d.error),
    ended_at: num(d.ended_at),
  };
}

export function toSideQuestion(raw: unknown): SideQuestion {
  const d = asRecord(raw);
  return {
    id: str(d.id),
    parent_session_id: str(d.parent_session_id),
    session_id: str(d.session_id),
    stream_id: str(d.stream_id),
    question: str(d.question),
  };
}

export function isTaskActive(t: BackgroundTask): boolean {
  return t.status === 'queued' || t.status === 'running';
}

/** Running first, then queued by position, then the ended ones newest first. */
export function sortTasks(list: readonly BackgroundTask[]): BackgroundTask[] {
  const rank = (t: BackgroundTask) => (t.status === 'running' ? 0 : t.status === 'queued' ? 1 : 2);
  return [...list].sort((a, b) => {
    const r = rank(a) - rank(b);
    if (r) return r;
    if (a.status === 'queued') return (a.queue_position || 1e9) - (b.queue_position || 1e9);
    return Math.max(b.ended_at, b.started_at, b.created_at) - Math.max(a.ended_at, a.started_at, a.created_at);
  });
}

/** "Queued (#2)", "Running", "Completed", "Failed", "Stopped". */
export function taskStatusLabel(t: BackgroundTask): string {
  switch (t.status) {
    case 'queued':
      return t.queue_position > 0 ? `Queued (#${t.queue_position})` : 'Queued';
    case 'running':
      return t.pending.approval || t.pending.clarify ? 'Waiting for you' : 'Running';
    case 'completed':
      return 'Completed';
    case 'failed':
      return 'Failed';
    case 'stopped':
      return 'Stopped';
    default:
      return t.status;
  }
}

/** Seconds a task ran (until now while it runs); null before it started. */
export function taskElapsedS(t: BackgroundTask, now = Date.now()): number | null {
  if (!t.started_at) return null;
  const end = t.ended_at || (t.status === 'running' ? now : t.started_at);
  return Math.max(0, (end - t.started_at) / 1000);
}

/** 0:07, 2:05, 1:02:03 */
export function formatElapsed(seconds: number): string {
  const s = Math.floor(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const ss = String(s % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

// ---- slash commands ------------------------------------------------------------------

export type ComposerCommand =
  | { kind: 'message'; text: string }
  | { kind: 'background'; prompt: string }
  | { kind: 'btw'; question: string }
  /** A command without its text: show `hint`, send nothing. */
  | { kind: 'hint'; hint: string }
  /** Nothing to do (and nothing sent). */
  | { kind: 'none' };

export const BACKGROUND_HINT = 'Type what the task should do after /background, e.g. “/background update the changelog”.';

/**
 * Reads the composer's text: `/background <prompt>` starts a background task, `/btw
 * <question>` asks a side question; anything else (including `/btwx`) is a message.
 */
export function parseCommand(text: string): ComposerCommand {
  const t = text.trim();
  const m = /^\/(background|btw)(?=\s|$)\s*([\s\S]*)$/i.exec(t);
  if (!m) return t ? { kind: 'message', text: t } : { kind: 'none' };
  const rest = m[2].trim();
  if (m[1].toLowerCase() === 'btw') return rest ? { kind: 'btw', question: rest } : { kind: 'none' };
  return rest ? { kind: 'background', prompt: rest } : { kind: 'hint', hint: BACKGROUND_HINT };
}

// ---- the draft after a stopped turn ---------------------------------------------------

/**
 * The composer's text after a stopped turn whose unsent steers the host appended to the
 * saved draft. `local` is what the composer shows (maybe typed since the last save),
 * `host` the draft GetDraft returns now, `unsent` the cancel frame's texts. Nothing is
 * lost and nothing doubled: the host's draft wins when it extends what is on screen;
 * otherwise what is on screen stays and each unsent text it does not hold yet is added
 * after it (also covers a host that did not keep them, or a save that overwrote them).
 */
export function mergeDraft(local: string, host: string, unsent: readonly string[]): string {
  const l = local.replace(/\s+$/, '');
  const h = host.replace(/\s+$/, '');
  let base: string;
  if (!l.trim()) base = h;
  else if (!h.trim()) base = l;
  else if (h.startsWith(l)) base = h;
  else base = l;
  const texts = unsent.map((x) => x.trim()).filter(Boolean);
  if (texts.length === 0 || base.endsWith(texts.join('\n\n'))) return base;
  const missing = texts.filter((x) => !hasParagraph(base, x));
  if (missing.length === 0) return base;
  return base.trim() ? `${base}\n\n${missing.join('\n\n')}` : missing.join('\n\n');
}

/** True when text stands in s as whole paragraphs (bounded by blank lines or the ends). */
function hasParagraph(s: string, text: string): boolean {
  for (let i = s.indexOf(text); i >= 0; i = s.indexOf(text, i + 1)) {
    const before = s.slice(0, i);
    const after = s.slice(i + text.length);
    if ((before === '' || /\n\s*\n\s*$/.test(before)) && (after.trim() === '' || /^\s*\n\s*\n/.test(after))) return true;
  }
  return false;
}
