// Following the open chat's live stream: the turn's frames fed to the reducer (through a
// StreamFollower, which catches up from the host's journal), the live state the chat
// shows (at most every LIVE_MS while only the text grows), and what a turn leaves when
// it ends: the footer figures, the todo list, the saved rows read again, and the answer
// kept on screen when the host could not save it. One area of the window's state (issue
// 25); the main store hosts it as `store.stream` and hands it the open chat's frames.

import type { Api } from './api';
import { errorMessage } from './api';
import { todosFromMessages } from './cards';
import { StreamFollower } from './follower';
import type { ApprovalCards } from './approvals.svelte';
import type { ChatFeatures } from './chatfeatures.svelte';
import type { Notices } from './notices.svelte';
import type { SessionList } from './sessions.svelte';
import type { DoneData, Frame, MessageView, TodoItem, Usage } from './protocol';
import { MAX_PAGE, mergeRead } from './transcript';
import type { StreamState } from './reducer';

/** Footer figures of a session's last finished run. */
export interface LastRun {
  usage: Usage | null;
  tps: number | null;
  duration_seconds: number | null;
  /** The turn stopped at the agent's tool-call limit. */
  tool_limit_reached?: boolean;
}

/** What LiveStream needs of the main store: the open chat and its loaded rows. */
export interface StreamHost {
  readonly activeId: string | null;
  /** The open chat's loaded rows (a turn's end splices its saved rows in). */
  messages: MessageView[];
  /** The open session has saved rows after the loaded ones. */
  transcriptAfter: boolean;
  readonly list: Pick<SessionList, 'sessions' | 'markBusy' | 'patchSession' | 'upsertSession' | 'refreshSessions'>;
  readonly cards: Pick<ApprovalCards, 'idlePending' | 'clearNotices' | 'dropNotes'>;
  readonly chat: Pick<ChatFeatures, 'refreshFigures'>;
  readonly notices: Pick<Notices, 'streamError'>;
  setBanner(sessionId: string, label: string, err: unknown): void;
}

export class LiveStream {
  /** The open session's live stream, or null when it is idle (replaced whole, never changed in place). */
  live = $state.raw<StreamState | null>(null);
  /**
   * `live` as the chat shows it: a change that only grew the text or the figures is
   * shown at most every LIVE_MS (show); any other change at once.
   */
  liveShown = $state.raw<StreamState | null>(null);
  /** Footer figures of each session's last finished run. */
  lastRuns = $state<Record<string, LastRun>>({});
  /** Per session: the todo list last seen (live, or read from the saved transcript). */
  todoLists = $state<Record<string, TodoItem[]>>({});
  /**
   * Per session: streams that ended but whose answer the host could not save ("Could
   * not save the answer"); the window keeps showing what streamed.
   */
  unsaved = $state<Record<string, StreamState[]>>({});

  private follower: StreamFollower | null = null;
  /** The frame being applied only grows text or figures (its state may wait a little). */
  private streamingFrame = false;
  /** A live state waiting to be shown, and its timer (show). */
  private liveLater: StreamState | null = null;
  private liveTimer: ReturnType<typeof setTimeout> | null = null;
  /** When a state a streaming frame grew was last shown (other shows leave it as it is). */
  private liveShownAt = 0;

  constructor(
    private readonly api: Pick<Api, 'streamSince' | 'getTranscriptFrom'>,
    private readonly host: StreamHost,
  ) {}

  // ---- what the chat shows -----------------------------------------------------------

  /** Streams of the open session that ended unsaved (their text stays on screen). */
  get unsavedStreams(): StreamState[] {
    const id = this.host.activeId;
    return id ? (this.unsaved[id] ?? []) : [];
  }

  /** Footer figures of the open session's last finished run. */
  get lastRun(): LastRun | null {
    const id = this.host.activeId;
    return id ? (this.lastRuns[id] ?? null) : null;
  }

  /** The open session's todo list: the live stream's, else the one last seen. */
  get todos(): TodoItem[] | null {
    if (this.live?.todos) return this.live.todos;
    const id = this.host.activeId;
    return id ? (this.todoLists[id] ?? null) : null;
  }

  // ---- which stream is followed ------------------------------------------------------

  /** Whether a stream of the session is followed. */
  follows(sessionId: string): boolean {
    return !!this.follower && this.follower.sessionId === sessionId;
  }

  /** Whether this stream is followed. */
  followsStream(streamId: string): boolean {
    return !!this.follower && this.follower.streamId === streamId;
  }

  /** The stream of the session that is followed and still running, or null. */
  followedStream(sessionId: string): string | null {
    return this.follower && this.follower.sessionId === sessionId && !this.live?.ended ? this.follower.streamId : null;
  }

  /** Changes the followed stream's state (a card answered, a queued message added or dropped). */
  patch(fn: (s: StreamState) => StreamState): void {
    this.follower?.patch(fn);
  }

  /**
   * Follows a turn of the open session that started elsewhere or mid-way (opened,
   * steered, retried), and catches up on its frames from the journal.
   */
  followTurn(sessionId: string, streamId: string, userMessage: MessageView | null = null): void {
    this.retireFor(sessionId, streamId);
    this.follow(sessionId, streamId, userMessage);
    void this.follower!.replay();
  }

