// A fake backend for store and component tests: sessions and messages in memory,
// journals per stream, pending cards per session, event hooks. Test code only.

import { vi } from 'vitest';
import type { Api } from '../lib/api';
import { ApiError } from '../lib/errors';
import type {
  AgentState,
  Activity,
  AllowlistEntry,
  BackgroundTask,
  BackgroundTasksUpdate,
  ApprovalChoice,
  DatabaseEvent,
  AgentNotice,
  ClarifyAnswer,
  Diagnostics,
  ExportFormat,
  Frame,
  MessageView,
  PendingView,
  RecoveryReport,
  RuntimeOption,
  SearchHit,
  SessionInfo,
  SessionView,
  SteerInfo,
  TranscriptPage,
  SteerOutcome,
  SessionSandbox,
  AuditEntry,
  AuditFilter,
  VaultAnswer,
  VaultResult,
} from '../lib/protocol';
import type { About, Autostart } from '../lib/desktop';
import type { Attachment, AttachmentContent, Branched, ChatFigures, ChatPreferences, ChatSettings, CompactResult, ModelInfo, QuickAskStatus } from '../lib/chat';
import { fakeMcp } from './fakeMcp';
import { testEnv } from './wait';

/** A background task with every field; `extra` overrides. */
export function task(id: string, parent: string, extra: Partial<BackgroundTask> = {}): BackgroundTask {
  return {
    id, parent_session_id: parent, session_id: `h-${id}`, stream_id: '', prompt: `prompt ${id}`, status: 'running',
    queue_position: 0, result_preview: '', error: '', created_at: 1000, started_at: 1000, ended_at: 0,
    pending: { approval: null, clarify: null, approval_count: 0, clarify_count: 0 }, ...extra,
  };
}

export function emptyPending(): PendingView {
  return { approval: null, clarify: null, approval_count: 0, clarify_count: 0, yolo: false };
}

export const usage0 = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 };

export function session(id: string, updated: number, extra: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id, title: `t-${id}`, title_manual: false, model: 'm', workspace: '/w', created_at: updated, updated_at: updated,
    active_stream_id: '', revision: 0, message_count: 0, usage: usage0, pinned: false, archived_at: 0, forked_from: '',
    hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {}, ...extra,
  };
}

export function message(id: string, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  return { id: id as unknown as number, session_id: '', position: 1, role, content, reasoning: '', kind: '', stream_id: '', created_at: 0, ...extra };
}

