// Window state: the session list, the open session, its live stream, the agent's status
// and settings. Components read the fields and call the methods; all I/O goes through
// the Api handed in (src/lib/api.ts in the app, a fake in tests).

import type { Api } from './api';
import { ApiError, errorMessage } from './api';
import { isStale, todosFromMessages } from './cards';
import { StreamFollower } from './follower';
import type {
  AllowlistEntry,
  AppErrorData,
  ApprovalChoice,
  ApprovalData,
  ClarifyAnswer,
  ClarifyData,
  DoneData,
  Frame,
  MessageView,
  ProviderCheck,
  SessionInfo,
  Settings,
  SettingsInput,
  SidecarStatus,
  PendingView,
  Status,
  TodoItem,
  Usage,
  VaultAnswer,
  VaultResult,
} from './protocol';
import { mergePending, waiting, withdrawApproval, withdrawClarify, type StreamState } from './reducer';

export interface LastRun {
  usage: Usage | null;
  tps: number | null;
  duration_seconds: number | null;
}

export class AppStore {
  sessions = $state<SessionInfo[]>([]);
  activeId = $state<string | null>(null);
  messages = $state<MessageView[]>([]);
  loadingSession = $state(false);
  /** The open session's live stream, or null when it is idle. */
  live = $state<StreamState | null>(null);
  /** Banner for the open session: the last turn's apperror or a failed call. */
  banners = $state<Record<string, AppErrorData>>({});
  /** Footer figures of each session's last finished run. */
  lastRuns = $state<Record<string, LastRun>>({});
  sidecar = $state<SidecarStatus | null>(null);
  status = $state<Status | null>(null);
  settings = $state<Settings | null>(null);
  providerCheck = $state<ProviderCheck | null>(null);
  checkingProvider = $state(false);
  firstRunDismissed = $state(false);
  settingsOpen = $state(false);
  /** Error with no session to pin it to (start-up failures). */
  globalError = $state<string | null>(null);
  /** Per session: YOLO (approvals off) as the host last said. */
  yolo = $state<Record<string, boolean>>({});
  /** Per session: the todo list last seen (live, or read from the saved transcript). */
  todoLists = $state<Record<string, TodoItem[]>>({});
  /** Ids of the cards whose answer is on its way (their buttons are disabled). */
  answering = $state<string[]>([]);
  /** A failed answer, shown on its card. */
  cardError = $state<{ id: string; message: string } | null>(null);
  /** A short word about the cards of the open session (e.g. one was already settled). */
  cardNotice = $state<string | null>(null);
  /** Per session, until its stream ends: "Secret NAME provided" lines (never the value). */
  vaultNotes = $state<Record<string, string[]>>({});
  /**
   * Per session: how many approvals and clarify prompts wait for the user, from the
   * pending_count of the frames seen (the sidebar marks the sessions that need you).
   */
  waitingFor = $state<Record<string, { approvals: number; clarifies: number }>>({});
  /** The always-allowed command patterns (Settings). */
  allowlist = $state<AllowlistEntry[]>([]);
  allowlistError = $state<string | null>(null);
  /**
   * GetPending's answer while the open session has no live stream to fold it into (the
   * host has a card the window cannot place in a stream yet).
   */
  idlePending = $state<PendingView | null>(null);

  private follower: StreamFollower | null = null;
  private unsubscribers: Array<() => void> = [];
  private listing: Promise<void> | null = null;
  private relist = false;
  private readonly api: Api;

  constructor(api: Api) {
    this.api = api;
  }

  // ---- derived views -----------------------------------------------------------

  get activeSession(): SessionInfo | null {
    return this.sessions.find((s) => s.id === this.activeId) ?? null;
  }

  get banner(): AppErrorData | null {
    return this.activeId ? (this.banners[this.activeId] ?? null) : null;
  }

  /** True while the open session has a turn running. */
  get busy(): boolean {
    if (this.live && !this.live.ended) return true;
    return !!this.activeSession?.active_stream_id;
  }

  /** The approval card to show: the head of the open session's queue. */
  get approval(): ApprovalData | null {
    if (this.live) return this.live.approvals[0] ?? null;
    return this.idlePending?.approval ?? null;
  }

  /** Approvals waiting in the open session, the shown one included. */
  get approvalsWaiting(): number {
    if (this.live) return waiting(this.live.approvals.length, this.live.approvalCount);
    return this.idlePending?.approval ? this.idlePending.approval_count : 0;
  }

