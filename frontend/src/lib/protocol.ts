// Frame names and the shapes the window sees. The two name lists mirror
// sidecar/protocol/frames.go; a Go test parses this file and compares, so keep the
// exact format and order below.

import type { McpToolRef } from './mcp';

export const SIDECAR_EVENTS = [
  'token', 'reasoning', 'interim_assistant', 'tool', 'tool_complete', 'usage', 'steer_pending',
  'approval', 'approval_resolved', 'clarify', 'clarify_resolved', 'status', 'warning',
  'compressing', 'compression_finished', 'rate_limit_wait', 'provider_phase', 'notice', 'notice_clear',
  'agent_session', 'agent_title', 'agent_status', 'agent_state', 'plan',
  'approval_auto',
] as const;
export const HOST_EVENTS = [
  'user_message', 'todo_state', 'metering', 'run_status', 'steer_consumed', 'steer_withdrawn',
  'title', 'done', 'apperror', 'cancel', 'stream_end',
] as const;

export type SidecarEvent = (typeof SIDECAR_EVENTS)[number];
export type HostEvent = (typeof HOST_EVENTS)[number];
export type FrameEvent = SidecarEvent | HostEvent;

/** Events the app emits on the Wails runtime besides `frame`. */
export const APP_EVENTS = {
  frame: 'frame',
  sessionsChanged: 'sessions_changed',
  sidecarStatus: 'sidecar_status',
  /** The host asks the window to show a session: `{session_id}` (tray, self-test). */
  openSession: 'open_session',
  /** What runs and what waits for the user (backend/activity.go), whenever it changes. */
  activity: 'activity',
  /** A session's background tasks changed: `{parent_session_id, tasks}` (the whole list). */
  backgroundTasks: 'background_tasks',
} as const;

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  estimated_cost: number;
}

export type Role = 'user' | 'assistant' | 'tool' | 'system';
/** `event`: a system row the host records (e.g. "Secret GITHUB_TOKEN provided"). */
export type MessageKind = '' | 'cancelled' | 'error' | 'interrupted' | 'event';

/** A tool call of a saved assistant row (OpenAI shape; arguments is JSON text). */
export interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

export interface MessageView {
  /** The store's row id (a number from Go's int64; strings are accepted too). */
  id: string | number;
  position: number;
  role: Role;
  content: string;
  reasoning: string;
  kind: MessageKind;
  stream_id: string;
  /** epoch ms */
  created_at: number;
  session_id?: string;
  /** role tool: the tool's name */
  name?: string;
  /** role tool: the id of the call this row answers */
  tool_call_id?: string;
  /** role assistant: the tools it called */
  tool_calls?: ToolCall[];
}

export interface SessionInfo {
  id: string;
  title: string;
  title_manual: boolean;
  model: string;
  workspace: string;
  /** epoch ms */
  created_at: number;
  /** epoch ms */
  updated_at: number;
  /** "" when idle */
  active_stream_id: string;
  message_count: number;
  usage: Usage;
  /** Pinned sessions lead the list. */
  pinned: boolean;
  /** epoch ms when archived; 0 when not. Archived sessions are listed apart. */
  archived_at: number;
  /** The session this one was forked or duplicated from, "" for an original. */
  forked_from: string;
  /** Increases on every change to the session or its rows. */
  revision?: number;
  /** The id of the runtime the chat runs on ("builtin", "hermes:work", "acp:opencode"). */
  runtime?: string;
  /** The runtime's own session for the chat ("" until the agent names one). */
  agent_session_id?: string;
  /** The chat's own options (backend.ChatOptions); {} = the defaults from Settings. */
  options?: Record<string, unknown>;
}

/** One entry of the runtime pickers (backend.RuntimeOption). */
export interface RuntimeOption {
  id: string;
  /** "builtin", "hermes", "acp" */
  kind: string;
  label: string;
  /** e.g. a version and a folder */
  detail: string;
  /** It can be started now. */
  available: boolean;
  /** Why not, when it cannot. */
  problem: string;
  /** What to do about it. */
  hint: string;
  /** New chats use it. */
  default: boolean;
}

