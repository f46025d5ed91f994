// Pure helpers for the tool, todo, approval and clarify views: they read what the host
// sends (frames, GetPending, saved transcript rows) defensively and return the shapes of
// protocol.ts, never throwing on a missing or mistyped field.

import { splitToolName, toAnnotations, toToolRef, type McpToolRef, type McpToolResult } from './mcp';
import type {
  ApprovalChoice,
  ApprovalData,
  ClarifyData,
  ClarifyQuestion,
  EditDiff,
  MessageView,
  PendingView,
  TodoItem,
  ToolCall,
} from './protocol';
import { oneOf, TODO_STATUS_VALUES } from './protocol';

export function asRecord(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

export function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/** An approval frame's data (or GetPending's head), or null when it has no id. */
export function toApproval(raw: unknown): ApprovalData | null {
  const d = asRecord(raw);
  const id = str(d.approval_id);
  if (!id) return null;
  const out: ApprovalData = {
    approval_id: id,
    command: str(d.command),
    description: str(d.description),
    pattern: str(d.pattern),
    timeout_s: Math.max(0, num(d.timeout_s)),
    expires_at: Math.max(0, num(d.expires_at)),
    pending_count: Math.max(1, Math.floor(num(d.pending_count, 1))),
    ...approvalExtras(d),
  };
  // An ACP agent's own options (its labels are text, never markup).
  const options = (Array.isArray(d.options) ? d.options : [])
    .map((o) => asRecord(o))
    .filter((o) => str(o.option_id) !== '' && str(o.name) !== '')
    .map((o) => ({ option_id: str(o.option_id), name: str(o.name), kind: str(o.kind), choice: str(o.choice) }));
  if (options.length > 0) out.options = options;
  if (str(d.title)) out.title = str(d.title);
  if (str(d.diff)) out.diff = str(d.diff);
  return out;
}

const CHOICES: readonly ApprovalChoice[] = ['once', 'session', 'always', 'always_server', 'deny'];

/** An approval's optional members: the choices offered, where it runs, an MCP tool's call. */
function approvalExtras(d: Record<string, unknown>): Partial<ApprovalData> {
  const out: Partial<ApprovalData> = {};
  const choices = strings(d.choices).filter((c): c is ApprovalChoice => (CHOICES as readonly string[]).includes(c));
  if (choices.length) out.choices = choices;
  if (str(d.sandbox)) out.sandbox = str(d.sandbox);
  if (str(d.justification)) out.justification = str(d.justification);
  // The matched part of the command (UTF-8 byte offsets), when it is one.
  const start = num(d.span_start), end = num(d.span_end);
  if (Number.isInteger(start) && Number.isInteger(end) && start >= 0 && end > start) {
    out.span_start = start;
    out.span_end = end;
  }
  const ref = d.kind === 'mcp' ? toToolRef(d.mcp) : null;
  if (ref) {
    out.kind = 'mcp';
    out.mcp = ref;
    out.args = asRecord(d.args);
  }
  return out;
}

/** A clarify frame's data; `questions` always has at least one entry for kind clarify. */
export function toClarify(raw: unknown): ClarifyData | null {
  const d = asRecord(raw);
  const id = str(d.clarify_id);
  if (!id) return null;
  const kind = d.kind === 'vault' ? 'vault' : 'clarify';
  const question = str(d.question);
  const choices = strings(d.choices).slice(0, 4);
  const multi = d.multi_select === true;
  let questions: ClarifyQuestion[] = (Array.isArray(d.questions) ? d.questions : [])
    .map((q) => asRecord(q))
    .filter((q) => typeof q.question === 'string')
    .map((q) => ({ question: str(q.question), choices: strings(q.choices).slice(0, 4), multi_select: q.multi_select === true }));
  if (questions.length === 0 && kind === 'clarify') questions = [{ question, choices, multi_select: multi }];
  const out: ClarifyData = {
    clarify_id: id,
    kind,
    question: question || questions[0]?.question || '',
    choices,
    multi_select: multi,
    questions,
    timeout_s: Math.max(0, num(d.timeout_s)),
    expires_at: Math.max(0, num(d.expires_at)),
    pending_count: Math.max(1, Math.floor(num(d.pending_count, 1))),
    saved_available: d.saved_available === true,
    // Absent means the host did not say: assume a keychain (the host refuses `remember`
    // itself when it has none).
    keyring_available: d.keyring_available !== false,
    keyring_error: str(d.keyring_error),
  };
  if (kind === 'vault') {
    out.name = str(d.name);
    out.reason = str(d.reason);
    out.saved_hint = str(d.saved_hint);
  }
  return out;
}

export function toTodos(raw: unknown): TodoItem[] | null {
  const list = asRecord(raw).todos;
  if (!Array.isArray(list)) return null;
  return list
    .map((t) => asRecord(t))
    .filter((t) => typeof t.content === 'string' || typeof t.id === 'string')
    .map((t, i) => ({ id: str(t.id) || String(i + 1), content: str(t.content), status: oneOf(TODO_STATUS_VALUES, t.status, 'pending') }));
}

export function toEditDiff(raw: unknown): EditDiff | null {
  if (raw === null || typeof raw !== 'object') return null;
  const d = asRecord(raw);
  return { files: strings(d.files), added: Math.max(0, num(d.added)), removed: Math.max(0, num(d.removed)) };
}

/** GetPending's reply with every field present. */
export function toPending(raw: unknown): PendingView {
  const d = asRecord(raw);
  const approval = toApproval(d.approval);
  const clarify = toClarify(d.clarify);
  return {
    approval,
    clarify,
    approval_count: Math.max(approval ? 1 : 0, Math.floor(num(d.approval_count))),
    clarify_count: Math.max(clarify ? 1 : 0, Math.floor(num(d.clarify_count))),
    yolo: d.yolo === true,
  };
}

// ---- tool cards ---------------------------------------------------------------------

/** What a ToolCard shows, live or from the saved transcript. */
export interface ToolView {
  id: string;
  name: string;
  keyArg: string;
  status: 'running' | 'done' | 'interrupted';
  isError: boolean;
  /** seconds; null when unknown */
  duration: number | null;
  /** The output as text (never rendered as HTML): the live preview, or the saved row's content. */
  output: string;
  /** The result object (tool_complete's raw_result), when known: ToolResult shows its fields. */
  result?: Record<string, unknown> | null;
  /** A unified diff, or "". */
  diff: string;
  editDiff: EditDiff | null;
  /** An MCP tool: its server, tool and hints (from the tool frame; for a saved row, from its name). */
  mcp?: McpToolRef | null;
  /** An MCP tool's answer as the card shows it (tool_complete's mcp member). */
  mcpResult?: McpToolResult | null;
  /** The turn that ran it (saved rows), to find its MCP answer in that turn's journal. */
  streamId?: string;
}

const KEY_ARGS = ['command', 'path', 'file_path', 'file', 'pattern', 'query', 'url', 'name', 'question'];

/** The argument a card shows in its title: the command, the path, the pattern… */
export function keyArgOf(args: Record<string, unknown>, max = 200): string {
  let v = '';
  for (const k of KEY_ARGS) {
    if (typeof args[k] === 'string' && args[k]) {
      v = args[k] as string;
      break;
    }
  }
  // clarify's questions: the first one's text, as the live card's title has it.
  if (!v && Array.isArray(args.questions)) {
    const q: unknown = args.questions[0];
    if (typeof q === 'string') v = q;
    else if (q && typeof q === 'object' && typeof (q as { question?: unknown }).question === 'string') v = (q as { question: string }).question;
  }
  if (!v && Array.isArray(args.todos)) v = `${args.todos.length} item${args.todos.length === 1 ? '' : 's'}`;
  if (!v) v = Object.values(args).find((x): x is string => typeof x === 'string' && x !== '') ?? '';
  v = v.replace(/\s+/g, ' ').trim();
  return v.length > max ? `${v.slice(0, max - 1)}…` : v;
}

/** Parses a tool call's JSON arguments; anything else is an empty object. */
export function parseArgs(text: string): Record<string, unknown> {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return {};
  }
}

