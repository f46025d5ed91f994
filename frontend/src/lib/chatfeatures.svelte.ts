// The window's state of the chat features (issue 12) beside the main store: the files
// staged in each chat's composer, each chat's figures (turn costs, the context meter)
// and settings, and the message actions that start a turn (retry, edit, "Summarise and
// continue"). A new module, so the main store keeps only its own areas.

import type { Api } from './api';
import { errorText } from './api';
import { fileBase64, precheck } from './attach';
import type { Attachment, AttachmentContent, ChatFigures, ChatSettings, QuickAskStatus, TurnFigures } from './chat';
import type { MessageView } from './protocol';

/** What ChatFeatures needs of the main store. */
export interface ChatHost {
  readonly activeId: string | null;
  readonly messages: MessageView[];
  readonly busy: boolean;
  activeRevision(): number;
  /** Makes a session for the composer when none is open (a file dropped on a new chat). */
  newSession(): Promise<{ id: string } | null>;
  /** A turn started here: re-read the rows and follow its stream. */
  adoptTurn(sessionId: string, started: { stream_id: string; user_message: MessageView }): Promise<void>;
  /** Re-reads the open chat's rows (a summary row was added). */
  reload(sessionId: string): Promise<void>;
  /** Shows a message under the chat. */
  notify(sessionId: string, label: string, message: string): void;
  flashInfo(text: string): void;
}

export class ChatFeatures {
  /** Files staged in each chat's composer, oldest first. */
  staged = $state<Record<string, Attachment[]>>({});
  /** Files being read and handed to the host. */
  attaching = $state(0);
  /** Why the last files could not be attached (shown by the composer). */
  attachError = $state<string | null>(null);
  /**
   * Each chat's figures, replaced whole on every read (never changed in place). Raw, not
   * deep state: a deep proxy of each turn's figures (with its handler and signals) was
   * made as the chat read them and kept for as long as the chat's figures, one more
   * every turn (issue 24).
   */
  figures = $state.raw<Record<string, ChatFigures>>({});
  settings = $state<Record<string, ChatSettings>>({});
  /** The chat being summarised ("Summarise and continue"). */
  compacting = $state<string | null>(null);
  /** The message being edited, by id. */
  editing = $state<string | null>(null);
  /** A retry or an edit on its way. */
  branching = $state(false);
  quickAsk = $state<QuickAskStatus | null>(null);

  private previews = new Map<string, Promise<AttachmentContent>>();
  private figureSeq = 0;
  /** The newest figures request per chat: only its answer sets the cost and meter. */
  private figureLatest = new Map<string, number>();
  /** The streams whose turn figures were asked for, per chat (needFigures asks once). */
  private figuresAsked = new Map<string, Set<string>>();
  /** turnOf's index of each figures object, by stream. */
  private turnIndex = new WeakMap<ChatFigures, Map<string, TurnFigures>>();

  constructor(
    private readonly api: Api,
    private readonly host: ChatHost,
  ) {}

  /** Reads what a chat has staged and its figures (when it is opened). */
  async open(sessionId: string | null): Promise<void> {
    this.attachError = null;
    this.editing = null;
    if (!sessionId) return;
    try {
      const staged = await this.api.stagedAttachments(sessionId);
      this.staged = { ...this.staged, [sessionId]: staged };
    } catch {
      // a chat deleted meanwhile: nothing staged
    }
    void this.refreshFigures(sessionId);
    void this.loadSettings(sessionId);
  }

  stagedOf(sessionId: string | null): Attachment[] {
    return sessionId ? (this.staged[sessionId] ?? []) : [];
  }

  /** The ids to send with the chat's next message (in order). */
  stagedIds(sessionId: string): string[] {
    return this.stagedOf(sessionId).map((a) => a.id);
  }

  /** The staged files went with a message. */
  sent(sessionId: string): void {
    this.staged = { ...this.staged, [sessionId]: [] };
  }