export interface SessionView {
  session: SessionInfo;
  messages: MessageView[];
}

export interface TurnStarted {
  stream_id: string;
  user_message: MessageView;
}

export interface Frame<D = unknown> {
  session_id: string;
  stream_id: string;
  seq: number;
  event: FrameEvent | (string & {});
  data: D;
}

export interface Settings {
  provider_name: string;
  base_url: string;
  model: string;
  has_api_key: boolean;
  keyring_available: boolean;
  keyring_error: string;
  data_dir: string;
  log_dir: string;
  /** The default folder new sessions work in, when the host has one. */
  workspace?: string;
}

export interface SettingsInput {
  provider_name: string;
  base_url: string;
  model: string;
  /** "" or absent keeps the current workspace. */
  workspace?: string;
  /** "" keeps the stored key */
  api_key: string;
  clear_api_key: boolean;
}

export interface ProviderCheck {
  ok: boolean;
  message: string;
  hint: string;
  models: string[];
}

export type SidecarState = 'starting' | 'ready' | 'restarting' | 'down';

export interface SidecarStatus {
  /** The runtime this sidecar serves ("builtin", "hermes:work", ...). */
  runtime_id?: string;
  state: SidecarState;
  runtime: string;
  agent_version: string;
  sidecar_version: string;
  attempt: number;
  /** seconds until the next start, while restarting (counted from when it was sent) */
  next_retry_s: number;
  error: string;
  hint: string;
  python?: string;
  protocol?: number;
  pid?: number;
  /** restarts since the app started */
  restarts?: number;
  /** epoch ms of the current process start, 0 if none */
  started_at?: number;
}

export interface StatusPaths {
  data_dir: string;
  db_path: string;
  log_dir: string;
  app_log?: string;
  sidecar_log?: string;
  cache_dir?: string;
}

export interface Status {
  sidecar: SidecarStatus;
  /** Every started runtime's sidecar, the built-in one first. */
  runtimes?: SidecarStatus[];
  /** api.getStatus fills these from `paths` when the host nests them there. */
  data_dir: string;
  log_dir: string;
  db_path: string;
  version: string;
  paths?: StatusPaths;
  uptime_s?: number;
  stderr_tail?: string[];
}

// ---- frame data -------------------------------------------------------------------

export interface UserMessageData { message: MessageView }
export interface TextData { text: string }
export type UsageData = Usage;
/** At most once a second; `estimated`: the output count is guessed from token deltas. */
export interface MeteringData { usage: Usage; tps: number; estimated?: boolean }

export type RunStatusKind = 'working' | 'compressing' | 'rate_limit_wait' | 'prompt_reading';
export interface RunStatus {
  status: RunStatusKind;
  /** epoch seconds (rate_limit_wait) */
  until?: number;
  /** rate_limit_wait: the provider that asked to wait */
  provider?: string;
  progress_percent?: number;
}
/** `run_status` data; `status: null` means the run is between phases. */
export interface RunStatusData {
  status: RunStatusKind | null;
  until?: number;
  provider?: string;
  progress_percent?: number;
}

export interface StatusData { kind: string; message: string }
export interface WarningData { type: string; message: string }
export interface TitleData { title: string }

export interface DoneData {
  usage: Usage;
  duration_seconds: number;
  tps: number;
  terminal_state: string;
  /** The agent stopped because it reached its tool-call limit for the turn. */
  tool_limit_reached: boolean;
}

export type AppErrorType =
  | 'auth_mismatch'
  | 'rate_limit'
  | 'quota_exhausted'
  | 'context_too_large'
  | 'model_not_found'
  | 'local_runtime_unavailable'
  | 'sidecar_unavailable'
  | 'agent_incompatible'
  | 'network'
  | 'error';

