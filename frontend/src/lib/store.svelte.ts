// Window state: the composition root of the window's rooms (issue 25). Each area is a
// room of its own, a class with its own state reached as store.<room> (store.open, the
// open chat; store.stream, its live stream; store.composer, sending; store.list,
// store.cards, store.steering, store.config, store.notices, ...), handed the Api and this
// store as its host. The store starts them, routes the host's events and frames to
// them, and hands on what one room's host needs of another (one-line hand-offs).
// Components read the fields and call the methods; all I/O goes through the Api handed
// in (src/lib/api.ts in the app, a fake in tests).

import type { Api } from './api';
import { takeBootSessions } from './api';
import { ChatFeatures } from './chatfeatures.svelte';
import { BackgroundWork } from './background.svelte';
import { Drafts } from './drafts.svelte';
import { SessionSearch } from './search.svelte';
import { Supervision } from './supervision.svelte';
import { ApprovalCards } from './approvals.svelte';
import { SessionList } from './sessions.svelte';
import { Steering } from './steering.svelte';
import { AppSettings } from './settings.svelte';
import { Paging } from './paging.svelte';
import { DatabaseRecovery } from './database.svelte';
import { Notices } from './notices.svelte';
import { WindowWatch } from './windowwatch';
import { LiveStream } from './stream.svelte';
import { Composer } from './send.svelte';
import { OpenChat, type FocusTarget } from './openchat.svelte';
export { FLASH_MS } from './notices.svelte';
export { sortSessions } from './sessions.svelte';
export type { SidePanel, TaskResultView } from './background.svelte';
import type { Frame, MessageView, SearchHit, SessionInfo } from './protocol';
import { afterNextPaint, markAt, markPainted } from './perf';
import { dropFirstScreen, firstScreenPaint } from './firstscreen';
import { SESSION_PAGE } from './transcript';
import type { StreamState } from './reducer';

export { SEARCH_DEBOUNCE_MS } from './search.svelte';
export { DRAFT_DEBOUNCE_MS } from './drafts.svelte';