  /** Attaches files the user dropped or pasted to the open chat (made when none is open). */
  async attach(files: File[]): Promise<void> {
    if (files.length === 0) return;
    this.attachError = null;
    const sid = this.host.activeId ?? (await this.host.newSession())?.id;
    if (!sid) return;
    const problems: string[] = [];
    for (const f of files) {
      const why = precheck(f);
      if (why) {
        problems.push(why);
        continue;
      }
      this.attaching++;
      try {
        const a = await this.api.attachFile(sid, f.name, await fileBase64(f));
        this.staged = { ...this.staged, [sid]: [...(this.staged[sid] ?? []), a] };
      } catch (err) {
        problems.push(errorText(err));
      } finally {
        this.attaching--;
      }
    }
    if (problems.length > 0) this.attachError = problems.join(' ');
  }

  /** Opens the system's file dialog for the open chat. */
  async pick(): Promise<void> {
    this.attachError = null;
    const sid = this.host.activeId ?? (await this.host.newSession())?.id;
    if (!sid) return;
    this.attaching++;
    try {
      const picked = await this.api.pickAttachments(sid);
      this.staged = { ...this.staged, [sid]: [...(this.staged[sid] ?? []), ...picked] };
    } catch (err) {
      this.attachError = errorText(err);
      // Some files may have been staged before the error: show what the host holds.
      try {
        this.staged = { ...this.staged, [sid]: await this.api.stagedAttachments(sid) };
      } catch {
        // keep what the window had
      }
    } finally {
      this.attaching--;
    }
  }

  async remove(sessionId: string, id: string): Promise<void> {
    this.staged = { ...this.staged, [sessionId]: this.stagedOf(sessionId).filter((a) => a.id !== id) };
    try {
      await this.api.removeAttachment(sessionId, id);
    } catch (err) {
      this.attachError = errorText(err);
    }
  }

  /** An attachment's image or text start (cached per attachment). */
  preview(sessionId: string, id: string): Promise<AttachmentContent> {
    let p = this.previews.get(id);
    if (!p) {
      p = this.api.attachmentPreview(sessionId, id);
      p.catch(() => this.previews.delete(id));
      this.previews.set(id, p);
    }
    return p;
  }

  /**
   * Reads a chat's cost and context meter again, with the figures of the turns of the rows
   * shown that it has none for (a turn that just settled among them). Only those are sent:
   * what a turn brings does not grow with the chat (issue 16).
   */
  async refreshFigures(sessionId: string): Promise<void> {
    await this.fetchFigures(sessionId, this.missingTurns(sessionId, true));
  }

  /** The rows shown changed (a chat opened, an older page read): figures of their turns. */
  needFigures(sessionId: string): void {
    const streams = this.missingTurns(sessionId, false);
    if (streams.length > 0) void this.fetchFigures(sessionId, streams);
  }

  /** Streams of the open chat's rows with no figures known (and, unless `again`, not asked for). */
  private missingTurns(sessionId: string, again: boolean): string[] {
    if (sessionId !== this.host.activeId) return [];
    const known = this.figures[sessionId];
    const asked = this.figuresAsked.get(sessionId);
    const out = new Set<string>();
    for (const m of this.host.messages) {
      const id = m.stream_id;
      if (!id || out.has(id) || (known && this.indexOf(known).has(id)) || (!again && asked?.has(id))) continue;
      out.add(id);
    }
    return [...out];
  }

  private async fetchFigures(sessionId: string, streams: string[]): Promise<void> {
    const seq = ++this.figureSeq;
    this.figureLatest.set(sessionId, seq);
    let asked = this.figuresAsked.get(sessionId);
    if (!asked) this.figuresAsked.set(sessionId, (asked = new Set()));
    for (const id of streams) asked.add(id);
    try {
      const f = await this.api.chatFigures(sessionId, streams);
      const prev = this.figures[sessionId];
      const got = new Set(f.turns.map((t) => t.stream_id));
      const turns = [...(prev?.turns ?? []).filter((t) => !got.has(t.stream_id)), ...f.turns];
      // An older answer adds its turns but leaves the newer cost and meter.
      const summary = !prev || this.figureLatest.get(sessionId) === seq ? f : prev;
      this.figures = { ...this.figures, [sessionId]: { ...summary, turns } };
    } catch {
      // a chat deleted meanwhile
    }
  }

