// Window state: the open session, its rows and its live stream, and sending a message.
// The other areas are rooms of their own that this store hosts (store.list, store.cards,
// store.steering, store.config, store.notices, ...; issue 25), each handed the Api and
// this store as its host. Components read the fields and call the methods; all I/O goes
// through the Api handed in (src/lib/api.ts in the app, a fake in tests).

import type { Api } from './api';
import { errorCode, errorMessage, errorText, takeBootSessions } from './api';
import { todosFromMessages } from './cards';
import { StreamFollower } from './follower';
import { ChatFeatures } from './chatfeatures.svelte';
import { BackgroundWork } from './background.svelte';
import { Drafts } from './drafts.svelte';
import { SessionSearch } from './search.svelte';
import { Supervision } from './supervision.svelte';
import { ApprovalCards } from './approvals.svelte';
import { SessionList, sortSessions } from './sessions.svelte';
import { Steering } from './steering.svelte';
import { AppSettings } from './settings.svelte';
import { Paging } from './paging.svelte';
import { DatabaseRecovery } from './database.svelte';
import { Notices } from './notices.svelte';
import { WindowWatch } from './windowwatch';
export { FLASH_MS } from './notices.svelte';
export { sortSessions } from './sessions.svelte';
export type { SidePanel, TaskResultView } from './background.svelte';
import type {
  TranscriptPage,
  DoneData,
  Frame,
  MessageView,
  SearchHit,
  SessionInfo,
  TodoItem,
  Usage,
} from './protocol';
import { afterNextPaint, markPainted } from './perf';
import { AROUND, FIRST_PAGE, MAX_PAGE, PAGE, SESSION_PAGE, replaceWith, spliceFrom } from './transcript';
import { parseCommand } from './tasks';
import type { StreamState } from './reducer';

export interface LastRun {
  usage: Usage | null;
  tps: number | null;
  duration_seconds: number | null;
  /** The turn stopped at the agent's tool-call limit. */
  tool_limit_reached?: boolean;
}

export { SEARCH_DEBOUNCE_MS } from './search.svelte';
export { DRAFT_DEBOUNCE_MS } from './drafts.svelte';
/** A message the chat should scroll to and highlight (a search hit). */
export interface FocusTarget {
  sessionId: string;
  position: number;
  /** Changes on every request, so the same hit clicked twice scrolls again. */
  key: number;
}

/** The longest message text the host takes (turn.MaxMessageBytes): 1 MiB. */
export const MAX_MESSAGE_BYTES = 1 << 20;

export class AppStore {
  activeId = $state<string | null>(null);
  /**
   * The open session's saved rows that are loaded: a run of consecutive rows
   * (lib/transcript.ts). Never changed in place, only replaced (rows already loaded keep
   * their objects), so it is raw state: a row is no reactive proxy of its own, which cost
   * about 3 KB of the webview's heap per row (issue 16).
   */
  messages = $state.raw<MessageView[]>([]);
  loadingSession = $state(false);
  /** The open session has saved rows before / after the loaded ones. */
  transcriptBefore = $state(false);
  transcriptAfter = $state(false);
  /** The open session's live stream, or null when it is idle (replaced whole, never changed in place). */
  live = $state.raw<StreamState | null>(null);
  /**
   * `live` as the chat shows it: a change that only grew the text or the figures is
   * shown at most every LIVE_MS (showLive); any other change at once.
   */
  liveShown = $state.raw<StreamState | null>(null);
  /** Footer figures of each session's last finished run. */
  lastRuns = $state<Record<string, LastRun>>({});
  /** Per session: the todo list last seen (live, or read from the saved transcript). */
  todoLists = $state<Record<string, TodoItem[]>>({});

  // ---- the composer, unsaved answers -----------------------------------------------
  /** Bumped when the composer should take the focus (a steer came back to be edited). */
  composerFocus = $state(0);
  /**
   * Per session: streams that ended but whose answer the host could not save ("Could
   * not save the answer"); the window keeps showing what streamed.
   */
  unsaved = $state<Record<string, StreamState[]>>({});

  // ---- search hits -----------------------------------------------------------------
  /** The message to scroll to and highlight once its session is open. */
  focusTarget = $state<FocusTarget | null>(null);

