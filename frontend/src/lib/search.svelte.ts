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
  /** Bumped by every search and clear: only the newest search's answer is shown. */
  private seq = 0;

  constructor(private readonly api: Pick<Api, 'searchSessions'>) {}

  /** The search box changed: asks the host SEARCH_DEBOUNCE_MS after the last key; an empty box clears. */
  set(query: string): void {
    this.query = query;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (!query.trim()) {
      this.seq++;
      this.hits = null;
      this.searching = false;
      this.error = null;
      return;
    }
    this.searching = true;
    this.timer = setTimeout(() => void this.run(query.trim()), SEARCH_DEBOUNCE_MS);
  }

  /** Drops a search still waiting for its debounce (the window closes). */
  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private async run(query: string): Promise<void> {
    const n = ++this.seq;
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
      if (n === this.seq) this.searching = false;
    }
  }
}
