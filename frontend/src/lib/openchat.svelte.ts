// The open chat: which session is open, its loaded rows (a run of consecutive rows,
// lib/transcript.ts), opening a session (its last screen of rows, or the rows around a
// search hit), a new chat, leaving a chat (an empty one is discarded), and reading the
// rows again after a retry, an edit or a recovery (and following the turn a retry or an
// edit started). One area of the window's state (issue 25); the main store hosts it as
// `store.open` and hands its fields on to the other rooms' hosts (store.activeId,
// store.messages, ...).

import type { Api } from './api';
import { errorMessage, errorText } from './api';
import type { ApprovalCards } from './approvals.svelte';
import type { BackgroundWork } from './background.svelte';
import type { ChatFeatures } from './chatfeatures.svelte';
import type { Drafts } from './drafts.svelte';
import type { SessionList } from './sessions.svelte';
import type { LiveStream } from './stream.svelte';
import type { MessageView, SearchHit, SessionInfo, TranscriptPage } from './protocol';
import { AROUND, FIRST_PAGE, PAGE, replaceWith } from './transcript';

/** A message the chat should scroll to and highlight (a search hit). */
export interface FocusTarget {
  sessionId: string;
  position: number;
  /** Changes on every request, so the same hit clicked twice scrolls again. */
  key: number;
}

/** What OpenChat needs of the main store: the rooms a chat's opening reads or tells. */
export interface OpenChatHost {
  readonly list: Pick<SessionList, 'sessions' | 'archived' | 'upsertSession' | 'markBusy' | 'dropRow'>;
  readonly stream: Pick<LiveStream, 'live' | 'drop' | 'followsStream' | 'followTurn' | 'keepTodos'>;
  readonly drafts: Pick<Drafts, 'load' | 'flush' | 'of' | 'markNew' | 'forget'>;
  readonly chat: Pick<ChatFeatures, 'open' | 'stagedIds'>;
  readonly background: Pick<BackgroundWork, 'loadTasks'>;
  readonly cards: Pick<ApprovalCards, 'refreshPending'>;
  /** The error with no chat (a new chat could not be made). */
  globalError: string | null;
  setBanner(sessionId: string, label: string, err: unknown): void;
  clearBanner(sessionId: string): void;
}

export class OpenChat {
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
  /** The message to scroll to and highlight once its session is open. */
  focusTarget = $state<FocusTarget | null>(null);

  private focusSeq = 0;
  /** The first listed chat's newest rows, when they came with the page (openSession takes them once). */
  private bootTranscript: TranscriptPage | null = null;

  constructor(
    private readonly api: Pick<Api, 'getTranscript' | 'getTranscriptFrom' | 'newSession' | 'discardIfEmpty'>,
    private readonly host: OpenChatHost,
  ) {}

  /** Keeps the first chat's newest rows that came with the page (app/boot.go), for its first opening. */
  setBootTranscript(page: TranscriptPage | null): void {
    this.bootTranscript = page;
  }

  get activeSession(): SessionInfo | null {
    const id = this.activeId;
    return this.host.list.sessions.find((s) => s.id === id) ?? this.host.list.archived.find((s) => s.id === id) ?? null;
  }

  /** True while the open session has a turn running. */
  get busy(): boolean {
    const live = this.host.stream.live;
    if (live && !live.ended) return true;
    return !!this.activeSession?.active_stream_id;
  }

  /**
   * Opens session `id`: its last screen of rows (or the rows around a search hit).
   */
  async openSession(id: string): Promise<void> {
    const host = this.host;
    // The open chat clicked again: its rows stay as they are (older pages the user
    // scrolled back to included); only a search hit in it moves the view.
    if (this.activeId === id && !this.loadingSession && this.messages.length > 0 && this.focusTarget?.sessionId !== id) return;
    if (this.activeId !== id) {
      host.stream.drop();
      if (this.activeId) this.leave(this.activeId);
      if (this.focusTarget && this.focusTarget.sessionId !== id) this.focusTarget = null;
      // Never show the previous chat's rows while this one's are on their way.
      this.messages = [];
      this.transcriptBefore = this.transcriptAfter = false;
    }
    this.activeId = id;
    this.loadingSession = true;
    void host.drafts.load(id);
    void host.background.loadTasks(id);
    try {
      // The last screen of rows, or the rows around the search hit to open at.
      const focus = this.focusTarget?.sessionId === id ? this.focusTarget.position : null;
      const boot = this.bootTranscript;
      this.bootTranscript = null;
      // The rows that came with the page are taken at once, with no await: opened while
      // the app is made (AppStore), they are in its first render (issue 24).
      const view = focus === null && boot?.session.id === id
        ? boot
        : await (focus !== null
          ? this.api.getTranscriptFrom(id, Math.max(0, focus - AROUND), PAGE)
          : this.api.getTranscript(id, -1, FIRST_PAGE));
      if (this.activeId !== id) return;
      this.messages = replaceWith(this.messages, view.messages);
      this.transcriptBefore = view.before;
      this.transcriptAfter = view.after;
      host.stream.keepTodos(id, view.messages);
      host.list.upsertSession(view.session);
      const sid = view.session.active_stream_id;
      if (sid && !host.stream.followsStream(sid)) host.stream.followTurn(id, sid);
      void host.cards.refreshPending(id);
    } catch (err) {
      host.setBanner(id, 'Could not open the conversation', err);
    } finally {
      if (this.activeId === id) this.loadingSession = false;
      // The chat's figures and settings after its rows: reading them costs the host a
      // pass over the whole transcript, which should not delay the first screen.
      if (this.activeId === id) void host.chat.open(id);
    }
  }