  private follower: StreamFollower | null = null;
  /** The frame being applied only grows text or figures (its state may wait a little). */
  private streamingFrame = false;
  /** A live state waiting to be shown, and its timer (showLive). */
  private liveLater: StreamState | null = null;
  private liveTimer: ReturnType<typeof setTimeout> | null = null;
  private liveShownAt = 0;
  private focusSeq = 0;
  private unsubscribers: Array<() => void> = [];
  private readonly api: Api;
  /** Files, figures, message actions and chat settings (lib/chatfeatures.svelte.ts). */
  readonly chat: ChatFeatures;
  /** Background tasks and side questions (lib/background.svelte.ts). */
  readonly background: BackgroundWork;
  /** The composer's drafts (lib/drafts.svelte.ts). */
  readonly drafts: Drafts;
  /** The sidebar's search (lib/search.svelte.ts). */
  readonly search: SessionSearch;
  /** Diagnostics and restarting the agent (lib/supervision.svelte.ts). */
  readonly supervision: Supervision;
  /** Approval, clarify and vault cards, YOLO and the allowlist (lib/approvals.svelte.ts). */
  readonly cards: ApprovalCards;
  /** The sidebar's sessions and the actions on them (lib/sessions.svelte.ts). */
  readonly list: SessionList;
  /** Messages queued for a running turn (lib/steering.svelte.ts). */
  readonly steering: Steering;
  /** The settings and the provider check (lib/settings.svelte.ts). */
  readonly config: AppSettings;
  /** Older and newer pages of the open chat's rows (lib/paging.svelte.ts). */
  readonly paging: Paging;
  /** The database check's recovery report (lib/database.svelte.ts). */
  readonly database: DatabaseRecovery;
  /** The banners, short notices and errors of the window (lib/notices.svelte.ts). */
  readonly notices: Notices;
  /** Telling the host whether the user looks at the window (lib/windowwatch.ts). */
  readonly windowWatch: WindowWatch;

  constructor(api: Api) {
    this.api = api;
    this.notices = new Notices(this);
    this.list = new SessionList(api, this);
    this.cards = new ApprovalCards(api, this);
    this.steering = new Steering(api, this);
    this.config = new AppSettings(api);
    this.paging = new Paging(api, this);
    this.database = new DatabaseRecovery(api, this);
    this.windowWatch = new WindowWatch(api, this);
    this.chat = new ChatFeatures(api, this);
    this.background = new BackgroundWork(api, this);
    this.drafts = new Drafts(api, this);
    this.search = new SessionSearch(api);
    this.supervision = new Supervision(api, this);
    // The first page of the sidebar came with the page when the host could read it
    // (app/boot.go): taken before the first render, so the window's first frame draws
    // the list instead of an empty sidebar and then the list (issue 16).
    const boot = takeBootSessions();
    if (boot !== null && boot.limit === SESSION_PAGE) {
      this.list.sessions = sortSessions(boot.sessions);
      this.list.sessionsMore = boot.sessions.length === SESSION_PAGE;
      this.fromBoot = true;
      // The first chat's newest rows came too: opening it at start needs no round trip
      // (issue 24). Used once, by the first openSession of that chat.
      this.bootTranscript = boot.transcript;
    }
  }

  /** Whether the sidebar's first page came with the page (read again after the paint). */
  private fromBoot = false;
  /** The first listed chat's newest rows, when they came with the page (openSession takes them once). */
  private bootTranscript: TranscriptPage | null = null;

  // ---- the cards' host (CardsHost) ------------------------------------------------

  follows(sessionId: string): boolean {
    return !!this.follower && this.follower.sessionId === sessionId;
  }

  patchLive(fn: (s: StreamState) => StreamState): void {
    this.follower?.patch(fn);
  }

  // ---- steering's host (SteeringHost) -------------------------------------------------

  followsStream(streamId: string): boolean {
    return !!this.follower && this.follower.streamId === streamId;
  }

  followTurn(sessionId: string, streamId: string, userMessage: MessageView | null): void {
    this.follow(sessionId, streamId, userMessage);
    void this.follower!.replay();
  }

  // ---- the session list's host (SessionListHost) -----------------------------------

  followedStream(sessionId: string): string | null {
    return this.follower && this.follower.sessionId === sessionId && !this.live?.ended ? this.follower.streamId : null;
  }

