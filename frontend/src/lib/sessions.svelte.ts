// The sidebar's session list: the sessions listed (a page at a time), the archived
// ones, and the actions on a session (rename, pin, archive, delete, duplicate, fork,
// export, import). One area of the window's state (issue 25); the main store hosts it
// as `store.list`, opens sessions and forgets a deleted one's chat and draft.

import type { Api } from './api';
import { errorText } from './api';
import { requestKey } from './ids';
import type { ExportFormat, SessionInfo } from './protocol';
import { SESSION_PAGE } from './transcript';

/** Rows before the next page asked for again (SessionList.loadMoreSessions). */
const PAGE_OVERLAP = 5;

/**
 * The delete dialog's words for the chat titled title: deleted for good, or, when
 * keptBy names the agent that keeps its history (a chat continued from the agent's own
 * sessions), removed from Talaria only, its history staying in that agent.
 */
export function deleteMessage(title: string, keptBy: string): string {
  if (keptBy) {
    return `“${title}” will be removed from Talaria. Its history stays in ${keptBy}: Talaria does not delete the session there.`;
  }
  return `“${title}” and all its messages will be deleted for good. This cannot be undone.`;
}

/** What SessionList needs of the main store. */
export interface SessionListHost {
  readonly activeId: string | null;
  /** A short, non-error word (e.g. where an export was saved); an action clears it. */
  info: string | null;
  /** Shows a short notice for a few seconds (where an export went, what was imported). */
  flashInfo(text: string, ms?: number): void;
  /** Error with no session to pin it to (a listing failed). */
  globalError: string | null;
  /** The stream the window follows for the session while it has not ended, or null. */
  followedStream(sessionId: string): string | null;
  openSession(id: string): Promise<void>;
  /** A deleted session: its draft goes, and its chat when it is open. */
  forgetSession(id: string): Promise<void>;
  /** Shows a failed action under the open chat (or above the window when none is open). */
  actionError(label: string, err: unknown): void;
}

export class SessionList {
  /** The sidebar's sessions (archived ones apart), pinned first, then newest first. */
  sessions = $state<SessionInfo[]>([]);
  /** The sidebar has more sessions to list below the loaded ones. */
  sessionsMore = $state(false);
  showArchived = $state(false);
  archived = $state<SessionInfo[]>([]);
  /** The session the delete confirmation asks about. */
  confirmDelete = $state<SessionInfo | null>(null);
  /**
   * The agent that keeps confirmDelete's history (a chat continued from the agent's own
   * sessions: deleting it removes it from Talaria only), '' when none.
   */
  confirmKeptBy = $state('');

  private listing: Promise<void> | null = null;
  /**
   * How many rows of the host's order (pinned first, newest first) the sidebar holds
   * from its top: the next page is asked for from there, less PAGE_OVERLAP. Sessions
   * the list holds out of that order (the chat opened at start, one just made or
   * renamed) do not count: counting them skipped as many of the host's rows at the end
   * of the list (the oldest chat never showed).
   */
  private listed = 0;
  /** A next page of the sidebar is on its way (loadMoreSessions). */
  private loadingMore = false;
  private relist = false;

  constructor(
    private readonly api: Pick<
      Api,
      | 'listSessionsPage'
      | 'listArchivedSessions'
      | 'renameSession'
      | 'pinSession'
      | 'archiveSession'
      | 'deleteSession'
      | 'historyKeptBy'
      | 'duplicateSession'
      | 'forkSession'
      | 'exportSession'
      | 'importSession'
    >,
    private readonly host: SessionListHost,
  ) {}

  /** Whether the sidebar (or the archive) lists the session. */
  knows(sessionId: string): boolean {
    return this.sessions.some((s) => s.id === sessionId) || this.archived.some((s) => s.id === sessionId);
  }

  /** Shows list, the host's first SESSION_PAGE rows, as the sidebar. */
  takeFirstPage(list: SessionInfo[]): void {
    this.sessions = sortSessions(list);
    this.sessionsMore = list.length === SESSION_PAGE;
    this.listed = list.length;
  }

  /** Takes session id off the sidebar (deleted, archived, discarded). */
  dropRow(id: string): void {
    if (!this.sessions.some((s) => s.id === id)) return;
    this.sessions = this.sessions.filter((s) => s.id !== id);
    // The host's rows below it moved up one; a row counted that was not the host's
    // only makes the next page repeat one row, which is dropped as already shown.
    this.listed = Math.max(0, this.listed - 1);
  }