  /**
   * Opens a new chat (saved empty, so its runtime and settings can be chosen before the
   * first message). While the open chat is itself still empty, it is the new chat: no
   * second empty one is made.
   */
  async newSession(): Promise<SessionInfo | null> {
    const host = this.host;
    const open = this.activeSession;
    if (open && this.isEmptyChat(open.id)) return open;
    try {
      const s = await this.api.newSession();
      host.list.upsertSession(s);
      host.stream.drop();
      if (this.activeId) this.leave(this.activeId);
      this.activeId = s.id;
      this.messages = [];
      this.transcriptBefore = this.transcriptAfter = false;
      host.drafts.markNew(s.id);
      void host.chat.open(s.id);
      return s;
    } catch (err) {
      host.globalError = `Could not start a new chat: ${errorText(err)}`;
      return null;
    }
  }

  /** Opens a search hit's session and scrolls to (and highlights) its message. */
  async openHit(hit: SearchHit): Promise<void> {
    this.focusTarget = hit.position >= 0 ? { sessionId: hit.session_id, position: hit.position, key: ++this.focusSeq } : null;
    await this.openSession(hit.session_id);
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
      this.host.list.upsertSession(view.session);
    } catch (err) {
      this.host.setBanner(sessionId, 'Could not reload the conversation', err);
    }
  }

  /** A turn started by a message action (retry, edit, summarise): rows re-read, stream followed. */
  async adoptTurn(sessionId: string, started: { stream_id: string; user_message: MessageView }): Promise<void> {
    this.host.clearBanner(sessionId);
    this.host.list.markBusy(sessionId, started.stream_id);
    if (this.activeId !== sessionId) return;
    if (!this.host.stream.followsStream(started.stream_id)) this.host.stream.followTurn(sessionId, started.stream_id, started.user_message);
    await this.reload(sessionId);
  }

  /** The database was recovered: the open chat's rows are read again, or it closes when it is gone. */
  async reopenActive(): Promise<void> {
    if (this.activeId) {
      const id = this.activeId;
      if (this.host.list.sessions.some((s) => s.id === id) || this.host.list.archived.some((s) => s.id === id)) {
        this.messages = [];
        await this.openSession(id);
      } else {
        this.activeId = null;
        this.messages = [];
      }
    }
  }

  /** A session was deleted: its draft is forgotten, and when it was open the first listed chat opens. */
  async forgetSession(id: string): Promise<void> {
    this.host.drafts.forget(id);
    if (this.activeId === id) {
      this.host.stream.drop();
      this.host.clearBanner(id);
      this.activeId = null;
      this.messages = [];
      this.transcriptBefore = this.transcriptAfter = false;
      if (this.host.list.sessions.length > 0) await this.openSession(this.host.list.sessions[0].id);
    }
  }

  /**
   * Whether the open chat id has nothing of the user's yet: no row, turn, draft or file.
   * The rows on screen are not enough: a chat whose rows failed to load shows none,
   * though the host counts its messages (New chat once reused such a chat, and the
   * message typed next went into it while the window showed an empty chat).
   */
  private isEmptyChat(id: string): boolean {
    return id === this.activeId && !this.loadingSession && this.messages.length === 0 && !this.busy && !this.host.stream.live
      && (this.activeSession?.message_count ?? 0) === 0
      && !this.host.drafts.of(id).trim() && this.host.chat.stagedIds(id).length === 0;
  }

  /**
   * Leaves the open chat id for another: its draft is saved, then a chat left empty (a
   * New chat never written in) is discarded by the host, which checks again with the
   * draft, files and tasks in view, so empty chats do not pile up in the sidebar.
   */
  private leave(id: string): void {
    const empty = this.isEmptyChat(id);
    void this.host.drafts.flush(id).then(async () => {
      if (!empty) return;
      try {
        if (await this.api.discardIfEmpty(id)) {
          this.host.list.dropRow(id);
        }
      } catch (err) {
        console.warn('DiscardIfEmpty failed', errorMessage(err)); // the empty chat stays; nothing is lost
      }
    });
  }
}
