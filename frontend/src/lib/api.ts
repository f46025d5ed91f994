// The only module (with acp.ts and remote.ts, for their areas) that calls the bound Go
// services. It calls them through bindings.gen.ts, generated from the Go methods with
// the contract's types (app/bindgen; `make bindings`), so a method or a type that
// changes on the Go side is a compile error here. Components import `api` from here and
// never reach window.go or window.runtime themselves.
//
// Every call returns a Promise of the shapes in protocol.ts. A rejected bound method
// (Go returned an error) becomes an ApiError whose message is the Go error text. A
// result is what its generated type says: Go sends no null where the contract has a
// list (app/lists.go; TestBoundResultsHaveNoNullLists), so nothing here fills one in.
// What is left to adapt is the window's own: the optional members of a message, a
// sandbox mode it does not know, the event payloads (bus events are not bound results).

import * as bound from './bindings.gen';
import { BrowserOpenURL, ClipboardSetText, EventsOn } from '../../wailsjs/runtime/runtime';
import { toPending } from './cards';
import { ApiError } from './errors';
import { LAUNCH_ACTION_EVENT, normaliseAbout, normaliseAutostart, type About, type Autostart } from './desktop';
import { toSideQuestion, toTask, toTaskResult, toTasks, toTasksUpdate } from './tasks';
import type {
  Attachment,
  AttachmentContent,
  Branched,
  ChatFigures,
  ChatOptionsValue,
  ChatPreferences,
  ChatSettings,
  CompactResult,
  ModelInfo,
  ModelSettings,
  QuickAskStatus,
  TurnStarted as ChatTurnStarted,
} from './chat';
import {
  toAuthState,
  toChatMcp,
  toContent,
  toImportResult,
  toReport,
  toServerConfig,
  type ChatMcp,
  type McpAuthState,
  type McpContent,
  type McpImportResult,
  type McpPromptText,
  type McpReport,
  type McpServerConfig,
} from './mcp';
import {
  APP_EVENTS,
  type Activity,
  type AllowlistEntry,
  type BackgroundTask,
  type BackgroundTasksUpdate,
  type DatabaseEvent,
  type AgentNotice,
  type ApprovalChoice,
  type AuditEntry,
  type AuditFilter,
  type SessionSandbox,
  type ClarifyAnswer,
  type ElicitAction,
  type Diagnostics,
  type Draft,
  type ExportFile,
  type ExportFormat,
  type Frame,
  type HermesHistory,
  type Progress as ImportProgress,
  type HermesInstall,
  type HermesModels,
  type HermesSession,
  type HermesSettings,
  type MessageView,
  type ProviderCheck,
  type RecoveryReport,
  type RuntimeOption,
  type SearchHit,
  type SessionInfo,
  type SessionView,
  type TranscriptPage,
  type Settings,
  type SettingsInput,
  type SideQuestion,
  type SidecarStatus,
  type Status,
  type SteerInfo,
  type SteerNowResult,
  type SteerOutcome,
  type PendingView,
  type TaskResult,
  type TurnStarted,
  type VaultAnswer,
  type VaultResult,
  type AgentState,
  type AgentStateData,
} from './protocol';

// A failed call rejects with an ApiError carrying the host's code (errors.ts).
export { ApiError, errorCode, errorMessage, errorText } from './errors';

// Calls asked for before the window's first paint go out once it is painted (see
// holdCallsUntil): their answers would otherwise arrive inside the first frame's work,
// each one parsed and its updates run before the frame, holding the paint back (issue 16).
let held: Promise<void> | null = null;

/**
 * Holds every bound call made from now until `painted` settles, then sends them in the
 * order they were made. main.ts arms it with the first paint before it mounts the app:
 * the first screen's data came with the page (app/boot.go), so nothing it shows waits
 * on a call. A rejected `painted` releases the calls too.
 */
export function holdCallsUntil(painted: Promise<void>): void {
  const gate = painted.then(
    () => {},
    () => {},
  );
  held = gate;
  void gate.then(() => {
    if (held === gate) held = null;
  });
}

async function call<T>(fn: () => Promise<T>): Promise<T> {
  if (held) await held;
  try {
    return await fn();
  } catch (err) {
    throw ApiError.from(err);
  }
}

function list<T>(v: T[] | null | undefined): T[] {
  return Array.isArray(v) ? v : [];
}

/** The install a save sends: SaveHermesSettings ignores it (discovery fills it in). */
const noInstall: HermesInstall = { python: '', version: '', python_version: '', source: '', home: '', profiles: [] };