  async forgetSession(id: string): Promise<void> {
    this.drafts.forget(id);
    if (this.activeId === id) {
      this.dropFollower();
      this.clearBanner(id);
      this.activeId = null;
      this.messages = [];
      this.transcriptBefore = this.transcriptAfter = false;
      if (this.list.sessions.length > 0) await this.openSession(this.list.sessions[0].id);
    }
  }

  // ---- notices, for the rooms' hosts (lib/notices.svelte.ts) ------------------------

  get info(): string | null {
    return this.notices.info;
  }

  set info(text: string | null) {
    this.notices.info = text;
  }

  get globalError(): string | null {
    return this.notices.globalError;
  }

  set globalError(text: string | null) {
    this.notices.globalError = text;
  }

  setBanner(sessionId: string, label: string, err: unknown): void {
    this.notices.setBanner(sessionId, label, err);
  }

  clearBanner(sessionId: string): void {
    this.notices.clearBanner(sessionId);
  }

  flashInfo(text: string, ms?: number): void {
    this.notices.flashInfo(text, ms);
  }

  actionError(label: string, err: unknown): void {
    this.notices.actionError(label, err);
  }

  // ---- the chat features' host (ChatHost) ----------------------------------------

  activeRevision(): number {
    return this.activeSession?.revision ?? 0;
  }

  notify(sessionId: string, label: string, message: string): void {
    this.setBanner(sessionId, label, message);
  }

  /** Re-reads the open chat's rows. */
  async reload(sessionId: string): Promise<void> {
    if (this.activeId !== sessionId) return;
    try {
      // The last screen again: a retry, an edit or a summary changed the newest rows.
      const view = await this.api.getTranscript(sessionId, -1, FIRST_PAGE);
      if (this.activeId !== sessionId) return;
      this.messages = replaceWith(this.messages, view.messages);
      this.transcriptBefore = view.before;
      this.transcriptAfter = view.after;
      this.list.upsertSession(view.session);
    } catch (err) {
      this.setBanner(sessionId, 'Could not reload the conversation', err);
    }
  }

  /** A turn started by a message action (retry, edit, summarise): rows re-read, stream followed. */
  async adoptTurn(sessionId: string, started: { stream_id: string; user_message: MessageView }): Promise<void> {
    this.clearBanner(sessionId);
    this.list.markBusy(sessionId, started.stream_id);
    if (this.activeId !== sessionId) return;
    if (!this.follower || this.follower.streamId !== started.stream_id) {
      this.follow(sessionId, started.stream_id, started.user_message);
      void this.follower!.replay();
    }
    await this.reload(sessionId);
  }

  // ---- derived views -----------------------------------------------------------

  get activeSession(): SessionInfo | null {
    return this.list.sessions.find((s) => s.id === this.activeId) ?? this.list.archived.find((s) => s.id === this.activeId) ?? null;
  }

  /** The composer's text for the open session. */
  get draft(): string {
    return this.drafts.of(this.activeId);
  }

  set draft(text: string) {
    this.drafts.set(text, this.activeId);
  }

  /** Streams of the open session that ended unsaved (their text stays on screen). */
  get unsavedStreams(): StreamState[] {
    return this.activeId ? (this.unsaved[this.activeId] ?? []) : [];
  }

  get lastRun(): LastRun | null {
    return this.activeId ? (this.lastRuns[this.activeId] ?? null) : null;
  }

  /** True while the open session has a turn running. */
  get busy(): boolean {
    if (this.live && !this.live.ended) return true;
    return !!this.activeSession?.active_stream_id;
  }

  get todos(): TodoItem[] | null {
    if (this.live?.todos) return this.live.todos;
    return this.activeId ? (this.todoLists[this.activeId] ?? null) : null;
  }

  // ---- start-up and events -----------------------------------------------------

