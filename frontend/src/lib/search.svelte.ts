// The sidebar's search over every session (SearchSessions, SQLite FTS5 on the host):
// the query typed, its hits and whether a search is on its way. One area of the
// window's state (issue 25); the main store hosts it as `store.search`, and opening a
// hit stays with the main store (it opens a session).

import type { Api } from './api';
import { errorText } from './api';
import type { SearchHit } from './protocol';

/** How long the search box waits after the last key before it asks the host (ms). */
export const SEARCH_DEBOUNCE_MS = 150;

/** How many hits one search asks for. */
const SEARCH_HITS = 30;

export class SessionSearch {
  /** The text in the search box. */
  query = $state('');
  /** The hits of the last search answered; null while no search is typed. */
  hits = $state<SearchHit[] | null>(null);
  /** A search is typed and its answer has not come yet. */
  searching = $state(false);
  /** Why the last search failed. */
  error = $state<string | null>(null);

  private timer: ReturnType<typeof setTimeout> | null = null;
  /** Bumped by every search, clear and query queued: only the newest search's answer is shown. */
  private seq = 0;
  /** A search is on its way to the host. */
  private inFlight = false;
  /**
   * The query typed while a search was on its way: it is sent when that answer comes,
   * so the window never has two searches running on the host at once (the host cannot
   * stop one, and two would share its cores); a newer query replaces it.
   */
  private queued: string | null = null;

  constructor(private readonly api: Pick<Api, 'searchSessions'>) {}

  /** The search box changed: asks the host SEARCH_DEBOUNCE_MS after the last key; an empty box clears. */
  set(query: string): void {
    this.query = query;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!query.trim()) {
      this.seq++;
      this.queued = null;
      this.hits = null;
      this.searching = false;
      this.error = null;
      return;
    }
    this.searching = true;
    this.timer = setTimeout(() => this.send(query.trim()), SEARCH_DEBOUNCE_MS);
  }

  /** Drops a search still waiting for its debounce or for the answer before it (the window closes). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.queued = null;
  }

  /** Runs the search now, or after the answer on its way (whose hits are then not shown). */
  private send(query: string): void {
    if (this.inFlight) {
      this.seq++;
      this.queued = query;
      return;
    }
    void this.run(query);
  }

  private async run(query: string): Promise<void> {
    const n = ++this.seq;
    this.inFlight = true;
    try {
      const hits = await this.api.searchSessions(query, SEARCH_HITS);
      if (n !== this.seq) return;
      this.hits = hits;
      this.error = null;
    } catch (err) {
      if (n !== this.seq) return;
      this.hits = [];
      this.error = errorText(err);
    } finally {
      this.inFlight = false;
      if (n === this.seq) this.searching = false;
      const next = this.queued;
      this.queued = null;
      if (next !== null) void this.run(next);
    }
  }
}