function normaliseHermes(s: HermesSettings): HermesSettings {
  const i = s.install ?? ({} as HermesInstall);
  return { path: s.path ?? '', home: s.home ?? '', model: s.model ?? '',
    install: { ...i, profiles: list(i.profiles), problem: i.problem ?? '', hint: i.hint ?? '' } };
}

/**
 * The sidebar's first page of sessions when it came with the page (app/boot.go puts it in
 * index.html as JSON, so the first screen needs no bound call), once; null when it did
 * not or does not read as one. `transcript` is the first listed chat's newest rows, as
 * GetTranscript gives them, when they came too.
 */
export function takeBootSessions(): { sessions: SessionInfo[]; limit: number; transcript: TranscriptPage | null } | null {
  if (typeof document === 'undefined') return null;
  const el = document.getElementById('talaria-boot');
  if (!el) return null;
  el.remove();
  try {
    const v = JSON.parse(el.textContent ?? '') as { sessions?: unknown; limit?: unknown; transcript?: unknown };
    if (!v || !Array.isArray(v.sessions) || typeof v.limit !== 'number') return null;
    const t = v.transcript as TranscriptPage | undefined;
    const transcript = t && typeof t === 'object' && t.session && typeof t.session.id === 'string' ? transcriptPage(t) : null;
    return { sessions: v.sessions as SessionInfo[], limit: v.limit, transcript };
  } catch {
    return null;
  }
}

function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** Go omits empty optional fields (omitempty); the UI always sees strings. */
export function normaliseMessage(m: MessageView): MessageView {
  const out: MessageView = { ...m, content: m.content ?? '', reasoning: m.reasoning ?? '', kind: m.kind ?? '', stream_id: m.stream_id ?? '' };
  if ('tool_calls' in m) {
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) out.tool_calls = m.tool_calls;
    else delete out.tool_calls;
  }
  return out;
}

function transcriptPage(p: TranscriptPage): TranscriptPage {
  return { ...p, messages: p.messages.map(normaliseMessage) };
}


export type Unsubscribe = () => void;

function normaliseSandbox(v: SessionSandbox | null | undefined): SessionSandbox {
  const mode = v?.mode === 'read-only' || v?.mode === 'full-access' ? v.mode : 'workspace-write';
  return { mode, network: mode === 'full-access' || v?.network === true };
}