  async start(): Promise<void> {
    this.unsubscribers.push(
      this.api.onFrame((f) => this.onFrame(f)),
      this.api.onSessionsChanged(() => void this.list.refreshSessions()),
      this.api.onOpenSession((id) => void this.openSession(id)),
      this.api.onSidecarStatus((s) => this.supervision.setSidecar(s)),
      this.api.onActivity((a) => this.cards.onActivity(a)),
      this.api.onBackgroundTasks((u) => this.background.onTasks(u)),
      this.api.onDatabase((e) => void this.database.onDatabase(e)),
    );
    // The sidebar waits for its list only. The first page came with the page when the
    // host could read it (app/boot.go); it was read before the events above were
    // listened to, so it is read again after the paint.
    const fromBoot = this.fromBoot;
    if (!fromBoot) {
      await this.list.loadFirstPage();
    }
    markPainted('talaria:sidebar');
    // What the first screen does not show is asked for once it is painted: answers that
    // came before the first frame were handled and drawn in it, holding it back (issue 16).
    // The settings also read the keyring, which may be locked and ask the user to
    // unlock it first. The sidecar's launch and the tray icon wait for this paint too
    // (App.WindowPainted).
    void afterNextPaint(1000).then(() => {
      void this.api.windowPainted().catch(() => {});
      if (fromBoot) void this.list.refreshSessions();
      void this.api.getStatus().then(
        (status) => this.supervision.setStatus(status),
        () => {},
      );
      void this.api.getSettings().then(
        (settings) => (this.config.settings = settings),
        () => {},
      );
      void this.database.loadRecovery();
      void this.api.getActivity().then(
        (a) => this.cards.onActivity(a),
        () => {},
      );
    });
    // The sidebar is painted before the first chat's rows are drawn (they are asked for
    // at once): drawing both in one frame held the window's first paint back by the
    // chat's rendering (issue 16).
    if (this.list.sessions.length > 0) await this.openSession(this.list.sessions[0].id);
    else await afterNextPaint(1000);
    // The first chat on screen: the last chat with its newest rows drawn, or the empty
    // chat of a fresh data folder (the window benchmark's start-up figure, issue 24).
    if (this.list.sessions.length === 0 || (this.activeId === this.list.sessions[0]?.id && !this.loadingSession)) markPainted('talaria:chat');
    // The provider is checked once the first screen is up: its answer often arrived
    // before the first frame, and the first-run panel then doubled that frame's style
    // and layout work (issue 16).
    void this.config.checkProvider();
  }

  stop(): void {
    for (const u of this.unsubscribers) u();
    this.unsubscribers = [];
    this.dropFollower();
    this.background.stop();
    this.search.stop();
    if (this.liveTimer) clearTimeout(this.liveTimer);
    this.notices.stop();
    this.drafts.flushAll();
  }

  onFrame(f: Frame): void {
    if (!f || typeof f.session_id !== 'string') return;
    if (this.background.routeSideFrame(f)) return;
    // A background task's hidden session: its state comes with `background_tasks`.
    if (this.background.isTaskSession(f.session_id)) return;
    this.cards.noteWaiting(f);
    if (f.event === 'title') {
      const title = (f.data as { title?: unknown } | null)?.title;
      if (typeof title === 'string') this.list.patchSession(f.session_id, { title });
    }
    if (f.event === 'cancel') {
      const unsent = (f.data as { unsent_steers?: unknown } | null)?.unsent_steers;
      if (Array.isArray(unsent)) void this.drafts.restoreUnsent(f.session_id, f.stream_id, unsent.filter((t): t is string => typeof t === 'string' && t !== ''));
    }
    if (f.session_id !== this.activeId) {
      if (f.event === 'stream_end') this.list.patchSession(f.session_id, { active_stream_id: '' });
      else if (f.event !== 'title') this.list.markBusy(f.session_id, f.stream_id);
      return;
    }
    if (!this.follower || this.follower.streamId !== f.stream_id) {
      this.follow(f.session_id, f.stream_id);
    }
    this.streamingFrame = STREAMING_EVENTS.has(f.event);
    try {
      this.follower!.push(f);
    } finally {
      this.streamingFrame = false;
    }
  }

  /**
   * Sets the live state. The chat's copy (liveShown) of one that only grew the text or
   * the figures follows at most every LIVE_MS (a streaming answer is rendered that often
   * anyway, and each change re-renders the chat's live rows); any other change at once,
   * with the text so far.
   */
  private showLive(s: StreamState): void {
    this.live = s;
    const now = Date.now();
    if (this.streamingFrame && this.liveShown && !s.ended && now - this.liveShownAt < LIVE_MS) {
      this.liveLater = s;
      this.liveTimer ??= setTimeout(() => {
        this.liveTimer = null;
        const later = this.liveLater;
        this.liveLater = null;
        if (later && this.live === later) this.setLiveNow(later);
      }, LIVE_MS - (now - this.liveShownAt));
      return;
    }
    this.setLiveNow(s);
  }

