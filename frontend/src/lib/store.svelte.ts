// Window state: the open session and its rows, and the rooms it hosts. Each other area
// is a room of its own (store.stream, store.composer, store.list, store.cards,
// store.steering, store.config, store.notices, ...; issue 25), handed the Api and this
// store as its host; the store opens sessions and routes the host's events and frames
// to the rooms. Components read the fields and call the methods; all I/O goes through
// the Api handed in (src/lib/api.ts in the app, a fake in tests).

import type { Api } from './api';
import { errorMessage, errorText, takeBootSessions } from './api';
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
import { LiveStream } from './stream.svelte';
import { Composer } from './send.svelte';
export { FLASH_MS } from './notices.svelte';
export { sortSessions } from './sessions.svelte';
export type { SidePanel, TaskResultView } from './background.svelte';
import type { TranscriptPage, Frame, MessageView, SearchHit, SessionInfo } from './protocol';
import { afterNextPaint, markPainted } from './perf';
import { AROUND, FIRST_PAGE, PAGE, SESSION_PAGE, replaceWith } from './transcript';
import type { StreamState } from './reducer';

export { SEARCH_DEBOUNCE_MS } from './search.svelte';
export { DRAFT_DEBOUNCE_MS } from './drafts.svelte';
/** A message the chat should scroll to and highlight (a search hit). */
export interface FocusTarget {
  sessionId: string;
  position: number;
  /** Changes on every request, so the same hit clicked twice scrolls again. */
  key: number;
}

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

  // ---- search hits -----------------------------------------------------------------
  /** The message to scroll to and highlight once its session is open. */
  focusTarget = $state<FocusTarget | null>(null);

  private focusSeq = 0;
  private unsubscribers: Array<() => void> = [];
  private readonly api: Api;
  /** The open chat's live stream and what a turn leaves when it ends (lib/stream.svelte.ts). */
  readonly stream: LiveStream;
  /** Sending from the composer and stopping a turn (lib/send.svelte.ts). */
  readonly composer: Composer;
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
    this.stream = new LiveStream(api, this);
    this.composer = new Composer(api, this);
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

  // ---- the live stream, for the rooms' hosts (lib/stream.svelte.ts) -----------------

  /** The open session's live stream, or null when it is idle. */
  get live(): StreamState | null {
    return this.stream.live;
  }

  follows(sessionId: string): boolean {
    return this.stream.follows(sessionId);
  }

  patchLive(fn: (s: StreamState) => StreamState): void {
    this.stream.patch(fn);
  }

  followsStream(streamId: string): boolean {
    return this.stream.followsStream(streamId);
  }

  followTurn(sessionId: string, streamId: string, userMessage: MessageView | null): void {
    this.stream.followTurn(sessionId, streamId, userMessage);
  }

  // ---- the session list's host (SessionListHost) -----------------------------------

  followedStream(sessionId: string): string | null {
    return this.stream.followedStream(sessionId);
  }

  async forgetSession(id: string): Promise<void> {
    this.drafts.forget(id);
    if (this.activeId === id) {
      this.stream.drop();
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
    if (!this.stream.followsStream(started.stream_id)) this.stream.followTurn(sessionId, started.stream_id, started.user_message);
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

  /** True while the open session has a turn running. */
  get busy(): boolean {
    if (this.live && !this.live.ended) return true;
    return !!this.activeSession?.active_stream_id;
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
    this.stream.stop();
    this.background.stop();
    this.search.stop();
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
    this.stream.push(f);
  }

  /** The open chat's runtime ("builtin" when none is open). */
  activeRuntime(): string {
    return this.activeSession?.runtime || 'builtin';
  }

  /** Gives the composer the focus (a steer came back to be edited). */
  focusComposer(): void {
    this.composer.focus();
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
      this.stream.drop();
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
      this.stream.keepTodos(id, view.messages);
      this.list.upsertSession(view.session);
      const sid = view.session.active_stream_id;
      if (sid && !this.stream.followsStream(sid)) this.stream.followTurn(id, sid);
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
      this.stream.drop();
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

  // ---- search hits, recovery ------------------------------------------------------------

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
}
