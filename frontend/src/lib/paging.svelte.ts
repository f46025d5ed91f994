// Paging through the open chat's rows: the page before the loaded ones (scrolled near
// the top), the page after them (below a search hit) and "Jump to latest". One area of
// the window's state (issue 25); the main store hosts it as `store.paging` and keeps
// the loaded rows (store.messages), which it reads when a chat opens.

import type { Api } from './api';
import type { MessageView } from './protocol';
import { FIRST_PAGE, PAGE, appendPage, prependPage, replaceWith } from './transcript';

/** What Paging needs of the main store: the open chat and its loaded rows. */
export interface PagingHost {
  readonly activeId: string | null;
  messages: MessageView[];
  /** The open session has saved rows before / after the loaded ones. */
  transcriptBefore: boolean;
  transcriptAfter: boolean;
  setBanner(sessionId: string, label: string, err: unknown): void;
}

export class Paging {
  loadingOlder = $state(false);
  loadingNewer = $state(false);

  constructor(
    private readonly api: Pick<Api, 'getTranscript' | 'getTranscriptFrom'>,
    private readonly host: PagingHost,
  ) {}

  /** Reads the page of rows before the loaded ones (scrolled near the top). */
  async loadOlder(): Promise<boolean> {
    const id = this.host.activeId;
    const first = this.host.messages[0];
    if (!id || !first || !this.host.transcriptBefore || this.loadingOlder) return false;
    this.loadingOlder = true;
    try {
      const p = await this.api.getTranscript(id, first.position, PAGE);
      if (this.host.activeId !== id || this.host.messages[0] !== first) return false;
      this.host.messages = prependPage(this.host.messages, p.messages);
      this.host.transcriptBefore = p.before;
      return true;
    } catch (err) {
      this.host.setBanner(id, 'Could not load older messages', err);
      return false;
    } finally {
      this.loadingOlder = false;
    }
  }

  /** Reads the page of rows after the loaded ones (below a search hit). */
  async loadNewer(): Promise<boolean> {
    const id = this.host.activeId;
    const last = this.host.messages.at(-1);
    if (!id || !last || !this.host.transcriptAfter || this.loadingNewer) return false;
    this.loadingNewer = true;
    try {
      const p = await this.api.getTranscriptFrom(id, last.position + 1, PAGE);
      if (this.host.activeId !== id || this.host.messages.at(-1) !== last) return false;
      this.host.messages = appendPage(this.host.messages, p.messages);
      this.host.transcriptAfter = p.after;
      return true;
    } catch (err) {
      this.host.setBanner(id, 'Could not load newer messages', err);
      return false;
    } finally {
      this.loadingNewer = false;
    }
  }

  /** "Jump to latest": the last rows again when the loaded ones end before them. */
  async jumpToLatest(): Promise<void> {
    const id = this.host.activeId;
    if (!id || !this.host.transcriptAfter) return;
    try {
      const p = await this.api.getTranscript(id, -1, FIRST_PAGE);
      if (this.host.activeId !== id) return;
      this.host.messages = replaceWith(this.host.messages, p.messages);
      this.host.transcriptBefore = p.before;
      this.host.transcriptAfter = p.after;
    } catch (err) {
      this.host.setBanner(id, 'Could not load the latest messages', err);
    }
  }
}