  private setLiveNow(s: StreamState | null): void {
    if (this.liveTimer) clearTimeout(this.liveTimer);
    this.liveTimer = null;
    this.liveLater = null;
    this.liveShownAt = Date.now();
    this.live = s;
    this.liveShown = s;
  }

  /** The open chat's runtime ("builtin" when none is open). */
  activeRuntime(): string {
    return this.activeSession?.runtime || 'builtin';
  }

  /** Gives the composer the focus (a steer came back to be edited). */
  focusComposer(): void {
    this.composerFocus++;
  }

  /** Whether the sidebar (or the archive) lists the session. */
  knowsSession(sessionId: string): boolean {
    return this.list.knows(sessionId);
  }

  /** True when a session has a card waiting (for the sidebar). */
  needsYou(sessionId: string): boolean {
    if (this.background.taskNeedsYou(sessionId)) return true;
    if (sessionId === this.activeId && this.live) return this.cards.approvalsWaiting + this.cards.clarifiesWaiting > 0;
    const w = this.cards.waitingFor[sessionId];
    return !!w && w.approvals + w.clarifies > 0;
  }

  // ---- sessions ----------------------------------------------------------------

  /** Whether the open chat id has nothing of the user's yet: no row, turn, draft or file. */
  private isEmptyChat(id: string): boolean {
    return id === this.activeId && !this.loadingSession && this.messages.length === 0 && !this.busy && !this.live
      && !this.drafts.of(id).trim() && this.chat.stagedIds(id).length === 0;
  }

  /**
   * Leaves the open chat id for another: its draft is saved, then a chat left empty (a
   * New chat never written in) is discarded by the host, which checks again with the
   * draft, files and tasks in view, so empty chats do not pile up in the sidebar.
   */
  private leave(id: string): void {
    const empty = this.isEmptyChat(id);
    void this.drafts.flush(id).then(async () => {
      if (!empty) return;
      try {
        if (await this.api.discardIfEmpty(id)) {
          this.list.sessions = this.list.sessions.filter((s) => s.id !== id);
        }
      } catch (err) {
        console.warn('DiscardIfEmpty failed', errorMessage(err)); // the empty chat stays; nothing is lost
      }
    });
  }

  /**
   * Opens session `id`: its last screen of rows (or the rows around a search hit).
   */
  async openSession(id: string): Promise<void> {
    // The open chat clicked again: its rows stay as they are (older pages the user
    // scrolled back to included); only a search hit in it moves the view.
    if (this.activeId === id && !this.loadingSession && this.messages.length > 0 && this.focusTarget?.sessionId !== id) return;
    if (this.activeId !== id) {
      this.dropFollower();
      if (this.activeId) this.leave(this.activeId);
      if (this.focusTarget && this.focusTarget.sessionId !== id) this.focusTarget = null;
      // Never show the previous chat's rows while this one's are on their way.
      this.messages = [];
      this.transcriptBefore = this.transcriptAfter = false;
    }
    this.activeId = id;
    this.loadingSession = true;
    void this.drafts.load(id);
    void this.background.loadTasks(id);
    try {
      // The last screen of rows, or the rows around the search hit to open at.
      const focus = this.focusTarget?.sessionId === id ? this.focusTarget.position : null;
      const boot = this.bootTranscript;
      this.bootTranscript = null;
      const asked = focus !== null
        ? this.api.getTranscriptFrom(id, Math.max(0, focus - AROUND), PAGE)
        : boot?.session.id === id
          ? Promise.resolve(boot)
          : this.api.getTranscript(id, -1, FIRST_PAGE);
      const view = await asked;
      if (this.activeId !== id) return;
      this.messages = replaceWith(this.messages, view.messages);
      this.transcriptBefore = view.before;
      this.transcriptAfter = view.after;
      this.keepTodos(id, view.messages);
      this.list.upsertSession(view.session);
      const sid = view.session.active_stream_id;
      if (sid && (!this.follower || this.follower.streamId !== sid)) {
        this.follow(id, sid);
        void this.follower!.replay();
      }
      void this.cards.refreshPending(id);
    } catch (err) {
      this.setBanner(id, 'Could not open the conversation', err);
    } finally {
      if (this.activeId === id) this.loadingSession = false;
      // The chat's figures and settings after its rows: reading them costs the host a
      // pass over the whole transcript, which should not delay the first screen.
      if (this.activeId === id) void this.chat.open(id);
    }
  }