  /** The sidebar's first page (at start, when it did not come with the page). */
  async loadFirstPage(): Promise<void> {
    try {
      this.takeFirstPage(await this.api.listSessionsPage(0, SESSION_PAGE));
    } catch (err) {
      this.host.globalError = errorText(err);
    }
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
          // The first pages again (as many as are shown, up to 500 sessions); the
          // sessions loaded below them stay.
          const want = Math.min(Math.max(SESSION_PAGE, this.sessions.length), 500);
          const [list, archived] = await Promise.all([
            this.api.listSessionsPage(0, want),
            this.showArchived ? this.api.listArchivedSessions() : Promise.resolve(null),
          ]);
          const top = new Set(list.map((s) => s.id));
          const below = list.length < want ? [] : this.sessions.filter((s) => !top.has(s.id));
          // A full re-list may have more after it: then more can be asked for even if
          // the list was short before (an empty first screen, chats made since).
          if (list.length < want) this.sessionsMore = false;
          else if (below.length === 0) this.sessionsMore = true;
          this.sessions = sortSessions([...list, ...below].map((s) => this.keepLocalBusy(s)));
          // The rows below the first ones are asked for again from there (the host's
          // order may have moved under them); those already shown are not repeated.
          this.listed = list.length;
          if (archived) this.archived = sortSessions(archived.map((s) => this.keepLocalBusy(s)));
        } while (this.relist);
      } catch (err) {
        this.host.globalError = errorText(err);
      } finally {
        this.listing = null;
      }
    })();
    return this.listing;
  }

  /** The next page of the sidebar (scrolled near its end). */
  async loadMoreSessions(): Promise<void> {
    // A re-list in flight (refreshSessions) first: the next page is asked for after it,
    // not dropped (the list may already be scrolled to its end, and no scroll would ask
    // again).
    while (this.listing) await this.listing;
    if (!this.sessionsMore || this.loadingMore) return;
    this.loadingMore = true;
    try {
      // A few rows before the next page too, in case the host's order moved up under
      // the list (a chat deleted elsewhere); those already shown are not repeated.
      const from = Math.max(0, this.listed - PAGE_OVERLAP);
      const want = SESSION_PAGE + (this.listed - from);
      const got = await this.api.listSessionsPage(from, want);
      const have = new Set(this.sessions.map((s) => s.id));
      this.sessions = sortSessions([...this.sessions, ...got.filter((s) => !have.has(s.id)).map((s) => this.keepLocalBusy(s))]);
      this.listed = from + got.length;
      this.sessionsMore = got.length === want;
    } catch (err) {
      this.host.globalError = `Could not list more conversations: ${errorText(err)}`;
    } finally {
      this.loadingMore = false;
    }
  }

  // ---- session actions -----------------------------------------------------------

  async renameSession(id: string, title: string): Promise<boolean> {
    return this.act('Could not rename the conversation', async () => this.upsertSession(await this.api.renameSession(id, title)));
  }

  async pinSession(id: string, pinned: boolean): Promise<boolean> {
    return this.act(pinned ? 'Could not pin the conversation' : 'Could not unpin the conversation', async () =>
      this.upsertSession(await this.api.pinSession(id, pinned)),
    );
  }

  async archiveSession(id: string, archived: boolean): Promise<boolean> {
    return this.act(archived ? 'Could not archive the conversation' : 'Could not unarchive the conversation', async () =>
      this.upsertSession(await this.api.archiveSession(id, archived)),
    );
  }

  async setShowArchived(on: boolean): Promise<void> {
    this.showArchived = on;
    if (!on) {
      this.archived = this.archived.filter((s) => s.id === this.host.activeId);
      return;
    }
    try {
      this.archived = sortSessions(await this.api.listArchivedSessions());
    } catch (err) {
      this.host.actionError('Could not list the archived conversations', err);
    }
  }

  /** Asks for confirmation first (the dialog calls deleteSession). */
  async askDelete(id: string): Promise<void> {
    this.confirmKeptBy = '';
    this.confirmDelete = this.sessions.find((s) => s.id === id) ?? this.archived.find((s) => s.id === id) ?? null;
    if (!this.confirmDelete) return;
    let keptBy = '';
    try {
      keptBy = await this.api.historyKeptBy(id);
    } catch {
      // The dialog then says the plain words; the host decides what it deletes anyway.
    }
    if (this.confirmDelete?.id === id) this.confirmKeptBy = keptBy;
  }

  async deleteSession(id: string): Promise<boolean> {
    this.confirmDelete = null;
    this.confirmKeptBy = '';
    return this.act('Could not delete the conversation', async () => {
      await this.api.deleteSession(id);
      this.dropRow(id);
      this.archived = this.archived.filter((s) => s.id !== id);
      await this.host.forgetSession(id);
    });
  }

  async duplicateSession(id: string): Promise<boolean> {
    return this.act('Could not duplicate the conversation', async () => {
      const s = await this.api.duplicateSession(id, requestKey());
      this.upsertSession(s);
      await this.host.openSession(s.id);
    });
  }

  /** A new conversation with the open one's messages up to and including `position`. */
  async forkFrom(position: number): Promise<boolean> {
    const sid = this.host.activeId;
    if (!sid) return false;
    return this.act('Could not fork the conversation', async () => {
      const s = await this.api.forkSession(sid, position, requestKey());
      this.upsertSession(s);
      await this.host.openSession(s.id);
    });
  }

  async exportSession(id: string, format: ExportFormat): Promise<boolean> {
    return this.act('Could not export the conversation', async () => {
      const path = await this.api.exportSession(id, format);
      if (path) this.host.flashInfo(`Exported to ${path}`, 10_000);
    });
  }

  async importSession(): Promise<boolean> {
    return this.act('Could not import the conversation', async () => {
      const s = await this.api.importSession();
      if (!s) return;
      this.upsertSession(s);
      await this.host.openSession(s.id);
      // Gone after a while: it followed the user into every chat until dismissed.
      this.host.flashInfo(`Imported “${s.title || 'conversation'}”: it works in your default folder and sandbox`, 10_000);
    });
  }

  /** Runs a session action; a failure goes to the banner with its message. */
  private async act(label: string, fn: () => Promise<unknown>): Promise<boolean> {
    this.host.info = null;
    try {
      await fn();
      return true;
    } catch (err) {
      this.host.actionError(label, err);
      return false;
    }
  }

  markBusy(sessionId: string, streamId: string): void {
    const s = this.sessions.find((x) => x.id === sessionId);
    if (s && s.active_stream_id !== streamId) this.patchSession(sessionId, { active_stream_id: streamId });
  }

  /** A listing taken before our stream_end must not clear a stream we still follow. */
  private keepLocalBusy(s: SessionInfo): SessionInfo {
    const stream = this.host.followedStream(s.id);
    if (stream !== null && !s.active_stream_id) {
      return { ...s, active_stream_id: stream };
    }
    return s;
  }

  patchSession(id: string, patch: Partial<SessionInfo>): void {
    const apply = (list: SessionInfo[]): SessionInfo[] | null => {
      const i = list.findIndex((s) => s.id === id);
      if (i < 0) return null;
      const next = [...list];
      next[i] = { ...next[i], ...patch };
      return next;
    };
    const main = apply(this.sessions);
    if (main) this.sessions = main;
    const archived = apply(this.archived);
    if (archived) this.archived = archived;
  }

  /** Puts a session in its list: archived ones apart, the others in the sidebar. */
  upsertSession(s: SessionInfo): void {
    const kept = this.keepLocalBusy(s);
    const inMain = this.sessions.some((x) => x.id === s.id);
    const inArchived = this.archived.some((x) => x.id === s.id);
    if (s.archived_at) {
      if (inMain) this.dropRow(s.id);
      // Kept while listed or open (a search hit can open an archived session).
      if (this.showArchived || inArchived || s.id === this.host.activeId) {
        this.archived = sortSessions([...this.archived.filter((x) => x.id !== s.id), kept]);
      }
    } else {
      if (inArchived) this.archived = this.archived.filter((x) => x.id !== s.id);
      this.sessions = sortSessions([...this.sessions.filter((x) => x.id !== s.id), kept]);
    }
  }
}

/** Pinned first, then newest first (updated_at, then created_at). */
export function sortSessions(list: SessionInfo[]): SessionInfo[] {
  return [...list].sort(
    (a, b) => Number(!!b.pinned) - Number(!!a.pinned) || b.updated_at - a.updated_at || b.created_at - a.created_at,
  );
}