export interface AppErrorData {
  type: AppErrorType | (string & {});
  label: string;
  message: string;
  hint: string;
}

export interface CancelData {
  partial: boolean;
  duration_seconds?: number;
  /** Queued messages the agent never read: they go back into the composer. */
  unsent_steers?: string[];
}

// ---- steering (backend/turn/steer.go) -----------------------------------------------

/** A message queued for the running turn (PendingSteers, `steer_pending`). */
export interface SteerInfo {
  id: string;
  text: string;
  /** epoch ms */
  created_at: number;
}

/** Steer's answer: "queued" into the running turn, or "turn" (it started one). */
export interface SteerOutcome {
  steer_id: string;
  stream_id: string;
  delivery: 'queued' | 'turn' | (string & {});
  /** delivery "turn": the saved user row of the turn it started (shown at once). */
  user_message?: MessageView;
}

export interface SteerNowResult {
  withdrawn: boolean;
  redirected: boolean;
  delivery: string;
  requeued: boolean;
}

/** `steer_pending` data: the whole queue (the latest frame wins). */
export interface SteerPendingData { steers: SteerInfo[] }
/** `steer_consumed` data: the agent read this message here. */
export interface SteerConsumedData { id: string; text: string }
export interface SteerWithdrawnData { id: string }

const KNOWN = new Set<string>([...SIDECAR_EVENTS, ...HOST_EVENTS]);

/** True for a frame name declared in Go (known events may still be unhandled). */
export function isKnownEvent(name: string): name is FrameEvent {
  return KNOWN.has(name);
}

export const TERMINAL_EVENTS = ['done', 'apperror', 'cancel'] as const;

// ---- tools, todos, approvals, clarify (sidecar/protocol/tools.go + host fields) ----

export interface ToolData {
  tid: string;
  name: string;
  /** The call's arguments, long strings capped. */
  args: Record<string, unknown>;
  /** The one argument a card shows in its title (command, path, pattern). */
  key_arg: string;
}

/** The host's summary of a diff: files touched, lines added and removed. */
export interface EditDiff {
  files: string[];
  added: number;
  removed: number;
}

export type TodoStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled';

export interface TodoItem {
  id: string;
  content: string;
  status: TodoStatus | (string & {});
}

export interface ToolCompleteData {
  tid: string;
  name: string;
  /** The result as text, capped. */
  preview: string;
  raw_result?: Record<string, unknown>;
  /** A unified diff when the tool edited files; may be "". */
  result_diff?: string;
  todo_result?: { todos: TodoItem[] } | null;
  /** seconds, measured by the sidecar */
  duration_s?: number;
  // Added by the host:
  is_error?: boolean;
  /** seconds */
  duration?: number;
  edit_diff?: EditDiff | null;
}

export interface TodoStateData {
  todos: TodoItem[];
}

/** always_server answers an MCP tool's approval: every tool of that server, from now on. */
export type ApprovalChoice = 'once' | 'session' | 'always' | 'deny' | 'always_server';

export interface ApprovalData {
  approval_id: string;
  command: string;
  description: string;
  /** The key of the dangerous-command pattern it matched, e.g. recursive_delete. */
  pattern: string;
  /** seconds before the sidecar denies */
  timeout_s: number;
  /** Approvals waiting in this session, this one included. */
  pending_count: number;
  /** 'mcp' for an MCP tool call (mcp, args set); absent for a command. */
  kind?: 'mcp' | '';
  mcp?: McpToolRef | null;
  /** An MCP tool call's arguments (long strings cut). */
  args?: Record<string, unknown>;
  /** The answers the agent accepts, in order; absent: once, session, always, deny. */
  choices?: ApprovalChoice[];
  /** An ACP agent's permission request: exactly the options it offers, in its order. */
  options?: { option_id: string; name: string; kind: string; choice: string }[];
  /** The agent's title of what it asks about (ACP). */
  title?: string;
  /** A unified diff of the edit asked about (ACP). */
  diff?: string;
  /** Where it runs if allowed, e.g. "local server, sandboxed (workspace-write, no network)". */
  sandbox?: string;
}