  /**
   * Opens a new chat (saved empty, so its runtime and settings can be chosen before the
   * first message). While the open chat is itself still empty, it is the new chat: no
   * second empty one is made.
   */
  async newSession(): Promise<SessionInfo | null> {
    const open = this.activeSession;
    if (open && this.isEmptyChat(open.id)) return open;
    try {
      const s = await this.api.newSession();
      this.list.upsertSession(s);
      this.dropFollower();
      if (this.activeId) this.leave(this.activeId);
      this.activeId = s.id;
      this.messages = [];
      this.transcriptBefore = this.transcriptAfter = false;
      this.drafts.markNew(s.id);
      void this.chat.open(s.id);
      return s;
    } catch (err) {
      this.globalError = `Could not start a new chat: ${errorText(err)}`;
      return null;
    }
  }

  /**
   * Sends a message: it starts a turn, or, while one runs, steers it (the agent reads it
   * at its next step). Resolves false (and shows why) when nothing was sent.
   */
  async send(text: string): Promise<boolean> {
    const files = this.activeId ? this.chat.stagedIds(this.activeId) : [];
    const cmd = files.length > 0 && !text.trim() ? ({ kind: 'message', text: '' } as const) : parseCommand(text);
    switch (cmd.kind) {
      case 'none':
        return false;
      case 'hint':
        this.flashInfo(cmd.hint);
        return false;
      case 'background':
        return this.background.startBackgroundTask(cmd.prompt);
      case 'btw':
        return this.background.askSideQuestion(cmd.question);
    }
    const body = cmd.text;
    const size = new TextEncoder().encode(body).length;
    if (size > MAX_MESSAGE_BYTES) {
      // Refused here too, before megabytes travel to the host (it refuses them as well).
      this.setBanner(this.activeId ?? '', 'Message not sent',
        `The message is ${(size / 1048576).toFixed(1)} MiB; messages up to 1 MiB are sent. Attach the text as a file, or send a shorter part.`);
      return false;
    }
    let sid = this.activeId;
    if (!sid) {
      const s = await this.newSession();
      if (!s) return false;
      sid = s.id;
      // What was typed before the session existed is being sent now (the composer took
      // it out of the box); what was typed since is the new chat's draft.
      this.drafts.adoptUnsaved(sid);
    }
    this.clearBanner(sid);
    // Files wait in the composer while a turn runs: they go with the next message.
    if (this.busy) return body.trim() ? this.steering.steer(sid, body) : false;
    try {
      const ids = this.chat.stagedIds(sid);
      const started = ids.length > 0 ? await this.api.sendMessage(sid, body, ids) : await this.api.startTurn(sid, body);
      if (ids.length > 0) this.chat.sent(sid);
      if (this.activeId === sid) {
        if (!this.follower || this.follower.streamId !== started.stream_id) {
          this.follow(sid, started.stream_id, started.user_message);
          this.setLiveNow(this.follower!.current);
        }
      }
      this.list.markBusy(sid, started.stream_id);
      return true;
    } catch (err) {
      // A turn this window had not seen yet holds the session (a follow-up of queued
      // messages, another window): steer it instead.
      if (errorCode(err) === 'busy') return this.steering.steer(sid, body);
      this.setBanner(sid, 'Message not sent', err);
      return false;
    }
  }

  // ---- search hits, recovery, stopping a turn -----------------------------------------

  /** Opens a search hit's session and scrolls to (and highlights) its message. */
  async openHit(hit: SearchHit): Promise<void> {
    this.focusTarget = hit.position >= 0 ? { sessionId: hit.session_id, position: hit.position, key: ++this.focusSeq } : null;
    await this.openSession(hit.session_id);
  }

  /** The database was recovered: the open chat's rows are read again, or it closes when it is gone. */
  async reopenActive(): Promise<void> {
    if (this.activeId) {
      const id = this.activeId;
      if (this.list.sessions.some((s) => s.id === id) || this.list.archived.some((s) => s.id === id)) {
        this.messages = [];
        await this.openSession(id);
      } else {
        this.activeId = null;
        this.messages = [];
      }
    }
  }