/**
 * Whether a tool's result reads as a failure, by the host's rule: a non-zero exit_code,
 * an error text, or success: false.
 */
export function resultIsError(result: Record<string, unknown>): boolean {
  if (typeof result.exit_code === 'number' && result.exit_code !== 0) return true;
  if (typeof result.error === 'string' && result.error.trim() !== '') return true;
  if (result.error !== undefined && result.error !== null && typeof result.error !== 'string' && result.error !== false) return true;
  return result.success === false;
}

/** A saved tool row's content, read for a diff and an error when it is a JSON object. */
export function readToolContent(content: string): { isError: boolean; diff: string } {
  const t = content.trimStart();
  if (!t.startsWith('{')) return { isError: false, diff: '' };
  try {
    const r = asRecord(JSON.parse(t));
    return { isError: resultIsError(r), diff: str(r.diff) };
  } catch {
    return { isError: false, diff: '' };
  }
}

// ---- the saved transcript -------------------------------------------------------------

export type TranscriptItem =
  | { kind: 'message'; key: string; message: MessageView; tools: ToolView[] }
  | { kind: 'tool'; key: string; tool: ToolView }
  | { kind: 'event'; key: string; text: string }
  /** The model cut the answer above (`reason`: 'length' or 'content_filter'). */
  | { kind: 'truncated'; key: string; reason: string }
  /** Older turns were summarised here to fit the model's context (kind summary). */
  | { kind: 'summary'; key: string; message: MessageView };