export type ResolvedReason = 'answered' | 'timeout' | 'interrupted' | 'yolo';

export interface ApprovalResolvedData {
  approval_id: string;
  reason: ResolvedReason | (string & {});
  choice?: ApprovalChoice;
  pending_count: number;
}

export interface ClarifyQuestion {
  question: string;
  /** Up to 4; empty means free text only. */
  choices: string[];
  multi_select: boolean;
}

export interface ClarifyData {
  clarify_id: string;
  kind: 'clarify' | 'vault';
  question: string;
  choices: string[];
  multi_select: boolean;
  questions: ClarifyQuestion[];
  /** seconds before the sidecar gives up */
  timeout_s: number;
  pending_count: number;
  // kind vault:
  /** The environment variable the agent needs, e.g. GITHUB_TOKEN. */
  name?: string;
  reason?: string;
  saved_hint?: string;
  /** The system keychain holds a saved value for this name. */
  saved_available?: boolean;
  keyring_available?: boolean;
  keyring_error?: string;
  /** Said under the card when the agent keeps the value itself (Hermes writes it to its own .env). */
  agent_notice?: string;
}

export interface ClarifyResolvedData {
  clarify_id: string;
  reason: ResolvedReason | (string & {});
  pending_count: number;
}

/** One answer per clarify question: a string, or a list for a multi-select question. */
export type ClarifyAnswer = string | string[];

/** The answer to a vault prompt: exactly one of value, use_saved and decline counts. */
export interface VaultAnswer {
  value: string;
  use_saved: boolean;
  decline: boolean;
}

export interface VaultResult {
  ok: boolean;
  kept: 'keychain' | 'session' | 'declined';
}

/** GetPending: the heads of the session's queues, their lengths and its YOLO switch. */
export interface PendingView {
  approval: ApprovalData | null;
  clarify: ClarifyData | null;
  approval_count: number;
  clarify_count: number;
  yolo: boolean;
}

export interface AllowlistEntry {
  pattern: string;
  description: string;
  /** epoch ms (seconds accepted) */
  added_at: number;
}

// ---- sessions: search, drafts, export, recovery (backend/store, backend/sessions.go) --

/** Matched terms in SearchHit.snippet and title_highlight are between these. */
export const MARK_START = '\u0002';
export const MARK_END = '\u0003';

export interface SearchHit {
  session_id: string;
  title: string;
  /** The title with the matches marked; "" when the title did not match. */
  title_highlight: string;
  /** The best matching message; 0 and -1 when only the title matched. */
  message_id: number;
  position: number;
  role: string;
  /** An excerpt around the match, matches marked. */
  snippet: string;
  /** bm25, lower is better */
  rank: number;
  /** epoch ms */
  updated_at: number;
  archived: boolean;
}

export interface Draft {
  session_id: string;
  text: string;
  /** epoch ms; 0 when there is none */
  updated_at: number;
}

export type ExportFormat = 'markdown' | 'json';

export interface ExportFile {
  name: string;
  mime_type: string;
  content: string;
}

export interface RecoveryReport {
  /** The database was damaged and replaced by a fresh one holding what could be read. */
  recovered: boolean;
  backup_path: string;
  sessions: number;
  messages: number;
  message: string;
  problems: string[];
  /** epoch ms */
  at: number;
}

// ---- supervision (backend/diagnostics.go, backend/activity.go) ----------------------

export interface Diagnostics {
  app_version: string;
  host_protocol: number;
  state: SidecarState | (string & {});
  runtime: string;
  sidecar_version: string;
  agent_version: string;
  protocol: number;
  python_path: string;
  python_version: string;
  pid: number;
  sidecar_uptime_s: number;
  uptime_s: number;
  restarts: number;
  attempt: number;
  next_retry_s: number;
  error: string;
  hint: string;
  /** The sidecar's last stderr lines, at most 500, oldest first. */
  stderr_tail: string[];
  paths: StatusPaths;
  go_version: string;
  platform: string;
}