  async cancel(): Promise<void> {
    const streamId = this.live?.streamId || this.activeSession?.active_stream_id;
    if (!streamId) return;
    try {
      await this.api.cancel(streamId);
    } catch (err) {
      if (this.activeId) this.setBanner(this.activeId, 'Could not stop the turn', err);
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
        this.showLive(s);
        if (s.ended) void this.finish(follower, s);
      },
      onError: (err) => console.warn('stream catch-up failed', errorMessage(err)),
    });
    this.follower = follower;
    this.setLiveNow(follower.current);
    this.cards.idlePending = null;
    this.list.markBusy(sessionId, streamId);
  }

  /** After stream_end: keep the banner and footer figures, re-read the saved rows. */
  private async finish(follower: StreamFollower, s: StreamState): Promise<void> {
    const sid = s.sessionId;
    // The turn's error goes to the banner (with its action, e.g. Summarise and
    // continue); its saved row then shows only its marker (errorAbove): shown once.
    if (s.error) this.notices.streamError(sid, s.error, s.streamId);
    const done: DoneData | null = s.done;
    const run: LastRun = { usage: s.usage, tps: done?.tps ?? s.tps, duration_seconds: done?.duration_seconds ?? null };
    if (done?.tool_limit_reached) run.tool_limit_reached = true;
    this.lastRuns = { ...this.lastRuns, [sid]: run };
    void this.chat.refreshFigures(sid);
    // Only this stream is over: a follow-up turn may hold the session already.
    if (this.list.sessions.find((x) => x.id === sid)?.active_stream_id === s.streamId) this.list.patchSession(sid, { active_stream_id: '' });
    try {
      // Only the rows from this turn on are read again (the loaded ones before it stay
      // as they are); nothing when the rows shown end before the newest ones.
      const loaded = this.activeId === sid ? this.messages : [];
      const last = loaded.at(-1);
      const from = Math.min(s.userMessage?.position ?? Infinity, last ? last.position + 1 : 0);
      const view = this.activeId === sid && this.transcriptAfter ? null : await this.api.getTranscriptFrom(sid, Number.isFinite(from) ? from : 0, MAX_PAGE);
      // Another session is open now; it read its own rows. (Another stream of this
      // session, e.g. the follow-up of queued messages, still needs these rows.)
      if (this.activeId !== sid || !view) return;
      // The host could not save this turn's rows: keep what streamed on screen.
      if (lostAnswer(s, view.messages)) {
        this.unsaved = { ...this.unsaved, [sid]: [...(this.unsaved[sid] ?? []).filter((x) => x.streamId !== s.streamId), s] };
      }
      this.messages = spliceFrom(this.messages, view.messages);
      this.transcriptAfter = view.after;
      this.keepTodos(sid, this.messages);
      this.list.upsertSession(view.session);
    } catch (err) {
      this.setBanner(sid, 'Could not reload the conversation', err);
    } finally {
      if (this.follower === follower) {
        follower.stop();
        this.follower = null;
        this.setLiveNow(null);
        this.cards.clearNotices();
      }
      // The saved transcript now records what was provided.
      this.cards.dropNotes(sid);
    }
    void this.list.refreshSessions();
  }

  private dropFollower(): void {
    this.follower?.stop();
    this.follower = null;
    this.setLiveNow(null);
    this.cards.idlePending = null;
    this.cards.clearNotices();
  }

  /** Keeps the todo list a saved transcript shows, unless a live stream has a newer one. */
  private keepTodos(sessionId: string, messages: MessageView[]): void {
    const todos = todosFromMessages(messages);
    if (todos && !(this.follower?.sessionId === sessionId && this.live?.todos)) {
      this.todoLists = { ...this.todoLists, [sessionId]: todos };
    }
  }

}

/** Frames that only grow the live answer's text or its figures (showLive may delay them). */
const STREAMING_EVENTS = new Set(['token', 'reasoning', 'metering', 'usage']);
/** The longest a streaming frame waits to be shown (ms). */
export const LIVE_MS = 150;

/**
 * True when a finished stream showed an answer the saved transcript does not have: the
 * host's save_failed error, or no saved row of the stream besides the user's.
 */
export function lostAnswer(s: StreamState, saved: readonly MessageView[]): boolean {
  const streamed = s.text.trim() !== '' || s.tools.length > 0 || s.items.some((i) => i.kind === 'steer');
  if (!streamed) return false;
  if (s.error?.type === 'save_failed') return true;
  return !saved.some((m) => m.stream_id === s.streamId && m.role !== 'user');
}