export const api = {
  /** A chat's sandbox policy. */
  async getSessionSandbox(sessionId: string): Promise<SessionSandbox> {
    return normaliseSandbox(await call<SessionSandbox>(() => bound.Agents.GetSessionSandbox(sessionId)));
  },

  /** Sets a chat's sandbox policy (from its next command on). */
  setSessionSandbox(sessionId: string, v: SessionSandbox): Promise<void> {
    return call(() => bound.Agents.SetSessionSandbox(sessionId, v));
  },

  /** The policy new chats start with. */
  async getDefaultSandbox(): Promise<SessionSandbox> {
    return normaliseSandbox(await call<SessionSandbox>(() => bound.Agents.GetDefaultSandbox()));
  },

  /** Sets the policy new chats start with (never full access). */
  setDefaultSandbox(v: SessionSandbox): Promise<void> {
    return call(() => bound.Agents.SetDefaultSandbox(v));
  },

  /** Sets the folder a chat works in; a folder that holds the data folder is refused. */
  async setSessionWorkspace(sessionId: string, path: string): Promise<SessionInfo> {
    return call(() => bound.Chats.SetSessionWorkspace(sessionId, path));
  },

  /** Sets the folder new chats start in (Settings); the cleaned path. */
  async setDefaultWorkspace(path: string): Promise<string> {
    return call(() => bound.Chats.SetDefaultWorkspace(path));
  },

  /** Asks the user for a folder; "" when cancelled. */
  async chooseFolder(title: string, start: string): Promise<string> {
    return call(() => bound.About.ChooseFolder(title, start));
  },

  /** The approval audit log, newest first. */
  async listAudit(filter: AuditFilter = {}): Promise<AuditEntry[]> {
    return call(() => bound.Approvals.ListAudit(filter));
  },

  /** Empties the approval audit log; how many entries it held. */
  async clearAudit(): Promise<number> {
    return (await call<number>(() => bound.Approvals.ClearAudit())) ?? 0;
  },

  /** Saves the log as CSV where the user chooses; the path, "" when cancelled. */
  async exportAudit(filter: AuditFilter = {}): Promise<string> {
    return call(() => bound.Approvals.ExportAudit(filter));
  },

  onAuditChanged(cb: () => void): Unsubscribe {
    return EventsOn(APP_EVENTS.auditChanged, () => cb());
  },

  async newSession(): Promise<SessionInfo> {
    return call(() => bound.Chats.NewSession());
  },

  async listSessions(): Promise<SessionInfo[]> {
    return await call(() => bound.Chats.ListSessions());
  },

  /** The runtimes the pickers offer, the default one marked. */
  async listRuntimes(): Promise<RuntimeOption[]> {
    return call(() => bound.Agents.ListRuntimes());
  },

  /** The Hermes settings and what discovery found with them. */
  async getHermesSettings(): Promise<HermesSettings> {
    return normaliseHermes(await call<HermesSettings>(() => bound.Agents.GetHermesSettings()));
  },

  /** Stores the Hermes path override, home and model, and rediscovers. */
  async saveHermesSettings(s: Pick<HermesSettings, 'path' | 'home' | 'model'>): Promise<HermesSettings> {
    return normaliseHermes(await call<HermesSettings>(() => bound.Agents.SaveHermesSettings({ ...s, install: noInstall })));
  },

  /** The user's own Hermes sessions of runtime id ("" = the default profile). */
  async hermesSessions(runtimeId: string): Promise<HermesSession[]> {
    return call(() => bound.Agents.HermesSessions(runtimeId));
  },

  /** One Hermes session's transcript, read-only. */
  async hermesHistory(runtimeId: string, agentSessionId: string): Promise<HermesHistory> {
    return call(() => bound.Agents.HermesHistory(runtimeId, agentSessionId));
  },

  /** Makes (or finds) the chat bound to a Hermes session. */
  async continueHermesSession(runtimeId: string, agentSessionId: string): Promise<SessionInfo> {
    return call(() => bound.Agents.ContinueHermesSession(runtimeId, agentSessionId));
  },

  /** The models Hermes can use. */
  async hermesModels(runtimeId: string): Promise<HermesModels> {
    return call(() => bound.Agents.HermesModels(runtimeId));
  },

  /** Makes runtime id the one new chats use. */
  setDefaultRuntime(id: string): Promise<void> {
    return call<void>(() => bound.Agents.SetDefaultRuntime(id));
  },

  /** Restarts (or starts) the sidecar of runtime id. */
  restartRuntime(id: string): Promise<void> {
    return call<void>(() => bound.Agents.RestartRuntime(id));
  },

  /** Moves an idle chat to runtime id. */
  async setSessionRuntime(sessionId: string, id: string): Promise<SessionInfo> {
    return call(() => bound.Agents.SetSessionRuntime(sessionId, id));
  },

  async getSession(id: string): Promise<SessionView> {
    const v = await call(() => bound.Chats.GetSession(id));
    return { session: v.session, messages: v.messages.map(normaliseMessage) };
  },

  /** `limit` sessions of the sidebar from `offset` on (pinned first, then newest). */
  async listSessionsPage(offset: number, limit: number): Promise<SessionInfo[]> {
    return await call(() => bound.Chats.ListSessionsPage(offset, limit));
  },

  /** The last `limit` rows before position `before` (-1: the session's last rows). */
  async getTranscript(id: string, before: number, limit: number): Promise<TranscriptPage> {
    return transcriptPage(await call<TranscriptPage>(() => bound.Chats.GetTranscript(id, before, limit)));
  },

  /** `limit` rows from position `from` on. */
  async getTranscriptFrom(id: string, from: number, limit: number): Promise<TranscriptPage> {
    return transcriptPage(await call<TranscriptPage>(() => bound.Chats.GetTranscriptFrom(id, from, limit)));
  },

  async startTurn(sessionId: string, text: string): Promise<TurnStarted> {
    const t = await call<TurnStarted>(() => bound.Turns.StartTurn(sessionId, text));
    return { ...t, user_message: normaliseMessage(t.user_message) };
  },

  cancel(streamId: string): Promise<void> {
    return call<void>(() => bound.Turns.Cancel(streamId));
  },

  async streamSince(streamId: string, seq: number): Promise<Frame[]> {
    return call(() => bound.Turns.StreamSince(streamId, seq));
  },

  getSettings(): Promise<Settings> {
    return call<Settings>(() => bound.Settings.GetSettings());
  },

  saveSettings(input: SettingsInput): Promise<Settings> {
    // The generated parameter type is a class with the same fields.
    return call<Settings>(() => bound.Settings.SaveSettings(input));
  },

  async checkProvider(): Promise<ProviderCheck> {
    return call(() => bound.Settings.CheckProvider());
  },

  async getStatus(): Promise<Status> {
    return call(() => bound.Agents.GetStatus());
  },

  // ---- approvals, clarify, vault ----------------------------------------------------
  // Each answers a card the user clicked; a card that is out of date is refused with an
  // ApiError whose code is `stale` (its `stale` is true).

  respondApproval(sessionId: string, approvalId: string, choice: ApprovalChoice): Promise<void> {
    return call<void>(() => bound.Approvals.RespondApproval(sessionId, approvalId, choice));
  },

  /** fromApprovalId: the id of the approval card the switch was used on, else "". */
  setYolo(sessionId: string, on: boolean, fromApprovalId: string): Promise<void> {
    return call<void>(() => bound.Approvals.SetYolo(sessionId, on, fromApprovalId));
  },

  /** One answer per question: a string, or a list for a multi-select question. */
  respondClarify(sessionId: string, clarifyId: string, answers: ClarifyAnswer[]): Promise<void> {
    return call<void>(() => bound.Approvals.RespondClarify(sessionId, clarifyId, answers));
  },

  /** Answers an elicitation's card without content: the user declined or cancelled it. */
  dismissElicitation(sessionId: string, clarifyId: string, action: ElicitAction): Promise<void> {
    return call<void>(() => bound.Approvals.DismissElicitation(sessionId, clarifyId, action));
  },

  /**
   * Answers a vault prompt. The value goes to the host and nowhere else: it is not kept,
   * logged or put in an error here, and the reply never carries it.
   */
  async respondVault(sessionId: string, clarifyId: string, answer: VaultAnswer, remember: boolean): Promise<VaultResult> {
    const arg = { value: answer.value, use_saved: answer.use_saved, decline: answer.decline };
    const r = await call<Partial<VaultResult> | null>(() =>
      bound.Approvals.RespondVault(sessionId, clarifyId, arg, remember),
    );
    const kept = r?.kept === 'keychain' || r?.kept === 'session' || r?.kept === 'declined' ? r.kept : answer.decline ? 'declined' : 'session';
    return { ok: r?.ok !== false, kept };
  },

  /** The heads of the session's approval and clarify queues, their counts and YOLO. */
  async getPending(sessionId: string): Promise<PendingView> {
    return toPending(await call<unknown>(() => bound.Approvals.GetPending(sessionId)));
  },

  async getAllowlist(): Promise<AllowlistEntry[]> {
    return call(() => bound.Approvals.GetAllowlist());
  },

  removeAllowlist(pattern: string): Promise<void> {
    return call<void>(() => bound.Approvals.RemoveAllowlist(pattern));
  },

  // ---- MCP servers (lib/mcp.ts) -----------------------------------------------------

  async listMcpServers(): Promise<McpServerConfig[]> {
    return (await call(() => bound.MCP.ListMCPServers())).map(toServerConfig);
  },

  /** Adds a server (previous "") or replaces the one named previous. */
  async saveMcpServer(server: McpServerConfig, previous: string): Promise<McpServerConfig> {
    return toServerConfig(await call<unknown>(() => bound.MCP.SaveMCPServer(server, previous)));
  },

  deleteMcpServer(name: string): Promise<void> {
    return call<void>(() => bound.MCP.DeleteMCPServer(name));
  },

  setMcpServerEnabled(name: string, on: boolean): Promise<void> {
    return call<void>(() => bound.MCP.SetMCPServerEnabled(name, on));
  },

  /** Adds the servers of a pasted {"mcpServers": {...}} configuration. */
  async importMcpServers(text: string): Promise<McpImportResult> {
    return toImportResult(await call<unknown>(() => bound.MCP.ImportMCPServers(text)));
  },

  /** Connects to a server as given and lists what it offers (a failure is a report). */
  async testMcpServer(server: McpServerConfig, previous: string): Promise<McpReport> {
    return toReport(await call<unknown>(() => bound.MCP.TestMCPServer(server, previous)));
  },

  async getChatMcp(sessionId: string): Promise<ChatMcp> {
    return toChatMcp(await call<unknown>(() => bound.MCP.GetChatMCP(sessionId)));
  },

  async setChatMcpServer(sessionId: string, name: string, state: 'on' | 'off' | 'default'): Promise<ChatMcp> {
    return toChatMcp(await call<unknown>(() => bound.MCP.SetChatMCPServer(sessionId, name, state)));
  },

  /** Starts a chat's servers when needed; their prompts and resources. */
  async listChatMcp(sessionId: string): Promise<McpReport[]> {
    return (await call(() => bound.MCP.ListChatMCP(sessionId))).map(toReport);
  },

  async getMcpPrompt(sessionId: string, server: string, name: string, args: Record<string, string>): Promise<McpPromptText> {
    const r = await call<Partial<McpPromptText> | null>(() => bound.MCP.GetMCPPrompt(sessionId, server, name, args));
    return { server, name, description: r?.description ?? '', text: r?.text ?? '' };
  },

  async readMcpResource(sessionId: string, server: string, uri: string): Promise<McpContent[]> {
    const r = await call<{ contents?: unknown[] | null } | null>(() => bound.MCP.ReadMCPResource(sessionId, server, uri));
    return list(r?.contents ?? null).map(toContent);
  },

  /** A remote server's sign-in state (it asks the server). */
  async mcpServerAuth(name: string): Promise<McpAuthState> {
    return toAuthState(await call<unknown>(() => bound.MCP.MCPServerAuth(name)));
  },

  /** Signs in to a remote server in the user's browser; a failure comes back as the state failed. */
  async signInMcpServer(name: string): Promise<McpAuthState> {
    return toAuthState(await call<unknown>(() => bound.MCP.SignInMCPServer(name)));
  },

  /** Forgets a remote server's sign-in. */
  signOutMcpServer(name: string): Promise<void> {
    return call<void>(() => bound.MCP.SignOutMCPServer(name));
  },

  /** Opens a URL in the system browser (never in the webview). */
  openURL(url: string): void {
    BrowserOpenURL(url);
  },

  // ---- steering ----------------------------------------------------------------------

  /**
   * Sends text into the session's running turn (delivery "queued", with the steer's id),
   * or starts a turn when none runs (delivery "turn").
   */
  async steer(sessionId: string, text: string): Promise<SteerOutcome> {
    const o = await call(() => bound.Turns.Steer(sessionId, text));
    return o.user_message ? { ...o, user_message: normaliseMessage(o.user_message) } : o;
  },

  /** Takes a queued message back and returns its text (Edit and Cancel). */
  withdrawSteer(sessionId: string, steerId: string): Promise<string> {
    return call<string>(() => bound.Turns.WithdrawSteer(sessionId, steerId));
  },

  /** Asks the agent to read a queued message at once. */
  async steerNow(sessionId: string, steerId: string): Promise<SteerNowResult> {
    return call(() => bound.Turns.SteerNow(sessionId, steerId));
  },

  async pendingSteers(sessionId: string): Promise<SteerInfo[]> {
    return call(() => bound.Turns.PendingSteers(sessionId));
  },

  // ---- background tasks and side questions ------------------------------------------

  /** Runs prompt as a background task of the session (at once, or queued). */
  async startBackgroundTask(parentSessionId: string, prompt: string): Promise<BackgroundTask | null> {
    return toTask(await call<unknown>(() => bound.Tasks.StartBackgroundTask(parentSessionId, prompt)));
  },

  /** The session's tasks that were not dismissed, newest first. */
  async listBackgroundTasks(parentSessionId: string): Promise<BackgroundTask[]> {
    return toTasks(await call<unknown>(() => bound.Tasks.ListBackgroundTasks(parentSessionId)));
  },

  async getBackgroundTaskResult(taskId: string): Promise<TaskResult> {
    return toTaskResult(await call<unknown>(() => bound.Tasks.GetBackgroundTaskResult(taskId)), taskId);
  },

  stopBackgroundTask(taskId: string): Promise<void> {
    return call<void>(() => bound.Tasks.StopBackgroundTask(taskId));
  },

  dismissBackgroundTask(taskId: string): Promise<void> {
    return call<void>(() => bound.Tasks.DismissBackgroundTask(taskId));
  },

  async getMaxBackgroundTasks(): Promise<number> {
    return call(() => bound.Tasks.GetMaxBackgroundTasks());
  },

  setMaxBackgroundTasks(n: number): Promise<void> {
    return call<void>(() => bound.Tasks.SetMaxBackgroundTasks(n));
  },

  /** Answers question from a throwaway copy of the session (/btw): follow its frames. */
  async askSideQuestion(sessionId: string, question: string): Promise<SideQuestion> {
    return toSideQuestion(await call<unknown>(() => bound.Tasks.AskSideQuestion(sessionId, question)));
  },

  cancelSideQuestion(id: string): Promise<void> {
    return call<void>(() => bound.Tasks.CancelSideQuestion(id));
  },

  /** Something an agent did not do (e.g. delete a deleted chat's session at the agent). */
  onAgentNotice(cb: (n: AgentNotice) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.agentNotice, (n: AgentNotice | null) => {
      if (n && typeof n.message === 'string' && n.message) cb(n);
    });
  },

  onDatabase(cb: (e: DatabaseEvent) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.database, (e: DatabaseEvent | null) => {
      if (e && typeof e.state === 'string') cb(e);
    });
  },

  onBackgroundTasks(cb: (u: BackgroundTasksUpdate) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.backgroundTasks, (data: unknown) => {
      const u = toTasksUpdate(data);
      if (u) cb(u);
    });
  },

  // ---- session actions -------------------------------------------------------------

  async renameSession(id: string, title: string): Promise<SessionInfo> {
    return call(() => bound.Chats.RenameSession(id, title));
  },

  async pinSession(id: string, pinned: boolean): Promise<SessionInfo> {
    return call(() => bound.Chats.PinSession(id, pinned));
  },

  async archiveSession(id: string, archived: boolean): Promise<SessionInfo> {
    return call(() => bound.Chats.ArchiveSession(id, archived));
  },

  async listArchivedSessions(): Promise<SessionInfo[]> {
    return await call(() => bound.Chats.ListArchivedSessions());
  },

  deleteSession(id: string): Promise<void> {
    return call<void>(() => bound.Chats.DeleteSession(id));
  },

  /** Deletes a chat with nothing of the user's in it yet; true when it did. */
  discardIfEmpty(id: string): Promise<boolean> {
    return call<boolean>(() => bound.Chats.DiscardIfEmpty(id));
  },

  /** A new session with the rows up to and including `position`; one per requestKey. */
  async forkSession(id: string, position: number, requestKey: string): Promise<SessionInfo> {
    return call(() => bound.Chats.ForkSession(id, position, requestKey));
  },

  async duplicateSession(id: string, requestKey: string): Promise<SessionInfo> {
    return call(() => bound.Chats.DuplicateSession(id, requestKey));
  },

  saveDraft(id: string, text: string): Promise<void> {
    return call<void>(() => bound.Chats.SaveDraft(id, text));
  },

  async getDraft(id: string): Promise<Draft> {
    const d = await call(() => bound.Chats.GetDraft(id));
    return { ...d, session_id: d.session_id || id };
  },

  async searchSessions(query: string, limit = 30): Promise<SearchHit[]> {
    return await call(() => bound.Chats.SearchSessions(query, limit));
  },

  /** Asks where to save (a native dialog) and writes the file; "" when cancelled. */
  async exportSession(id: string, format: ExportFormat): Promise<string> {
    return call(() => bound.Chats.ExportSession(id, format));
  },

  async exportSessionText(id: string, format: ExportFormat): Promise<ExportFile> {
    return call(() => bound.Chats.ExportSessionText(id, format));
  },

  /** Asks for a JSON export (a native dialog) and imports it; null when cancelled. */
  async importSession(): Promise<SessionInfo | null> {
    const s = await call(() => bound.Chats.ImportSession());
    return s.id !== '' ? s : null;
  },

  async getRecoveryReport(): Promise<RecoveryReport> {
    const r = await call(() => bound.Chats.GetRecoveryReport());
    return { ...r, problems: r.problems ?? [] }; // omitted when there are none
  },

  dismissRecoveryReport(): Promise<void> {
    return call<void>(() => bound.Chats.DismissRecoveryReport());
  },

  // ---- supervision -----------------------------------------------------------------

  restartAgent(): Promise<void> {
    return call<void>(() => bound.Agents.RestartAgent());
  },

  async getDiagnostics(): Promise<Diagnostics> {
    return call(() => bound.About.GetDiagnostics());
  },

  openLogsFolder(): Promise<void> {
    return call<void>(() => bound.About.OpenLogsFolder());
  },

  /** The window has (true) or lost (false) the user's attention: notifications follow. */
  setWindowFocused(focused: boolean): Promise<void> {
    return call<void>(() => bound.About.SetWindowFocused(focused));
  },

  /** The window has painted its first screen: the agent's sidecar may start now. */
  windowPainted(): Promise<void> {
    return call<void>(() => bound.About.WindowPainted());
  },

  async getActivity(): Promise<Activity> {
    return normaliseActivity(await call<Activity>(() => bound.About.GetActivity()));
  },

  onActivity(cb: (a: Activity) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.activity, (a: Activity) => {
      if (a && typeof a === 'object') cb(normaliseActivity(a));
    });
  },

  onFrame(cb: (frame: Frame) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.frame, (frame: Frame) => {
      if (frame && typeof frame === 'object') cb(frame);
    });
  },

  /**
   * Calls cb with a chat's agent state that its ACP agent changed between turns (such
   * as the slash commands OpenCode tells just after its first answer).
   */
  onAgentState(cb: (sessionId: string, state: AgentState) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.agentState, (d: AgentStateData | null) => {
      if (d && typeof d.session_id === 'string' && d.state && typeof d.state === 'object') cb(d.session_id, d.state);
    });
  },

  onSessionsChanged(cb: () => void): Unsubscribe {
    return EventsOn(APP_EVENTS.sessionsChanged, () => cb());
  },

  onOpenSession(cb: (sessionId: string) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.openSession, (data: { session_id?: unknown } | null) => {
      if (data && typeof data.session_id === 'string') cb(data.session_id);
    });
  },

  onSidecarStatus(cb: (status: SidecarStatus) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.sidecarStatus, (status: SidecarStatus) => {
      if (status && typeof status === 'object') cb(status);
    });
  },

  // ---- desktop: launch actions, start at login, About (lib/desktop.ts) ------------

  /** What launches asked of the window since the last call ('new_chat'), each once. */
  async takeLaunchActions(): Promise<string[]> {
    return call(() => bound.About.TakeLaunchActions());
  },

  /** A launch asked something of the window: call takeLaunchActions. */
  onLaunchAction(cb: () => void): Unsubscribe {
    return EventsOn(LAUNCH_ACTION_EVENT, () => cb());
  },

  async getAutostart(): Promise<Autostart> {
    return normaliseAutostart(await call<Autostart>(() => bound.About.GetAutostart()));
  },

  async setAutostart(on: boolean): Promise<Autostart> {
    return normaliseAutostart(await call<Autostart>(() => bound.About.SetAutostart(on)));
  },

  async getAbout(): Promise<About> {
    return normaliseAbout(await call<About>(() => bound.About.GetAbout()));
  },

  getLicenseText(ecosystem: string, name: string): Promise<string> {
    return call<string>(() => bound.About.GetLicenseText(ecosystem, name));
  },

  openDataFolder(): Promise<void> {
    return call<void>(() => bound.About.OpenDataFolder());
  },

  // ---- The chat features (issue 12): files, retry and edit, summaries, figures, a
  // chat's own settings, quick ask. Shapes in lib/chat.ts.

  /** Puts text on the system clipboard (Copy message, Copy code). Resolves whether it did. */
  async copyText(text: string): Promise<boolean> {
    try {
      if (await ClipboardSetText(text)) return true;
    } catch {
      // no Wails runtime (a plain browser): the web clipboard below
    }
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      return false;
    }
  },

  /** Sends text with the listed files staged in the chat's composer. */
  sendMessage(sessionId: string, text: string, attachmentIds: string[]): Promise<ChatTurnStarted> {
    return call<ChatTurnStarted>(() => bound.Turns.SendMessage(sessionId, text, attachmentIds));
  },

  /** Stages a file the user dropped or pasted (its bytes, base64). */
  attachFile(sessionId: string, name: string, dataBase64: string): Promise<Attachment> {
    return call<Attachment>(() => bound.Turns.AttachFile(sessionId, name, dataBase64));
  },

  /** Opens the system's file dialog and stages the chosen files. */
  async pickAttachments(sessionId: string): Promise<Attachment[]> {
    return call(() => bound.Turns.PickAttachments(sessionId));
  },

  async stagedAttachments(sessionId: string): Promise<Attachment[]> {
    return call(() => bound.Turns.StagedAttachments(sessionId));
  },

  removeAttachment(sessionId: string, id: string): Promise<void> {
    return call<void>(() => bound.Turns.RemoveAttachment(sessionId, id));
  },

  attachmentPreview(sessionId: string, id: string): Promise<AttachmentContent> {
    return call<AttachmentContent>(() => bound.Turns.AttachmentPreview(sessionId, id));
  },

  /** Answers the chat's last message again ("" model: the chat's own). */
  retry(sessionId: string, model: string): Promise<Branched> {
    return call<Branched>(() => bound.Turns.Retry(sessionId, model));
  },

  /** Replaces a message of the user with text and sends it again. */
  editAndResend(sessionId: string, messageId: number, text: string, revision: number): Promise<Branched> {
    return call<Branched>(() => bound.Turns.EditAndResend(sessionId, messageId, text, revision));
  },

  /** "Summarise and continue"; with retry a failed last turn is answered again. */
  compactSession(sessionId: string, retry: boolean): Promise<CompactResult> {
    return call<CompactResult>(() => bound.Turns.CompactSession(sessionId, retry));
  },

  regenerateTitle(sessionId: string): Promise<string> {
    return call<string>(() => bound.Turns.RegenerateTitle(sessionId));
  },

  /** The chat's cost and context meter, and the figures of the turns of `streamIds`. */
  async chatFigures(sessionId: string, streamIds: string[]): Promise<ChatFigures> {
    return call(() => bound.Turns.ChatFigures(sessionId, streamIds));
  },

  getChatSettings(sessionId: string): Promise<ChatSettings> {
    return call<ChatSettings>(() => bound.Settings.GetChatSettings(sessionId));
  },

  setChatOptions(sessionId: string, o: ChatOptionsValue): Promise<SessionInfo> {
    return call(() => bound.Settings.SetChatOptions(sessionId, o));
  },

  setChatModel(sessionId: string, model: string): Promise<SessionInfo> {
    return call(() => bound.Settings.SetChatModel(sessionId, model));
  },

  modelInfo(model: string): Promise<ModelInfo> {
    return call<ModelInfo>(() => bound.Settings.ModelInfo(model));
  },

  setModelSettings(model: string, ms: ModelSettings): Promise<ModelInfo> {
    return call<ModelInfo>(() => bound.Settings.SetModelSettings(model, ms));
  },

  getChatPreferences(): Promise<ChatPreferences> {
    return call<ChatPreferences>(() => bound.Settings.GetChatPreferences());
  },

  saveChatPreferences(p: ChatPreferences): Promise<ChatPreferences> {
    return call<ChatPreferences>(() => bound.Settings.SaveChatPreferences(p));
  },

  quickAskStatus(): Promise<QuickAskStatus> {
    return call<QuickAskStatus>(() => bound.Turns.QuickAskStatus());
  },

  setQuickAskShortcut(text: string): Promise<QuickAskStatus> {
    return call<QuickAskStatus>(() => bound.Turns.SetQuickAskShortcut(text));
  },

  /** Switches the window into quick ask (as the tray's Quick ask does). */
  quickAsk(): Promise<void> {
    return call<void>(() => bound.Turns.QuickAsk());
  },

  /** Puts the window back; with openMain it stays shown (Open in Talaria). */
  leaveQuickAsk(openMain: boolean): Promise<void> {
    return call<void>(() => bound.Turns.LeaveQuickAsk(openMain));
  },
};