  /**
   * Follows a turn this window just started (its user row is shown at once); nothing
   * when the stream is already followed (its first frames came before the answer).
   */
  followStarted(sessionId: string, streamId: string, userMessage: MessageView | null): void {
    if (this.followsStream(streamId)) return;
    this.retireFor(sessionId, streamId);
    this.follow(sessionId, streamId, userMessage);
    this.setLiveNow(this.follower!.current);
  }

  /** Hands a frame of the open session to its stream (a frame of another stream follows that one). */
  push(f: Frame): void {
    // A turn that a newer one of its chat replaced: its late frames (its cancel and
    // stream_end can come after the next turn's start, which the host admits once the
    // run has left) never take the chat back from the newer turn; its end only reads
    // its saved rows.
    if (this.retired.has(f.stream_id)) {
      if (f.event === 'stream_end') void this.readRetired(f.session_id, f.stream_id);
      return;
    }
    if (!this.followsStream(f.stream_id)) this.follow(f.session_id, f.stream_id);
    this.streamingFrame = STREAMING_EVENTS.has(f.event);
    try {
      this.follower!.push(f);
    } finally {
      this.streamingFrame = false;
    }
  }

  /** Stops following (another chat opens, the open one closes). */
  drop(): void {
    this.follower?.stop();
    this.follower = null;
    this.setLiveNow(null);
    this.host.cards.idlePending = null;
    this.host.cards.clearNotices();
  }

  /** Stops following and the timer of a live state waiting to be shown (the window closes). */
  stop(): void {
    this.drop();
    if (this.liveTimer) clearTimeout(this.liveTimer);
  }

  /** Keeps the todo list a saved transcript shows, unless a live stream has a newer one. */
  keepTodos(sessionId: string, messages: MessageView[]): void {
    const todos = todosFromMessages(messages);
    if (todos && !(this.follower?.sessionId === sessionId && this.live?.todos)) {
      this.todoLists = { ...this.todoLists, [sessionId]: todos };
    }
  }

  // ---- internals ---------------------------------------------------------------------

  /**
   * Streams a newer turn of their chat replaced while this window followed them, with
   * the position of their user row (null when unknown); the oldest go past RETIRED_MAX.
   */
  private retired = new Map<string, number | null>();

  /**
   * Before following `streamId`, a turn the host started in the same chat (it admits
   * one turn per chat): the stream followed so far in that chat is over there, even
   * when its last frames have not come yet.
   */
  private retireFor(sessionId: string, streamId: string): void {
    const f = this.follower;
    if (!f || f.sessionId !== sessionId || f.streamId === streamId || this.live?.ended) return;
    this.retired.set(f.streamId, f.current.userMessage?.position ?? null);
    if (this.retired.size > RETIRED_MAX) this.retired.delete(this.retired.keys().next().value!);
  }

  /** A replaced stream ended: its saved rows (its answer so far) are read into the open chat. */
  private async readRetired(sessionId: string, streamId: string): Promise<void> {
    const host = this.host;
    const at = this.retired.get(streamId) ?? null;
    this.retired.delete(streamId);
    if (host.activeId !== sessionId || host.transcriptAfter) return;
    const last = host.messages.at(-1);
    const from = Math.min(at ?? Infinity, last ? last.position + 1 : 0);
    try {
      const view = await this.api.getTranscriptFrom(sessionId, Number.isFinite(from) ? from : 0, MAX_PAGE);
      if (host.activeId !== sessionId) return;
      // The newer turn's rows may have been read since this read was asked for (its
      // end reads them too, and answers are not ordered): rows after this page stay.
      this.merge(view);
    } catch (err) {
      host.setBanner(sessionId, 'Could not reload the conversation', err);
    }
  }

  /**
   * A read of the open chat's rows from a position on, merged into the rows shown
   * (lib/transcript mergeRead): rows shown after the page stay, and the chat is marked
   * as having no newer rows to page in only when none are shown after it.
   */
  private merge(view: { messages: MessageView[]; after: boolean }): void {
    const host = this.host;
    const end = view.messages.at(-1)?.position ?? -Infinity;
    const newer = host.messages.some((m) => m.position > end);
    host.messages = mergeRead(host.messages, view.messages);
    if (!newer) host.transcriptAfter = view.after;
  }

  private follow(sessionId: string, streamId: string, userMessage: MessageView | null = null): void {
    this.drop();
    const follower = new StreamFollower({
      sessionId,
      streamId,
      userMessage,
      streamSince: (id, seq) => this.api.streamSince(id, seq),
      onState: (s) => {
        if (this.follower !== follower) return;
        if (s.todos && s.todos !== this.todoLists[sessionId]) this.todoLists = { ...this.todoLists, [sessionId]: s.todos };
        this.show(s);
        if (s.ended) void this.finish(follower, s);
      },
      onError: (err) => console.warn('stream catch-up failed', errorMessage(err)),
    });
    this.follower = follower;
    this.setLiveNow(follower.current);
    this.host.cards.idlePending = null;
    this.host.list.markBusy(sessionId, streamId);
  }