export interface RunningTurn {
  session_id: string;
  title: string;
  stream_id: string;
  /** epoch ms */
  started_at: number;
  approvals: number;
  clarifies: number;
}

export interface Activity {
  state: 'needs_you' | 'down' | 'working' | 'idle' | (string & {});
  running: RunningTurn[];
  waiting: number;
  sidecar: SidecarStatus;
}

// ---- background tasks and side questions (backend/tasks) ---------------------------

export type TaskStatus = 'queued' | 'running' | 'completed' | 'failed' | 'stopped';

/** What a task's hidden session waits for: the heads of its queues (frame data) and their lengths. */
export interface TaskPending {
  approval: ApprovalData | null;
  clarify: ClarifyData | null;
  approval_count: number;
  clarify_count: number;
}

/** A background task (StartBackgroundTask, ListBackgroundTasks, `background_tasks`). */
export interface BackgroundTask {
  id: string;
  parent_session_id: string;
  /** The task's hidden session: its cards are answered with this id. */
  session_id: string;
  /** "" while queued */
  stream_id: string;
  prompt: string;
  status: TaskStatus | (string & {});
  /** 1 for the next task to start (over every session); 0 unless queued. */
  queue_position: number;
  result_preview: string;
  error: string;
  /** epoch ms */
  created_at: number;
  /** epoch ms; 0 until it runs */
  started_at: number;
  /** epoch ms; 0 until it ends */
  ended_at: number;
  pending: TaskPending;
}

/** `background_tasks` event data: a parent session's whole task list. */
export interface BackgroundTasksUpdate {
  parent_session_id: string;
  tasks: BackgroundTask[];
}

/** GetBackgroundTaskResult: the whole answer, or why the task failed. */
export interface TaskResult {
  task_id: string;
  session_id: string;
  status: TaskStatus | (string & {});
  prompt: string;
  text: string;
  error: string;
  ended_at: number;
}

/** AskSideQuestion: follow the `frame` events of session_id / stream_id. */
export interface SideQuestion {
  id: string;
  parent_session_id: string;
  /** The throwaway copy the answer runs in (deleted by the host afterwards). */
  session_id: string;
  stream_id: string;
  question: string;
}

/** What Hermes discovery found (Settings > Hermes Agent). */
export interface HermesInstall {
  python: string;
  prefix?: string[];
  version: string;
  python_version: string;
  /** settings, ~/.hermes/hermes-agent, PATH (...), fixed */
  source: string;
  /** HERMES_HOME of the default profile */
  home: string;
  /** "default" first */
  profiles: string[];
  /** Why Hermes cannot be used ("" when it can). */
  problem?: string;
  hint?: string;
}

/** The Hermes part of Settings. */
export interface HermesSettings {
  /** Override: Hermes's Python, the `hermes` command or its folder ("" = discover). */
  path: string;
  /** Override of HERMES_HOME ("" = $HERMES_HOME or ~/.hermes). */
  home: string;
  /** The model Hermes chats use ("" = the profile's default). */
  model: string;
  install: HermesInstall;
}

/** One of the user's own Hermes sessions. */
export interface HermesSession {
  agent_session_id: string;
  title: string;
  preview: string;
  /** epoch seconds */
  started_at: number;
  message_count: number;
  /** where it was made: cli, tui, telegram, ... */
  source: string;
  /** The Talaria chat bound to it ("" when none). */
  talaria_session_id: string;
}

/** A Hermes session's transcript, read-only. */
export interface HermesHistory {
  agent_session_id: string;
  title: string;
  messages: { role: Role; content: string; reasoning?: string; name?: string }[];
}

/** The models Hermes can use (its model.options). */
export interface HermesModels {
  current: string;
  current_provider: string;
  providers: { name: string; label: string; models: string[]; current: boolean; available: boolean }[];
}