  /** The clarify or vault card to show. */
  get clarify(): ClarifyData | null {
    if (this.live) return this.live.clarifies[0] ?? null;
    return this.idlePending?.clarify ?? null;
  }

  get clarifiesWaiting(): number {
    if (this.live) return waiting(this.live.clarifies.length, this.live.clarifyCount);
    return this.idlePending?.clarify ? this.idlePending.clarify_count : 0;
  }

  get activeYolo(): boolean {
    return this.activeId ? this.yolo[this.activeId] === true : false;
  }

  get todos(): TodoItem[] | null {
    if (this.live?.todos) return this.live.todos;
    return this.activeId ? (this.todoLists[this.activeId] ?? null) : null;
  }

  get notes(): string[] {
    return this.activeId ? (this.vaultNotes[this.activeId] ?? []) : [];
  }

  get showFirstRun(): boolean {
    return !this.firstRunDismissed && this.providerCheck !== null && !this.providerCheck.ok;
  }

  // ---- start-up and events -----------------------------------------------------

  async start(): Promise<void> {
    this.unsubscribers.push(
      this.api.onFrame((f) => this.onFrame(f)),
      this.api.onSessionsChanged(() => void this.refreshSessions()),
      this.api.onOpenSession((id) => void this.openSession(id)),
      this.api.onSidecarStatus((s) => {
        this.sidecar = s;
        if (this.status) this.status = { ...this.status, sidecar: s };
      }),
    );
    const [sessions, status, settings] = await Promise.allSettled([
      this.api.listSessions(),
      this.api.getStatus(),
      this.api.getSettings(),
    ]);
    if (sessions.status === 'fulfilled') this.sessions = sortSessions(sessions.value);
    else this.globalError = errorMessage(sessions.reason);
    if (status.status === 'fulfilled') {
      this.status = status.value;
      this.sidecar ??= status.value.sidecar;
    }
    if (settings.status === 'fulfilled') this.settings = settings.value;
    if (this.sessions.length > 0) await this.openSession(this.sessions[0].id);
    void this.checkProvider();
  }

  stop(): void {
    for (const u of this.unsubscribers) u();
    this.unsubscribers = [];
    this.dropFollower();
  }

  async checkProvider(): Promise<ProviderCheck | null> {
    this.checkingProvider = true;
    try {
      this.providerCheck = await this.api.checkProvider();
    } catch (err) {
      this.providerCheck = { ok: false, message: errorMessage(err), hint: '', models: [] };
    } finally {
      this.checkingProvider = false;
    }
    return this.providerCheck;
  }

  /** Re-lists sessions; calls that overlap collapse into one more listing. */
  refreshSessions(): Promise<void> {
    if (this.listing) {
      this.relist = true;
      return this.listing;
    }
    this.listing = (async () => {
      try {
        do {
          this.relist = false;
          const list = await this.api.listSessions();
          this.sessions = sortSessions(list.map((s) => this.keepLocalBusy(s)));
        } while (this.relist);
      } catch (err) {
        this.globalError = errorMessage(err);
      } finally {
        this.listing = null;
      }
    })();
    return this.listing;
  }

  onFrame(f: Frame): void {
    if (!f || typeof f.session_id !== 'string') return;
    this.noteWaiting(f);
    if (f.event === 'title') {
      const title = (f.data as { title?: unknown } | null)?.title;
      if (typeof title === 'string') this.patchSession(f.session_id, { title });
    }
    if (f.session_id !== this.activeId) {
      if (f.event === 'stream_end') this.patchSession(f.session_id, { active_stream_id: '' });
      else if (f.event !== 'title') this.markBusy(f.session_id, f.stream_id);
      return;
    }
    if (!this.follower || this.follower.streamId !== f.stream_id) {
      this.follow(f.session_id, f.stream_id);
    }
    this.follower!.push(f);
  }

  /** True when a session has a card waiting (for the sidebar). */
  needsYou(sessionId: string): boolean {
    if (sessionId === this.activeId && this.live) return this.approvalsWaiting + this.clarifiesWaiting > 0;
    const w = this.waitingFor[sessionId];
    return !!w && w.approvals + w.clarifies > 0;
  }