  /**
   * Sets the live state. The chat's copy (liveShown) of one that only grew the text or
   * the figures follows at most every LIVE_MS (a streaming answer is rendered that often
   * anyway, and each change re-renders the chat's live rows); any other change at once,
   * with the text so far. Only a shown state that a streaming frame grew starts the
   * interval; other shows leave it as it is. So the first token after the user's
   * message (or after a tool that ran past LIVE_MS) shows at once, and frames that are
   * not tokens do not make the token's own renders more frequent than every LIVE_MS
   * (each of theirs shows the text so far).
   */
  private show(s: StreamState): void {
    this.live = s;
    const now = Date.now();
    if (this.streamingFrame && this.liveShown && !s.ended && now - this.liveShownAt < LIVE_MS) {
      this.liveLater = s;
      this.liveTimer ??= setTimeout(() => {
        this.liveTimer = null;
        const later = this.liveLater;
        this.liveLater = null;
        if (later && this.live === later) this.setLiveNow(later, true);
      }, LIVE_MS - (now - this.liveShownAt));
      return;
    }
    this.setLiveNow(s);
  }

  /** Shows s now; streamed: a streaming frame grew it (the interval starts again). */
  private setLiveNow(s: StreamState | null, streamed = this.streamingFrame): void {
    if (this.liveTimer) clearTimeout(this.liveTimer);
    this.liveTimer = null;
    this.liveLater = null;
    if (streamed) this.liveShownAt = Date.now();
    this.live = s;
    this.liveShown = s;
  }

  /** After stream_end: keep the banner and footer figures, re-read the saved rows. */
  private async finish(follower: StreamFollower, s: StreamState): Promise<void> {
    const host = this.host;
    const sid = s.sessionId;
    // The turn's error goes to the banner (with its action, e.g. Summarise and
    // continue); its saved row then shows only its marker (errorAbove): shown once.
    if (s.error) host.notices.streamError(sid, s.error, s.streamId);
    const done: DoneData | null = s.done;
    const run: LastRun = { usage: s.usage, tps: done?.tps ?? s.tps, duration_seconds: done?.duration_seconds ?? null };
    if (done?.tool_limit_reached) run.tool_limit_reached = true;
    this.lastRuns = { ...this.lastRuns, [sid]: run };
    // Only this stream is over: a follow-up turn may hold the session already.
    if (host.list.sessions.find((x) => x.id === sid)?.active_stream_id === s.streamId) host.list.patchSession(sid, { active_stream_id: '' });
    try {
      // Only the rows from this turn on are read again (the loaded ones before it stay
      // as they are); nothing when the rows shown end before the newest ones.
      const loaded = host.activeId === sid ? host.messages : [];
      const last = loaded.at(-1);
      const from = Math.min(s.userMessage?.position ?? Infinity, last ? last.position + 1 : 0);
      const view = host.activeId === sid && host.transcriptAfter ? null : await this.api.getTranscriptFrom(sid, Number.isFinite(from) ? from : 0, MAX_PAGE);
      // Another session is open now; it read its own rows. (Another stream of this
      // session, e.g. the follow-up of queued messages, still needs these rows.)
      if (host.activeId !== sid || !view) return;
      // The host could not save this turn's rows: keep what streamed on screen.
      if (lostAnswer(s, view.messages)) {
        this.unsaved = { ...this.unsaved, [sid]: [...(this.unsaved[sid] ?? []).filter((x) => x.streamId !== s.streamId), s] };
      }
      // The next turn's rows may have been read since (this read can be slow): they stay.
      this.merge(view);
      this.keepTodos(sid, host.messages);
      host.list.upsertSession(view.session);
    } catch (err) {
      host.setBanner(sid, 'Could not reload the conversation', err);
    } finally {
      if (this.follower === follower) {
        follower.stop();
        this.follower = null;
        this.setLiveNow(null);
        host.cards.clearNotices();
      }
      // The saved transcript now records what was provided.
      host.cards.dropNotes(sid);
      // The chat's figures once its rows are read again: one call brings the new
      // turn's figures and the chat's cost (asked for before the rows, the new turn's
      // were asked for again when its rows came: two calls a turn, each answer a script
      // the web view evaluates and keeps in its code cache; issue 24).
      void host.chat.refreshFigures(sid);
    }
    // No re-listing of the sidebar here: the host publishes sessions_changed after every
    // stream_end (backend/turn/settle.go), and the sidebar re-lists on it; this turn's
    // row was updated above from the rows read again. (A third listing a turn, each
    // answer a script of the whole first page the web view keeps in its code cache.)
  }
}

/** How many replaced streams LiveStream remembers (their late frames are ignored). */
const RETIRED_MAX = 32;

/** Frames that only grow the live answer's text or its figures (show may delay them). */
const STREAMING_EVENTS = new Set(['token', 'reasoning', 'metering', 'usage']);
/** How long a turn may send nothing while its answer is awaited before the window says so (ms; LiveBubble). */
export const SILENT_MS = 30_000;
/** The longest a streaming frame waits to be shown (ms). */
export const LIVE_MS = 200;

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