function savedTool(call: ToolCall | null, row: MessageView | null, fallbackId: string): ToolView {
  const args = call ? parseArgs(str(call.function?.arguments)) : {};
  const content = row ? row.content : '';
  const read = readToolContent(content);
  return {
    id: call?.id || row?.tool_call_id || fallbackId,
    name: str(call?.function?.name) || str(row?.name) || 'tool',
    keyArg: keyArgOf(args),
    status: row ? 'done' : 'interrupted',
    isError: read.isError,
    duration: null,
    output: content,
    diff: read.diff,
    editDiff: null,
    mcp: savedMcpRef(str(call?.function?.name) || str(row?.name)),
    streamId: row?.stream_id || '',
  };
}

/** What a saved row's tool name says of an MCP tool (its hints come with the journal). */
function savedMcpRef(name: string): McpToolRef | null {
  const parts = splitToolName(name);
  return parts ? { server: parts.server, tool: parts.tool, title: '', annotations: toAnnotations({}) } : null;
}

/**
 * The saved rows as the chat shows them: an assistant row carries the cards of the tools
 * it called (each with the output of the tool row that answers it); a tool row nobody
 * called is a card of its own; `event` rows are notices; a `truncated` marker is the note
 * under an answer the model cut; other system rows are hidden.
 */
export function buildTranscript(messages: readonly MessageView[]): TranscriptItem[] {
  const results = new Map<string, MessageView>();
  for (const m of messages) {
    if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m);
  }
  const used = new Set<string>();
  const out: TranscriptItem[] = [];
  for (const m of messages) {
    const key = String(m.id);
    if (m.kind === 'event') {
      if (m.content) out.push({ kind: 'event', key, text: m.content });
      continue;
    }
    if (m.kind === 'truncated') {
      out.push({ kind: 'truncated', key, reason: m.content });
      continue;
    }
    if (m.kind === 'summary') {
      out.push({ kind: 'summary', key, message: m });
      continue;
    }
    if (m.role === 'system') continue;
    if (m.role === 'tool') {
      if (m.tool_call_id && used.has(m.tool_call_id)) continue;
      out.push({ kind: 'tool', key, tool: savedTool(null, m, key) });
      continue;
    }
    const calls = m.role === 'assistant' && Array.isArray(m.tool_calls) ? m.tool_calls : [];
    const tools = calls.map((c, i) => {
      const row = c.id ? (results.get(c.id) ?? null) : null;
      if (c.id && row) used.add(c.id);
      return savedTool(c, row, `${key}-t${i}`);
    });
    out.push({ kind: 'message', key, message: m, tools });
  }
  return out;
}

/** The todo list of the last todo tool result in a saved transcript, or null. */
export function todosFromMessages(messages: readonly MessageView[]): TodoItem[] | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'tool' || m.name !== 'todo') continue;
    try {
      const todos = toTodos(JSON.parse(m.content));
      if (todos) return todos;
    } catch {
      // not JSON: look further back
    }
  }
  return null;
}

/**
 * Where a fork from each user or assistant row ends (ForkSession keeps the rows up to
 * and including that position): the row itself plus the tool results and system rows
 * that follow it, so a fork from a row that called tools keeps their answers. Keyed by
 * the row's id (as a string).
 */
export function forkPositions(messages: readonly MessageView[]): Map<string, number> {
  const out = new Map<string, number>();
  let last: string | null = null;
  for (const m of messages) {
    if (m.role === 'user' || (m.role === 'assistant' && m.kind !== 'event')) {
      last = String(m.id);
      out.set(last, m.position);
    } else if (last !== null) {
      out.set(last, Math.max(out.get(last) ?? m.position, m.position));
    }
  }
  return out;
}