  private noteWaiting(f: Frame): void {
    const d = (f.data ?? {}) as { pending_count?: unknown };
    const n = typeof d.pending_count === 'number' && d.pending_count >= 0 ? d.pending_count : null;
    const cur = this.waitingFor[f.session_id] ?? { approvals: 0, clarifies: 0 };
    let next = cur;
    if ((f.event === 'approval' || f.event === 'approval_resolved') && n !== null) next = { ...cur, approvals: n };
    else if ((f.event === 'clarify' || f.event === 'clarify_resolved') && n !== null) next = { ...cur, clarifies: n };
    else if (f.event === 'stream_end') next = { approvals: 0, clarifies: 0 };
    if (next.approvals !== cur.approvals || next.clarifies !== cur.clarifies) {
      this.waitingFor = { ...this.waitingFor, [f.session_id]: next };
    }
  }

  // ---- sessions ----------------------------------------------------------------

  async openSession(id: string): Promise<void> {
    if (this.activeId !== id) this.dropFollower();
    this.activeId = id;
    this.loadingSession = true;
    try {
      const view = await this.api.getSession(id);
      if (this.activeId !== id) return;
      this.messages = view.messages;
      this.keepTodos(id, view.messages);
      this.upsertSession(view.session);
      const sid = view.session.active_stream_id;
      if (sid && (!this.follower || this.follower.streamId !== sid)) {
        this.follow(id, sid);
        void this.follower!.replay();
      }
      void this.refreshPending(id);
    } catch (err) {
      this.setBanner(id, 'Could not open the conversation', errorMessage(err));
    } finally {
      if (this.activeId === id) this.loadingSession = false;
    }
  }

  async newSession(): Promise<SessionInfo | null> {
    try {
      const s = await this.api.newSession();
      this.upsertSession(s);
      this.dropFollower();
      this.activeId = s.id;
      this.messages = [];
      return s;
    } catch (err) {
      this.globalError = `Could not start a new chat: ${errorMessage(err)}`;
      return null;
    }
  }

  /** Sends a message; resolves false (and shows why) when the turn did not start. */
  async send(text: string): Promise<boolean> {
    const body = text.trim();
    if (!body || this.busy) return false;
    let sid = this.activeId;
    if (!sid) {
      const s = await this.newSession();
      if (!s) return false;
      sid = s.id;
    }
    this.clearBanner(sid);
    try {
      const started = await this.api.startTurn(sid, body);
      if (this.activeId === sid) {
        if (!this.follower || this.follower.streamId !== started.stream_id) {
          this.follow(sid, started.stream_id, started.user_message);
          this.live = this.follower!.current;
        }
      }
      this.markBusy(sid, started.stream_id);
      return true;
    } catch (err) {
      this.setBanner(sid, 'Message not sent', errorMessage(err));
      return false;
    }
  }

  async cancel(): Promise<void> {
    const streamId = this.live?.streamId || this.activeSession?.active_stream_id;
    if (!streamId) return;
    try {
      await this.api.cancel(streamId);
    } catch (err) {
      if (this.activeId) this.setBanner(this.activeId, 'Could not stop the turn', errorMessage(err));
    }
  }

  // ---- settings ----------------------------------------------------------------

  async saveSettings(input: SettingsInput): Promise<Settings> {
    const saved = await this.api.saveSettings(input);
    this.settings = saved;
    // The endpoint may have changed: re-check quietly so the first-run screen follows.
    void this.checkProvider();
    return saved;
  }

  /** Saves the form, then tries the configured endpoint. */
  async testConnection(input: SettingsInput): Promise<ProviderCheck | null> {
    this.settings = await this.api.saveSettings(input);
    return this.checkProvider();
  }

  dismissBanner(): void {
    if (this.activeId) this.clearBanner(this.activeId);
  }

  // ---- cards: approvals, clarify, vault ------------------------------------------
  // Called only from a click (or an explicit shortcut) on the card itself.

  /** Re-reads the open session's pending cards and YOLO switch from the host. */
  async refreshPending(sessionId = this.activeId): Promise<void> {
    if (!sessionId) return;
    let p: PendingView;
    try {
      p = await this.api.getPending(sessionId);
    } catch (err) {
      console.warn('GetPending failed', errorMessage(err));
      return;
    }
    this.yolo = { ...this.yolo, [sessionId]: p.yolo };
    if (this.activeId !== sessionId) return;
    if (this.follower && this.follower.sessionId === sessionId) {
      this.idlePending = null;
      this.follower.patch((s) => mergePending(s, p));
    } else {
      this.idlePending = p.approval || p.clarify ? p : null;
    }
  }