export class AppStore {
  private unsubscribers: Array<() => void> = [];
  private readonly api: Api;
  /** The open chat: which session, its loaded rows, opening one (lib/openchat.svelte.ts). */
  readonly open: OpenChat;
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
    this.open = new OpenChat(api, this);
    this.composer = new Composer(api, this);
    // The first page of the sidebar came with the page when the host could read it
    // (app/boot.go): taken before the first render, so the window's first frame draws
    // the list instead of an empty sidebar and then the list (issue 16).
    const boot = takeBootSessions();
    if (boot !== null && boot.limit === SESSION_PAGE) {
      this.list.takeFirstPage(boot.sessions);
      this.fromBoot = true;
      // The first chat's newest rows came too: opening it at start needs no round trip
      // (issue 24). It is opened now, before the app's first render, so the sidebar and
      // the chat's rows are made in one pass (opened after the mount, the rows came in a
      // second pass of the whole window's effects before the first frame). What the
      // opening asks the host for goes after the first paint (lib/api holdCallsUntil).
      this.open.setBootTranscript(boot.transcript);
      const first = boot.sessions[0];
      if (first && boot.transcript?.session.id === first.id) this.bootOpen = this.openSession(first.id);
    }
  }

  /** The opening of the first chat with the rows that came with the page, when they did. */
  private bootOpen: Promise<void> | null = null;

  /** Whether the sidebar's first page came with the page (read again after the paint). */
  private fromBoot = false;

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

  forgetSession(id: string): Promise<void> {
    return this.open.forgetSession(id);
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

  setBanner(sessionId: string, label: string, err: unknown, keep = false): void {
    this.notices.setBanner(sessionId, label, err, keep);
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
  reload(sessionId: string): Promise<void> {
    return this.open.reload(sessionId);
  }

  /** A turn started by a message action (retry, edit, summarise): rows re-read, stream followed. */
  adoptTurn(sessionId: string, started: { stream_id: string; user_message: MessageView }): Promise<void> {
    return this.open.adoptTurn(sessionId, started);
  }

  // ---- the composer's draft (lib/drafts.svelte.ts) ------------------------------------

  /** The composer's text for the open session. */
  get draft(): string {
    return this.drafts.of(this.activeId);
  }

  set draft(text: string) {
    this.drafts.set(text, this.activeId);
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
      this.api.onAgentNotice((n) => this.notices.flashInfo(n.message)),
    );
    // The sidebar waits for its list only. The first page came with the page when the
    // host could read it (app/boot.go); it was read before the events above were
    // listened to, so it is read again after the paint.
    const fromBoot = this.fromBoot;
    if (!fromBoot) {
      await this.list.loadFirstPage();
    }
    // Painted already when the page came with its first-screen picture (lib/firstscreen).
    const shotPaint = firstScreenPaint();
    if (shotPaint !== null) markAt('talaria:sidebar', shotPaint);
    else markPainted('talaria:sidebar');
    // A data folder without chats opens on the empty chat, drawn in this same frame as
    // the sidebar (nothing to ask for): its mark is this frame's, not the next one's.
    // With a picture of it (a first start's, taken when the app was built), the chat
    // was painted with the picture: marked where the picture is dropped, below.
    if (this.list.sessions.length === 0 && shotPaint === null) markPainted('talaria:chat');
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
    if (this.bootOpen) await this.bootOpen;
    else if (this.list.sessions.length > 0) await this.openSession(this.list.sessions[0].id);
    else await afterNextPaint(1000);
    // The first chat on screen: the last chat with its newest rows drawn, or the empty
    // chat of a fresh data folder (the window benchmark's start-up figure, issue 24).
    // The page's picture of this screen (lib/firstscreen), when it came with one, goes
    // now: the live chat is drawn in this task, so the next frame shows it in its place.
    // The first chat was on screen since the picture's paint: that is its mark, and the
    // live chat's paint is marked beside it.
    const shot = dropFirstScreen();
    if (this.list.sessions.length === 0 || (this.activeId === this.list.sessions[0]?.id && !this.loadingSession)) {
      if (shot !== null) {
        markAt('talaria:chat', shot);
        markPainted('talaria:chat-live');
      } else markPainted('talaria:chat');
    }
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

  // ---- the open chat, for the components and the rooms' hosts (lib/openchat.svelte.ts) --

  get activeId(): string | null {
    return this.open.activeId;
  }

  /** The open chat's loaded rows. */
  get messages(): MessageView[] {
    return this.open.messages;
  }

  set messages(rows: MessageView[]) {
    this.open.messages = rows;
  }

  get loadingSession(): boolean {
    return this.open.loadingSession;
  }

  /** The open session has saved rows before / after the loaded ones. */
  get transcriptBefore(): boolean {
    return this.open.transcriptBefore;
  }

  set transcriptBefore(more: boolean) {
    this.open.transcriptBefore = more;
  }

  get transcriptAfter(): boolean {
    return this.open.transcriptAfter;
  }

  set transcriptAfter(more: boolean) {
    this.open.transcriptAfter = more;
  }

  /** The message to scroll to and highlight once its session is open. */
  get focusTarget(): FocusTarget | null {
    return this.open.focusTarget;
  }

  get activeSession(): SessionInfo | null {
    return this.open.activeSession;
  }

  /** True while the open session has a turn running. */
  get busy(): boolean {
    return this.open.busy;
  }

  openSession(id: string): Promise<void> {
    return this.open.openSession(id);
  }

  newSession(): Promise<SessionInfo | null> {
    return this.open.newSession();
  }

  openHit(hit: SearchHit): Promise<void> {
    return this.open.openHit(hit);
  }

  reopenActive(): Promise<void> {
    return this.open.reopenActive();
  }
}