/** A fake backend: sessions and messages in memory, journals per stream, event hooks. */
export function fakeApi() {
  const sandboxes = new Map<string, SessionSandbox>();
  const audit: AuditEntry[] = [];
  const hermesSettings = {
    path: '', home: '', model: '',
    install: { python: '/home/u/.hermes/hermes-agent/venv/bin/python', version: '0.19.0', python_version: '3.11.7',
      source: '~/.hermes/hermes-agent', home: '/home/u/.hermes', profiles: ['default'], problem: '', hint: '' },
  };
  const hermesSessions = [
    { agent_session_id: '20261201_081947_e89317', title: 'Trip planning', preview: 'plan the trip', started_at: 1796113191, message_count: 4, source: 'cli', talaria_session_id: '' },
    { agent_session_id: '20261130_101010_aaaaaa', title: 'Refactor notes', preview: 'refactor', started_at: 1796000000, message_count: 2, source: 'tui', talaria_session_id: '' },
  ];
  const sessions = new Map<string, SessionInfo>();
  const transcripts = new Map<string, MessageView[]>();
  const journals = new Map<string, Frame[]>();
  const pending = new Map<string, PendingView>();
  const allowlist: AllowlistEntry[] = [];
  const drafts = new Map<string, string>();
  const steers = new Map<string, SteerInfo[]>();
  let steerCounter = 0;
  let keyCounter = 0;
  const recovery: RecoveryReport = { recovered: false, backup_path: '', sessions: 0, messages: 0, message: '', problems: [], at: 0 };
  const hooks = {
    frame: (_f: Frame) => {},
    changed: () => {},
    sidecar: (_s: unknown) => {},
    open: (_id: string) => {},
    activity: (_a: Activity) => {},
    tasks: (_u: BackgroundTasksUpdate) => {},
    database: (_e: DatabaseEvent) => {},
    agentNotice: (_n: AgentNotice) => {},
    launch: () => {},
    agentState: (_sessionId: string, _state: AgentState) => {},
  };
  let frameListeners: ((f: Frame) => void)[] = [];
  const launchActions: string[] = []; // queued by tests, taken by the window
  let autostart: Autostart = { enabled: false, where: '/home/u/.config/autostart/talaria.desktop', command: '', error: '' };
  const tasks = new Map<string, BackgroundTask[]>(); // parent session id → its tasks
  let maxTasks = 3;
  const mcp = fakeMcp(); // MCP servers (fakeMcp.ts)
  let taskCounter = 0;
  const touched = (s: SessionInfo) => ({ ...s });
  const emit = (f: Frame) => {
    journals.set(f.stream_id, [...(journals.get(f.stream_id) ?? []), f]);
    hooks.frame(f);
  };
  const api = {
    newSession: vi.fn(async () => {
      const s = session(`n${sessions.size + 1}`, 10_000);
      sessions.set(s.id, s);
      return s;
    }),
    listSessions: vi.fn(async () => [...sessions.values()].filter((s) => !s.archived_at).map((s) => ({ ...s }))),
    getSession: vi.fn(async (id: string): Promise<SessionView> => ({
      session: { ...sessions.get(id)! }, messages: [...(transcripts.get(id) ?? [])],
    })),
    listSessionsPage: vi.fn(async (offset: number, limit: number) =>
      [...sessions.values()].filter((s) => !s.archived_at).map((s) => ({ ...s })).slice(offset, offset + limit)),
    // Pages by index in the stored list (test rows need not have distinct positions).
    getTranscript: vi.fn(async (id: string, before: number, limit: number): Promise<TranscriptPage> => {
      const all = transcripts.get(id) ?? [];
      const end = before < 0 ? all.length : Math.max(0, all.findIndex((m) => m.position >= before) < 0 ? all.length : all.findIndex((m) => m.position >= before));
      const start = Math.max(0, end - limit);
      return { session: { ...sessions.get(id)! }, messages: all.slice(start, end), before: start > 0, after: end < all.length };
    }),
    getTranscriptFrom: vi.fn(async (id: string, from: number, limit: number): Promise<TranscriptPage> => {
      const all = transcripts.get(id) ?? [];
      let start = all.findIndex((m) => m.position >= from);
      if (start < 0) start = all.length;
      const end = Math.min(all.length, start + limit);
      return { session: { ...sessions.get(id)! }, messages: all.slice(start, end), before: start > 0, after: end < all.length };
    }),
    startTurn: vi.fn(async (sid: string, text: string) => {
      const user = message(`u-${text}`, 'user', text, { stream_id: 'st1' });
      sessions.get(sid)!.active_stream_id = 'st1';
      transcripts.set(sid, [...(transcripts.get(sid) ?? []), user]);
      return { stream_id: 'st1', user_message: user };
    }),
    cancel: vi.fn(async () => {}),
    streamSince: vi.fn(async (id: string, seq: number) => (journals.get(id) ?? []).filter((f) => f.seq > seq)),
    getSettings: vi.fn(async () => ({
      provider_name: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: 'm', has_api_key: false,
      keyring_available: true, keyring_error: '', data_dir: '/d', log_dir: '/l',
    })),
    saveSettings: vi.fn(),
    checkProvider: vi.fn(async () => ({ ok: true, message: '', hint: '', models: ['m'] })),
    getStatus: vi.fn(async () => ({
      sidecar: {
        state: 'ready' as const, runtime: 'builtin', agent_version: '1', sidecar_version: '1', attempt: 0, next_retry_s: 0, error: '', hint: '',
        python: '', protocol: 1, pid: 0, restarts: 0, started_at: 0, runtime_id: 'builtin',
      },
      version: 'v', uptime_s: 0, stderr_tail: [],
      paths: { data_dir: '/d', db_path: '/d/db', log_dir: '/l', app_log: '/l/talaria.log', sidecar_log: '/l/sidecar.log', cache_dir: '/d/cache' },
    })),
    openURL: vi.fn(),
    // runtimes: the built-in one and a Hermes profile; a chat moves when asked
    listRuntimes: vi.fn(async (): Promise<RuntimeOption[]> => [
      { id: 'builtin', kind: 'builtin', label: 'Built-in', detail: '', available: true, problem: '', hint: '', default: true },
      { id: 'hermes:default', kind: 'hermes', label: 'Hermes Agent', detail: '0.19.0', available: true, problem: '', hint: '', default: false },
    ]),
    setDefaultRuntime: vi.fn(async (_id: string) => {}),
    setSessionRuntime: vi.fn(async (sid: string, id: string): Promise<SessionInfo> => {
      const s = sessions.get(sid)!;
      s.runtime = id;
      return { ...s };
    }),
    restartRuntime: vi.fn(async (_id: string) => {}),
    // sandbox: each chat's policy and workspace, the audit log
    getSessionSandbox: vi.fn(async (sid: string): Promise<SessionSandbox> => ({ ...(sandboxes.get(sid) ?? { mode: 'workspace-write', network: false }) })),
    setSessionSandbox: vi.fn(async (sid: string, v: SessionSandbox) => {
      sandboxes.set(sid, { mode: v.mode, network: v.mode === 'full-access' || v.network });
    }),
    getDefaultSandbox: vi.fn(async (): Promise<SessionSandbox> => ({ mode: 'workspace-write', network: false })),
    setDefaultSandbox: vi.fn(async (_v: SessionSandbox) => {}),
    chooseFolder: vi.fn(async (_title: string, _start: string) => '/home/u/projects/app'),
    setDefaultWorkspace: vi.fn(async (path: string) => path),
    setSessionWorkspace: vi.fn(async (sid: string, path: string): Promise<SessionInfo> => {
      if (path.startsWith('/home/u/.local/share/talaria') || path === '/home/u') {
        throw new ApiError(`${path} contains Talaria's data folder (/home/u/.local/share/talaria): choose a folder of its own`, 'invalid');
      }
      const s = sessions.get(sid)!;
      s.workspace = path;
      return { ...s };
    }),
    listAudit: vi.fn(async (_f: AuditFilter = {}): Promise<AuditEntry[]> => audit.map((e) => ({ ...e }))),
    clearAudit: vi.fn(async () => {
      const n = audit.length;
      audit.length = 0;
      return n;
    }),
    exportAudit: vi.fn(async (_f: AuditFilter = {}) => '/home/u/talaria-approvals.csv'),
    onAuditChanged: vi.fn((_cb: () => void) => () => {}),
    // Hermes: found, one profile, two own sessions (one already open in a chat)
    getHermesSettings: vi.fn(async () => ({ ...hermesSettings, install: { ...hermesSettings.install } })),
    saveHermesSettings: vi.fn(async (s: { path: string; home: string; model: string }) => {
      Object.assign(hermesSettings, s);
      return { ...hermesSettings, install: { ...hermesSettings.install } };
    }),
    hermesSessions: vi.fn(async (_rt: string) => hermesSessions.map((s) => ({ ...s }))),
    hermesHistory: vi.fn(async (_rt: string, id: string) => ({
      agent_session_id: id, title: hermesSessions.find((s) => s.agent_session_id === id)?.title ?? '',
      messages: [{ role: 'user' as const, content: 'plan the trip' }, { role: 'assistant' as const, content: 'Here is **the plan**.' }],
    })),
    continueHermesSession: vi.fn(async (_rt: string, id: string): Promise<SessionInfo> => {
      const bound = hermesSessions.find((s) => s.agent_session_id === id)?.talaria_session_id;
      if (bound && sessions.has(bound)) return { ...sessions.get(bound)! };
      const s = await api.newSession();
      s.runtime = 'hermes';
      s.title = hermesSessions.find((x) => x.agent_session_id === id)?.title ?? '';
      return { ...s };
    }),
    hermesModels: vi.fn(async (_rt: string) => ({ current: 'hermes-4', current_provider: 'nous',
      providers: [{ name: 'nous', label: 'Nous Portal', models: ['hermes-4', 'hermes-4-mini'], current: true, available: true }] })),
    // Every listener gets every frame (the store and the agent state store listen).
    onAgentState: vi.fn((cb: (sessionId: string, state: AgentState) => void) => {
      hooks.agentState = cb;
      return () => {
        if (hooks.agentState === cb) hooks.agentState = () => {};
      };
    }),
    onFrame: vi.fn((cb: (f: Frame) => void) => {
      frameListeners.push(cb);
      hooks.frame = (f: Frame) => frameListeners.forEach((l) => l(f));
      return () => {
        frameListeners = frameListeners.filter((l) => l !== cb);
      };
    }),
    onSessionsChanged: vi.fn((cb: () => void) => ((hooks.changed = cb), () => {})),
    onSidecarStatus: vi.fn((cb: (s: unknown) => void) => ((hooks.sidecar = cb), () => {})),
    onOpenSession: vi.fn((cb: (id: string) => void) => ((hooks.open = cb), () => {})),
    // approvals, clarify, vault, allowlist
    respondApproval: vi.fn(async (_sid: string, _id: string, _choice: ApprovalChoice) => {}),
    setYolo: vi.fn(async (sid: string, on: boolean, _from: string) => {
      pending.set(sid, { ...(pending.get(sid) ?? emptyPending()), yolo: on });
    }),
    respondClarify: vi.fn(async (_sid: string, _id: string, _answers: ClarifyAnswer[]) => {}),
    respondVault: vi.fn(async (_sid: string, _id: string, answer: VaultAnswer, remember: boolean): Promise<VaultResult> => ({
      ok: true, kept: answer.decline ? 'declined' : remember ? 'keychain' : 'session',
    })),
    getPending: vi.fn(async (sid: string): Promise<PendingView> => ({ ...(pending.get(sid) ?? emptyPending()) })),
    // steering: a busy session queues, an idle one starts a turn
    steer: vi.fn(async (sid: string, text: string): Promise<SteerOutcome> => {
      const s = sessions.get(sid)!;
      if (!s.active_stream_id) {
        s.active_stream_id = 'st1';
        return { steer_id: '', stream_id: 'st1', delivery: 'turn' };
      }
      const id = `steer${++steerCounter}`;
      steers.set(sid, [...(steers.get(sid) ?? []), { id, text, created_at: steerCounter }]);
      return { steer_id: id, stream_id: s.active_stream_id, delivery: 'queued' };
    }),
    withdrawSteer: vi.fn(async (sid: string, id: string): Promise<string> => {
      const list = steers.get(sid) ?? [];
      const s = list.find((x) => x.id === id);
      if (!s) throw new ApiError('this queued message is no longer pending', 'steer_gone');
      steers.set(sid, list.filter((x) => x.id !== id));
      return s.text;
    }),
    steerNow: vi.fn(async (_sid: string, _id: string) => ({ withdrawn: true, redirected: true, delivery: 'steer', requeued: false })),
    pendingSteers: vi.fn(async (sid: string): Promise<SteerInfo[]> => [...(steers.get(sid) ?? [])]),
    // session actions
    renameSession: vi.fn(async (id: string, title: string) => {
      const s = sessions.get(id)!;
      s.title = title;
      s.title_manual = true;
      return touched(s);
    }),
    pinSession: vi.fn(async (id: string, pinned: boolean) => {
      const s = sessions.get(id)!;
      s.pinned = pinned;
      return touched(s);
    }),
    archiveSession: vi.fn(async (id: string, archived: boolean) => {
      const s = sessions.get(id)!;
      s.archived_at = archived ? 99 : 0;
      return touched(s);
    }),
    listArchivedSessions: vi.fn(async () => [...sessions.values()].filter((s) => s.archived_at).map(touched)),
    deleteSession: vi.fn(async (id: string) => {
      sessions.delete(id);
      transcripts.delete(id);
    }),
    historyKeptBy: vi.fn(async (_id: string) => ''),
    discardIfEmpty: vi.fn(async (id: string) => {
      if ((transcripts.get(id) ?? []).length > 0 || sessions.get(id)?.active_stream_id) return false;
      return sessions.delete(id);
    }),
    forkSession: vi.fn(async (id: string, position: number, _key: string) => {
      const s = session(`fork${++keyCounter}`, 20_000, { title: `${sessions.get(id)!.title} (fork)`, forked_from: id });
      sessions.set(s.id, s);
      transcripts.set(s.id, (transcripts.get(id) ?? []).filter((m) => m.position <= position));
      return touched(s);
    }),
    duplicateSession: vi.fn(async (id: string, _key: string) => {
      const s = session(`dup${++keyCounter}`, 20_000, { title: `${sessions.get(id)!.title} (copy)`, forked_from: id });
      sessions.set(s.id, s);
      transcripts.set(s.id, [...(transcripts.get(id) ?? [])]);
      return touched(s);
    }),
    saveDraft: vi.fn(async (id: string, text: string) => {
      if (text) drafts.set(id, text);
      else drafts.delete(id);
    }),
    getDraft: vi.fn(async (id: string) => ({ session_id: id, text: drafts.get(id) ?? '', updated_at: drafts.has(id) ? 1 : 0 })),
    searchSessions: vi.fn(async (_q: string, _limit?: number): Promise<SearchHit[]> => []),
    exportSession: vi.fn(async (_id: string, format: ExportFormat) => `/home/me/export.${format === 'json' ? 'json' : 'md'}`),
    exportSessionText: vi.fn(async (_id: string, _format: ExportFormat) => ({ name: 'x.md', mime_type: 'text/markdown', content: '# x' })),
    importSession: vi.fn(async (): Promise<SessionInfo | null> => null),
    getRecoveryReport: vi.fn(async () => ({ ...recovery })),
    dismissRecoveryReport: vi.fn(async () => {
      recovery.recovered = false;
    }),
    // supervision
    restartAgent: vi.fn(async () => {}),
    getDiagnostics: vi.fn(async (): Promise<Diagnostics> => ({
      app_version: 'v1.2.3', host_protocol: 1, state: 'ready', runtime: 'builtin', sidecar_version: 'v1.2.3', agent_version: '0.3.0',
      protocol: 1, python_path: '', python_version: '', pid: 4242, sidecar_uptime_s: 125, uptime_s: 3700, restarts: 1, attempt: 0,
      next_retry_s: 0, error: '', hint: '', stderr_tail: ['time=1 level=INFO msg="sidecar ready"', '<b>not html</b>'],
      paths: { data_dir: '/d', db_path: '/d/talaria.db', log_dir: '/d/logs', app_log: '/d/logs/talaria.log', sidecar_log: '/d/logs/sidecar.log', cache_dir: '/d/cache' }, dialect: '', features: [], go_version: 'go1.24', platform: 'linux/amd64',
      runtimes: [], last_crash: { path: '', at: 0, summary: '', text: '' },
    })),
    openLogsFolder: vi.fn(async () => {}),
    setWindowFocused: vi.fn(async (_focused: boolean) => {}),
    windowPainted: vi.fn(async () => {}),
    getActivity: vi.fn(async (): Promise<Activity> => ({ state: 'idle', full_access: 0, running: [], waiting: 0, sidecar: {} as Activity['sidecar'] })),
    onActivity: vi.fn((cb: (a: Activity) => void) => ((hooks.activity = cb), () => {})),
    // background tasks and side questions
    startBackgroundTask: vi.fn(async (parent: string, prompt: string): Promise<BackgroundTask | null> => {
      const t = task(`task${++taskCounter}`, parent, { prompt, created_at: taskCounter });
      tasks.set(parent, [t, ...(tasks.get(parent) ?? [])]);
      return { ...t };
    }),
    listBackgroundTasks: vi.fn(async (parent: string): Promise<BackgroundTask[]> => [...(tasks.get(parent) ?? [])]),
    getBackgroundTaskResult: vi.fn(async (id: string) => {
      const t = [...tasks.values()].flat().find((x) => x.id === id);
      if (!t) throw new ApiError('that background task no longer exists', 'not_found');
      return { task_id: id, session_id: t.session_id, status: t.status, prompt: t.prompt, text: t.result_preview, error: t.error, ended_at: t.ended_at };
    }),
    stopBackgroundTask: vi.fn(async (_id: string) => {}),
    dismissBackgroundTask: vi.fn(async (id: string) => {
      for (const [p, ts] of tasks) tasks.set(p, ts.filter((t) => t.id !== id));
    }),
    getMaxBackgroundTasks: vi.fn(async () => maxTasks),
    setMaxBackgroundTasks: vi.fn(async (n: number) => {
      if (n < 1 || n > 10) throw new ApiError('the limit must be between 1 and 10', 'invalid');
      maxTasks = n;
    }),
    askSideQuestion: vi.fn(async (sid: string, question: string) => ({
      id: 'side1', parent_session_id: sid, session_id: 'copy1', stream_id: 'sq1', question,
    })),
    cancelSideQuestion: vi.fn(async (_id: string) => {}),
    onBackgroundTasks: vi.fn((cb: (u: BackgroundTasksUpdate) => void) => ((hooks.tasks = cb), () => {})),
    onDatabase: vi.fn((cb: (e: DatabaseEvent) => void) => ((hooks.database = cb), () => {})),
    onAgentNotice: vi.fn((cb: (n: AgentNotice) => void) => ((hooks.agentNotice = cb), () => {})),
    // desktop: launch actions, start at login, About
    takeLaunchActions: vi.fn(async () => launchActions.splice(0)),
    onLaunchAction: vi.fn((cb: () => void) => ((hooks.launch = cb), () => {})),
    getAutostart: vi.fn(async () => ({ ...autostart })),
    setAutostart: vi.fn(async (on: boolean) => {
      autostart = { ...autostart, enabled: on, command: on ? '/usr/bin/talaria --hidden' : '' };
      return { ...autostart };
    }),
    getAbout: vi.fn(async (): Promise<About> => ({
      version: '1.2.3', commit: '0123456789abcdef0123', build_date: '2026-12-01T10:05:00Z', go_version: 'go1.26.8', platform: 'linux/amd64',
      license: 'MIT', license_text: 'MIT License\n\nCopyright (c) 2026 The Talaria Desktop authors',
      paths: { data_dir: '/d', db_path: '/d/talaria.db', log_dir: '/d/logs', app_log: '/d/logs/talaria.log', sidecar_log: '/d/logs/sidecar.log', cache_dir: '/d/cache' },
      libraries: [
        { name: 'svelte', version: '5.0.0', license: 'MIT', ecosystem: 'npm' },
        { name: 'github.com/mattn/go-sqlite3', version: 'v1.14.53', license: 'MIT', ecosystem: 'go' },
        { name: 'SQLite', version: '3.54.1', license: 'blessing', ecosystem: 'c' },
      ],
      error: '',
    })),
    getLicenseText: vi.fn(async (eco: string, name: string) => `licence of ${eco}:${name}`),
    openDataFolder: vi.fn(async () => {}),
    // the chat features (issue 12): files, figures, chat settings, quick ask
    ...chatFakes(sessions),
    ...mcp.api,
    getAllowlist: vi.fn(async (): Promise<AllowlistEntry[]> => [...allowlist]),
    removeAllowlist: vi.fn(async (pattern: string) => {
      const i = allowlist.findIndex((e) => e.pattern === pattern);
      if (i >= 0) allowlist.splice(i, 1);
    }),
  };
  stallAnswers(api);
  return { api: api as unknown as Api & typeof api, sessions, transcripts, journals, emit, hooks, pending, allowlist, drafts, steers, recovery, tasks, launchActions, mcp, sandboxes, audit };
}