  async respondApproval(approvalId: string, choice: ApprovalChoice): Promise<boolean> {
    return this.answer(approvalId, 'approval', (sid) => this.api.respondApproval(sid, approvalId, choice));
  }

  /** Turns YOLO on or off for the open session; from a card pass that card's id. */
  async setYolo(on: boolean, fromApprovalId = ''): Promise<boolean> {
    const sid = this.activeId;
    if (!sid) return false;
    const run = async () => {
      await this.api.setYolo(sid, on, fromApprovalId);
      this.yolo = { ...this.yolo, [sid]: on };
    };
    if (!fromApprovalId) {
      try {
        await run();
        return true;
      } catch (err) {
        this.setBanner(sid, on ? 'Could not turn YOLO on' : 'Could not turn YOLO off', errorMessage(err));
        return false;
      }
    }
    // The card stays until the host resolves it (reason "yolo").
    return this.answer(fromApprovalId, 'approval', run, false);
  }

  async respondClarify(clarifyId: string, answers: ClarifyAnswer[]): Promise<boolean> {
    return this.answer(clarifyId, 'clarify', (sid) => this.api.respondClarify(sid, clarifyId, answers));
  }

  /**
   * Answers a vault prompt. The value is handed to the api and not kept here; the window
   * notes only that the secret was provided or declined.
   */
  async respondVault(card: ClarifyData, answer: VaultAnswer, remember: boolean): Promise<VaultResult | null> {
    let result: VaultResult | null = null;
    const name = card.name || 'secret';
    const ok = await this.answer(card.clarify_id, 'clarify', async (sid) => {
      result = await this.api.respondVault(sid, card.clarify_id, answer, remember);
      const r: VaultResult = result;
      // Not taken: the prompt was settled meanwhile. Treat it like a stale card.
      if (!r.ok) throw new ApiError('stale: the agent no longer waits for this secret');
      const note =
        r.kept === 'declined'
          ? `Secret ${name} declined`
          : `Secret ${name} provided${r.kept === 'keychain' ? ' (saved in the system keychain)' : ' (this session only)'}`;
      this.vaultNotes = { ...this.vaultNotes, [sid]: [...(this.vaultNotes[sid] ?? []), note] };
    });
    return ok ? result : null;
  }

  async loadAllowlist(): Promise<void> {
    try {
      this.allowlist = await this.api.getAllowlist();
      this.allowlistError = null;
    } catch (err) {
      this.allowlistError = errorMessage(err);
    }
  }

  async removeAllowlist(pattern: string): Promise<void> {
    try {
      await this.api.removeAllowlist(pattern);
      this.allowlistError = null;
    } catch (err) {
      this.allowlistError = errorMessage(err);
    }
    await this.loadAllowlist();
  }

  /**
   * Sends one answer for a card of the open session. On success the card goes (settled,
   * unless `settle` is false: the host withdraws it by a frame); when the host calls it
   * stale the card goes and the queue is re-read; another error stays on the card.
   */
  private async answer(
    id: string,
    kind: 'approval' | 'clarify',
    send: (sessionId: string) => Promise<void>,
    settle = true,
  ): Promise<boolean> {
    const sid = this.activeId;
    if (!sid || this.answering.includes(id)) return false;
    this.answering = [...this.answering, id];
    if (this.cardError?.id === id) this.cardError = null;
    this.cardNotice = null;
    const withdraw = (settled: boolean) => {
      if (this.follower && this.follower.sessionId === sid) {
        this.follower.patch((s) => (kind === 'approval' ? withdrawApproval(s, id, settled) : withdrawClarify(s, id, settled)));
      } else if (this.idlePending && this.activeId === sid) {
        const p = this.idlePending;
        this.idlePending = kind === 'approval'
          ? { ...p, approval: p.approval?.approval_id === id ? null : p.approval }
          : { ...p, clarify: p.clarify?.clarify_id === id ? null : p.clarify };
      }
    };
    try {
      await send(sid);
      if (settle) withdraw(true);
      if (!this.follower || this.follower.sessionId !== sid) void this.refreshPending(sid);
      return true;
    } catch (err) {
      const message = errorMessage(err);
      if ((err instanceof ApiError && err.stale) || isStale(message)) {
        withdraw(false);
        if (this.activeId === sid) this.cardNotice = 'That request was already answered or has timed out.';
        await this.refreshPending(sid);
      } else if (this.activeId === sid) {
        this.cardError = { id, message };
      }
      return false;
    } finally {
      this.answering = this.answering.filter((x) => x !== id);
    }
  }