function normaliseActivity(a: Activity): Activity {
  return { ...a, running: list(a?.running), waiting: num(a?.waiting) };
}

export type Api = typeof api;

/** The import of existing histories (Go's app.Imports; lib/imports.svelte.ts). */
export const importsApi = {
  /** Starts importing Hermes sessions: the ids given, or all of the profile. */
  async startHermes(runtimeId: string, sessionIds: string[], all: boolean): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.StartHermesImport({ runtime_id: runtimeId, session_ids: sessionIds, all })));
  },
  /** Asks for a Talaria web folder in a native dialog; "" when cancelled. */
  async chooseWebFolder(): Promise<string> {
    return (await call<string>(() => bound.Imports.ChooseWebFolder())) ?? '';
  },
  /** Starts importing a Talaria web folder. */
  async startWeb(folder: string): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.StartWebImport(folder)));
  },
  /** Stops the running import after the chat it is writing. */
  async cancel(jobId: string): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.CancelImport(jobId)));
  },
  /** The running or last import's progress. */
  async status(): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.ImportStatus()));
  },
  /** Every progress an import publishes. */
  onProgress(cb: (p: ImportProgress) => void): Unsubscribe {
    return EventsOn(IMPORT_PROGRESS_EVENT, (p: ImportProgress) => cb(normaliseProgress(p)));
  },
};

export type ImportsApi = typeof importsApi;

/** The window event of an import's progress (history.EventProgress). */
export const IMPORT_PROGRESS_EVENT = 'import_progress';

function normaliseProgress(p: ImportProgress): ImportProgress {
  return { ...p, problems: list(p?.problems), session_ids: list(p?.session_ids) };
}