// TALARIA_TEST_STALL_MS=N: every answer of the fake backend comes 0..N ms late, as a
// loaded machine's backend and module loads do. A test that reads the window right
// after an action (or after a few macrotasks), instead of waiting for what it expects,
// then fails: `TALARIA_TEST_STALL_MS=50 npx vitest run` finds such tests. Unset (the
// default), answers come at once. While a test has faked the timeouts, it drives the
// time itself and answers come at once.
const stallMs = Number(testEnv('TALARIA_TEST_STALL_MS')) || 0;
const realSetTimeout = globalThis.setTimeout.bind(globalThis);

// Fake timers mark the functions they install with their clock (a test that fakes only
// Date keeps real timeouts, and the stall).
const timeoutsFaked = () => Object.prototype.hasOwnProperty.call(globalThis.setTimeout, 'clock');

function stallAnswers(api: Record<string, unknown>) {
  if (stallMs <= 0) return;
  for (const fn of Object.values(api)) {
    if (!vi.isMockFunction(fn)) continue;
    const impl = fn.getMockImplementation();
    if (!impl || impl.constructor.name !== 'AsyncFunction') continue;
    fn.mockImplementation(async (...args: unknown[]) => {
      if (!timeoutsFaked()) await new Promise((r) => realSetTimeout(r, Math.random() * stallMs));
      return (impl as (...a: unknown[]) => unknown)(...args);
    });
  }
}