  // ---- internals ---------------------------------------------------------------

  private follow(sessionId: string, streamId: string, userMessage: MessageView | null = null): void {
    this.dropFollower();
    const follower = new StreamFollower({
      sessionId,
      streamId,
      userMessage,
      streamSince: (id, seq) => this.api.streamSince(id, seq),
      onState: (s) => {
        if (this.follower !== follower) return;
        if (s.todos && s.todos !== this.todoLists[sessionId]) this.todoLists = { ...this.todoLists, [sessionId]: s.todos };
        this.live = s;
        if (s.ended) void this.finish(follower, s);
      },
      onError: (err) => console.warn('stream catch-up failed', errorMessage(err)),
    });
    this.follower = follower;
    this.live = follower.current;
    this.idlePending = null;
    this.markBusy(sessionId, streamId);
  }

  /** After stream_end: keep the banner and footer figures, re-read the saved rows. */
  private async finish(follower: StreamFollower, s: StreamState): Promise<void> {
    const sid = s.sessionId;
    if (s.error) this.banners = { ...this.banners, [sid]: s.error };
    const done: DoneData | null = s.done;
    this.lastRuns = {
      ...this.lastRuns,
      [sid]: { usage: s.usage, tps: done?.tps ?? s.tps, duration_seconds: done?.duration_seconds ?? null },
    };
    this.patchSession(sid, { active_stream_id: '' });
    try {
      const view = await this.api.getSession(sid);
      if (this.follower !== follower) return;
      this.messages = view.messages;
      this.keepTodos(sid, view.messages);
      this.upsertSession(view.session);
    } catch (err) {
      this.setBanner(sid, 'Could not reload the conversation', errorMessage(err));
    } finally {
      if (this.follower === follower) {
        follower.stop();
        this.follower = null;
        this.live = null;
        this.cardNotice = null;
        this.cardError = null;
      }
      // The saved transcript now records what was provided.
      if (sid in this.vaultNotes) {
        const notes = { ...this.vaultNotes };
        delete notes[sid];
        this.vaultNotes = notes;
      }
    }
    void this.refreshSessions();
  }

  private dropFollower(): void {
    this.follower?.stop();
    this.follower = null;
    this.live = null;
    this.idlePending = null;
    this.cardNotice = null;
    this.cardError = null;
  }

  /** Keeps the todo list a saved transcript shows, unless a live stream has a newer one. */
  private keepTodos(sessionId: string, messages: MessageView[]): void {
    const todos = todosFromMessages(messages);
    if (todos && !(this.follower?.sessionId === sessionId && this.live?.todos)) {
      this.todoLists = { ...this.todoLists, [sessionId]: todos };
    }
  }

  private setBanner(sessionId: string, label: string, message: string): void {
    this.banners = { ...this.banners, [sessionId]: { type: 'error', label, message, hint: '' } };
  }

  private clearBanner(sessionId: string): void {
    if (!(sessionId in this.banners)) return;
    const next = { ...this.banners };
    delete next[sessionId];
    this.banners = next;
  }

  private markBusy(sessionId: string, streamId: string): void {
    const s = this.sessions.find((x) => x.id === sessionId);
    if (s && s.active_stream_id !== streamId) this.patchSession(sessionId, { active_stream_id: streamId });
  }

  /** A listing taken before our stream_end must not clear a stream we still follow. */
  private keepLocalBusy(s: SessionInfo): SessionInfo {
    if (this.follower && this.follower.sessionId === s.id && !this.live?.ended && !s.active_stream_id) {
      return { ...s, active_stream_id: this.follower.streamId };
    }
    return s;
  }

  private patchSession(id: string, patch: Partial<SessionInfo>): void {
    const i = this.sessions.findIndex((s) => s.id === id);
    if (i < 0) return;
    const next = [...this.sessions];
    next[i] = { ...next[i], ...patch };
    this.sessions = next;
  }

  private upsertSession(s: SessionInfo): void {
    const rest = this.sessions.filter((x) => x.id !== s.id);
    this.sessions = sortSessions([...rest, this.keepLocalBusy(s)]);
  }
}

/** Newest first (updated_at, then created_at). */
export function sortSessions(list: SessionInfo[]): SessionInfo[] {
  return [...list].sort((a, b) => b.updated_at - a.updated_at || b.created_at - a.created_at);
}