  private indexOf(f: ChatFigures): Map<string, TurnFigures> {
    let idx = this.turnIndex.get(f);
    if (!idx) {
      idx = new Map(f.turns.map((t) => [t.stream_id, t]));
      this.turnIndex.set(f, idx);
    }
    return idx;
  }

  async loadSettings(sessionId: string): Promise<ChatSettings | null> {
    try {
      const s = await this.api.getChatSettings(sessionId);
      this.settings = { ...this.settings, [sessionId]: s };
      return s;
    } catch {
      return null;
    }
  }

  /** The figures of the turn that wrote a row (its stream), for the row's footer. */
  turnOf(sessionId: string, streamId: string): TurnFigures | null {
    const f = this.figures[sessionId];
    return f ? (this.indexOf(f).get(streamId) ?? null) : null;
  }

  /** Retry: the last answer again, by model ("" the chat's own). */
  async retry(model = ''): Promise<boolean> {
    const sid = this.host.activeId;
    if (!sid || this.host.busy || this.branching) return false;
    this.branching = true;
    try {
      const b = await this.api.retry(sid, model);
      await this.host.adoptTurn(sid, b);
      if (b.fork_id) this.host.flashInfo('The earlier answer is kept in a copy of this chat (see the sidebar).');
      return true;
    } catch (err) {
      this.host.notify(sid, 'Could not answer again', errorText(err));
      return false;
    } finally {
      this.branching = false;
    }
  }

  /** Sends an edited message instead of the one it replaces. */
  async edit(message: MessageView, text: string): Promise<boolean> {
    const sid = this.host.activeId;
    if (!sid || this.host.busy || this.branching) return false;
    this.branching = true;
    try {
      const b = await this.api.editAndResend(sid, Number(message.id), text, this.host.activeRevision());
      this.editing = null;
      await this.host.adoptTurn(sid, b);
      if (b.fork_id) this.host.flashInfo('The conversation before the edit is kept in a copy of this chat (see the sidebar).');
      return true;
    } catch (err) {
      this.host.notify(sid, 'Could not send the edited message', errorText(err));
      return false;
    } finally {
      this.branching = false;
    }
  }

  /** "Summarise and continue"; with retry a last turn that failed is sent again. */
  async compact(retry: boolean): Promise<boolean> {
    const sid = this.host.activeId;
    if (!sid || this.host.busy || this.compacting) return false;
    this.compacting = sid;
    try {
      const res = await this.api.compactSession(sid, retry);
      if (res.retried) {
        await this.host.adoptTurn(sid, res.retried);
      } else {
        await this.host.reload(sid);
        this.host.flashInfo(res.message || 'Earlier messages were summarised: the next message is sent with the summary.');
      }
      void this.refreshFigures(sid);
      return true;
    } catch (err) {
      this.host.notify(sid, 'Could not summarise the conversation', errorText(err));
      return false;
    } finally {
      this.compacting = null;
    }
  }

  async regenerateTitle(sessionId: string): Promise<void> {
    try {
      const title = await this.api.regenerateTitle(sessionId);
      this.host.flashInfo(`New title: ${title}`);
    } catch (err) {
      this.host.notify(sessionId, 'Could not make a new title', errorText(err));
    }
  }

  async loadQuickAsk(): Promise<QuickAskStatus | null> {
    try {
      this.quickAsk = await this.api.quickAskStatus();
    } catch {
      this.quickAsk = null;
    }
    return this.quickAsk;
  }
}