export function frame(sid: string, st: string, seq: number, event: string, data: unknown = {}): Frame {
  return { session_id: sid, stream_id: st, seq, event, data };
}


/** Fakes of the chat features' calls: staged files per session, figures, settings. */
function chatFakes(sessions: Map<string, SessionInfo>) {
  const staged = new Map<string, Attachment[]>();
  let prefs: ChatPreferences = { default_system_prompt: '', compact_at: 80, text_limit_kb: 64, stream_idle_timeout_s: 120 };
  let quick: QuickAskStatus = { active: false, shortcut: 'Ctrl+Alt+Space', shortcut_active: true, shortcut_error: '', command: 'talaria --quick-ask' };
  let n = 0;
  const features = { images: true, reasoning_effort: true, max_output_tokens: true, model_choice: true, compaction: true, titles: true };
  return {
    chatStaged: staged,
    stagedAttachments: vi.fn(async (sid: string) => [...(staged.get(sid) ?? [])]),
    attachFile: vi.fn(async (sid: string, name: string, b64: string): Promise<Attachment> => {
      const size = atob(b64).length;
      const image = /\.(png|jpe?g|gif|webp)$/i.test(name);
      const a: Attachment = { id: `att${++n}`, session_id: sid, sha256: `${n}`.padStart(64, '0'), name, mime_type: image ? 'image/png' : 'text/plain',
        kind: image ? 'image' : 'text', size, sent_bytes: Math.min(size, 1024), created_at: n };
      staged.set(sid, [...(staged.get(sid) ?? []), a]);
      return a;
    }),
    pickAttachments: vi.fn(async (_sid: string): Promise<Attachment[]> => []),
    removeAttachment: vi.fn(async (sid: string, id: string) => {
      staged.set(sid, (staged.get(sid) ?? []).filter((a) => a.id !== id));
    }),
    attachmentPreview: vi.fn(async (sid: string, id: string): Promise<AttachmentContent> => {
      const a = (staged.get(sid) ?? []).find((x) => x.id === id) ?? ({ id, name: id, kind: 'text' } as Attachment);
      return { attachment: a, data_url: a.kind === 'image' ? 'data:image/png;base64,iVBORw0KGgo=' : '', text: a.kind === 'text' ? 'text start' : '' };
    }),
    sendMessage: vi.fn(async (sid: string, text: string, ids: string[]) => {
      staged.set(sid, (staged.get(sid) ?? []).filter((a) => !ids.includes(a.id)));
      return { stream_id: `st-files-${++n}`, user_message: message(`u${n}`, 'user', text) };
    }),
    retry: vi.fn(async (_sid: string, _model: string): Promise<Branched> => ({ stream_id: `st-retry-${++n}`, user_message: message(`u${n}`, 'user', 'again'), fork_id: 'fork1' })),
    editAndResend: vi.fn(async (_sid: string, _id: number, text: string, _rev: number): Promise<Branched> => ({ stream_id: `st-edit-${++n}`, user_message: message(`u${n}`, 'user', text), fork_id: 'fork2' })),
    compactSession: vi.fn(async (_sid: string, _retry: boolean): Promise<CompactResult> => ({ summary: message('sum', 'system', 'SUMMARY', { kind: 'summary', summary_covers: 2 }), message: '', retried: null })),
    regenerateTitle: vi.fn(async (sid: string) => {
      const s = sessions.get(sid);
      if (s) sessions.set(sid, { ...s, title: 'A new title' });
      return 'A new title';
    }),
    chatFigures: vi.fn(async (_sid: string, _streams: string[]): Promise<ChatFigures> => ({ turns: [], cost: 0, cost_known: 0, cost_unknown: 0,
      context: { used_tokens: 1200, estimated: false, context_length: 8192, source: 'provider', note: '', compact_at: 0.8, model: 'm', available: true } })),
    getChatSettings: vi.fn(async (_sid: string): Promise<ChatSettings> => ({ options: {}, model: '', default_model: 'm', model_info: null, features, runtime: 'builtin', default_system_prompt: '' })),
    setChatOptions: vi.fn(async (sid: string, _o: unknown) => sessions.get(sid)!),
    setChatModel: vi.fn(async (sid: string, model: string) => {
      const s = sessions.get(sid)!;
      sessions.set(sid, { ...s, model });
      return sessions.get(sid)!;
    }),
    modelInfo: vi.fn(async (model: string): Promise<ModelInfo> => ({ provider: 'p', model, context_length: 0, context_source: '', provider_context: 0, context_note: '', vision: '', reasoning: '', settings: {}, error: '' })),
    setModelSettings: vi.fn(async (model: string, _ms: unknown): Promise<ModelInfo> => ({ provider: 'p', model, context_length: 0, context_source: '', provider_context: 0, context_note: '', vision: '', reasoning: '', settings: {}, error: '' })),
    getChatPreferences: vi.fn(async () => ({ ...prefs })),
    saveChatPreferences: vi.fn(async (p: ChatPreferences) => ((prefs = { ...p }), { ...prefs })),
    quickAskStatus: vi.fn(async () => ({ ...quick })),
    setQuickAskShortcut: vi.fn(async (text: string) => ((quick = { ...quick, shortcut: text, shortcut_active: text !== '' }), { ...quick })),
    quickAsk: vi.fn(async () => {}),
    leaveQuickAsk: vi.fn(async (_open: boolean) => {}),
    copyText: vi.fn(async (_text: string) => true),
  };
}
