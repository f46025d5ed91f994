// The composer's drafts: the text typed in each chat's composer, saved to the host
// DRAFT_DEBOUNCE_MS after the last key (SaveDraft), read when a chat opens (GetDraft),
// and merged with the unread steers a cancelled turn gave back. One area of the window's
// state (issue 25); the main store hosts it as `store.drafts`.

import type { Api } from './api';
import { errorMessage } from './api';
import { mergeDraft } from './tasks';

/** How long the composer waits after a key before it saves the draft (ms). */
export const DRAFT_DEBOUNCE_MS = 500;

/** What Drafts needs of the main store. */
export interface DraftsHost {
  readonly activeId: string | null;
  /**
   * Shows a failed save under the chat; with `keep`, not over a banner already shown
   * (a message that could not be sent says more than its draft that could not be saved).
   */
  setBanner(sessionId: string, label: string, err: unknown, keep?: boolean): void;
  /** Gives the composer the focus (text came back into it). */
  focusComposer(): void;
}

export class Drafts {
  /** The composer's text per session ("" key: no session open yet). */
  texts = $state<Record<string, string>>({});

  private loaded = new Set<string>();
  private dirty = new Set<string>();
  private timers = new Map<string, ReturnType<typeof setTimeout>>();
  /** Streams whose unsent steers went back to the composer already. */
  private restored = new Set<string>();

  constructor(
    private readonly api: Pick<Api, 'saveDraft' | 'getDraft'>,
    private readonly host: DraftsHost,
  ) {}

  /** The composer's text of a session ("" before the first session exists). */
  of(sessionId: string | null): string {
    return this.texts[sessionId ?? ''] ?? '';
  }

  /** Sets the composer's text of a session (null: no session yet); saved debounced. */
  set(text: string, sessionId: string | null): void {
    const key = sessionId ?? '';
    if ((this.texts[key] ?? '') === text) return;
    this.texts = { ...this.texts, [key]: text };
    if (!sessionId) return;
    this.dirty.add(sessionId);
    this.cancelSave(sessionId);
    this.timers.set(sessionId, setTimeout(() => void this.flush(sessionId), DRAFT_DEBOUNCE_MS));
  }

  /** Saves a session's draft now if it changed since the last save. */
  async flush(sessionId: string): Promise<void> {
    this.cancelSave(sessionId);
    if (!this.dirty.has(sessionId)) return;
    this.dirty.delete(sessionId);
    try {
      await this.api.saveDraft(sessionId, this.texts[sessionId] ?? '');
    } catch (err) {
      // Kept on screen; a later edit tries again.
      console.warn('SaveDraft failed', errorMessage(err));
      if (sessionId === this.host.activeId) this.host.setBanner(sessionId, 'Could not save the draft', err, true);
    }
  }

  /** Saves every draft waiting for its debounce (the window is hidden or closes). */
  flushAll(): void {
    for (const id of [...this.timers.keys()]) void this.flush(id);
  }

  /** Reads a session's saved draft once (when it opens); text typed meanwhile wins. */
  async load(sessionId: string): Promise<void> {
    if (this.loaded.has(sessionId)) return;
    try {
      const d = await this.api.getDraft(sessionId);
      this.loaded.add(sessionId);
      if (d.text && !(this.texts[sessionId] ?? '')) this.texts = { ...this.texts, [sessionId]: d.text };
    } catch (err) {
      console.warn('GetDraft failed', errorMessage(err));
    }
  }

  /** A session made here has no saved draft to read. */
  markNew(sessionId: string): void {
    this.loaded.add(sessionId);
  }

  /**
   * The session the first message made: what was typed before it existed is being sent
   * (the composer took it out of the box); what was typed since becomes its draft.
   */
  adoptUnsaved(sessionId: string): void {
    if (!('' in this.texts)) return;
    const since = this.texts[''];
    const d = { ...this.texts };
    delete d[''];
    this.texts = d;
    if (since.trim()) this.set(since, sessionId);
  }

  /** Puts text back into a session's composer after what is there, and saves it. */
  append(sessionId: string, text: string): void {
    const cur = (this.texts[sessionId] ?? '').replace(/\s+$/, '');
    this.set(cur ? `${cur}\n\n${text}` : text, sessionId);
  }

  /** A deleted session: nothing of its draft is saved any more. */
  forget(sessionId: string): void {
    this.cancelSave(sessionId);
    this.dirty.delete(sessionId);
  }

  /**
   * A cancelled turn's unread steers: the host appended them to the session's saved draft
   * (backend/turn/settle.go keepUnsent). Re-read it and merge it with what the composer
   * shows (typing since the last save included), once per stream, so no text is lost
   * and none doubled; save only when the merge differs from the host's draft.
   */
  async restoreUnsent(sessionId: string, streamId: string, texts: string[]): Promise<void> {
    if (this.restored.has(streamId)) return;
    this.restored.add(streamId);
    if (texts.length === 0) return;
    // A debounced save of the old text must not land after the host's draft: the merge
    // below is saved instead.
    this.cancelSave(sessionId);
    let host: string | null = null;
    try {
      host = (await this.api.getDraft(sessionId)).text;
    } catch (err) {
      console.warn('GetDraft failed', errorMessage(err));
    }
    const local = this.texts[sessionId] ?? '';
    const merged = mergeDraft(local, host ?? '', texts);
    this.loaded.add(sessionId);
    if (merged !== local) this.texts = { ...this.texts, [sessionId]: merged };
    if (host === null || merged !== host.replace(/\s+$/, '')) {
      this.dirty.add(sessionId);
      await this.flush(sessionId);
    } else {
      this.dirty.delete(sessionId);
    }
    if (sessionId === this.host.activeId) this.host.focusComposer();
  }

  private cancelSave(sessionId: string): void {
    const t = this.timers.get(sessionId);
    if (t) clearTimeout(t);
    this.timers.delete(sessionId);
  }
}
