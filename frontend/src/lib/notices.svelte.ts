// The window's notices: each chat's banner (a turn's error or a failed call), the short
// notice shown for a few seconds (a hint, where an export was saved) and the error with
// no chat to pin it to. One area of the window's state (issue 25); the main store hosts
// it as `store.notices` and hands the rooms' hosts its setBanner, flashInfo and
// actionError.

import { ApiError, errorMessage, errorText } from './api';
import type { AppErrorData } from './protocol';

/** How long a short notice (a hint, "still on its way") stays. */
export const FLASH_MS = 6000;

/** What Notices needs of the main store. */
export interface NoticesHost {
  readonly activeId: string | null;
}

export class Notices {
  /** Banner for the open session: the last turn's apperror or a failed call. */
  banners = $state<Record<string, AppErrorData>>({});
  /** The stream whose apperror a session's banner shows (absent: a failed call's). */
  bannerStreams = $state<Record<string, string>>({});
  /** Error with no session to pin it to (start-up failures). */
  globalError = $state<string | null>(null);
  /** A short, non-error word (e.g. where an export was saved). */
  info = $state<string | null>(null);

  private flashTimer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly host: NoticesHost) {}

  get banner(): AppErrorData | null {
    return this.host.activeId ? (this.banners[this.host.activeId] ?? null) : null;
  }

  /** The stream of the open session whose error the banner shows (its row then does not), or null. */
  get errorAbove(): string | null {
    const id = this.host.activeId;
    return id && id in this.banners ? (this.bannerStreams[id] ?? null) : null;
  }

  dismissBanner(): void {
    if (this.host.activeId) this.clearBanner(this.host.activeId);
  }

  /** Shows a short notice for a few seconds (a hint, a message still on its way). */
  flashInfo(text: string, ms = FLASH_MS): void {
    this.info = text;
    if (this.flashTimer) clearTimeout(this.flashTimer);
    this.flashTimer = setTimeout(() => {
      this.flashTimer = null;
      if (this.info === text) this.info = null;
    }, ms);
  }

  /** Drops a notice's timer (the window closes). */
  stop(): void {
    if (this.flashTimer) clearTimeout(this.flashTimer);
  }

  /** Shows a failed action under the open chat (or above the window when none is open). */
  actionError(label: string, err: unknown): void {
    if (this.host.activeId) this.setBanner(this.host.activeId, label, err);
    else this.globalError = `${label}: ${errorText(err)}`;
  }

  /** A turn's error goes to the banner, and its saved row shows only its marker (errorAbove). */
  streamError(sessionId: string, error: AppErrorData, streamId: string): void {
    this.banners = { ...this.banners, [sessionId]: error };
    this.bannerStreams = { ...this.bannerStreams, [sessionId]: streamId };
  }

  /**
   * Shows err (an ApiError: its message and hint; or a message) under label in the chat;
   * with `keep`, only when the chat shows no banner (a background failure, such as a
   * draft's save, does not hide the failure of what the user just did).
   */
  setBanner(sessionId: string, label: string, err: unknown, keep = false): void {
    if (keep && sessionId in this.banners) return;
    const hint = err instanceof ApiError ? err.hint : '';
    this.banners = { ...this.banners, [sessionId]: { type: 'error', label, message: errorMessage(err), hint } };
    this.dropBannerStream(sessionId);
  }

  clearBanner(sessionId: string): void {
    this.dropBannerStream(sessionId);
    if (!(sessionId in this.banners)) return;
    const next = { ...this.banners };
    delete next[sessionId];
    this.banners = next;
  }

  private dropBannerStream(sessionId: string): void {
    if (!(sessionId in this.bannerStreams)) return;
    const next = { ...this.bannerStreams };
    delete next[sessionId];
    this.bannerStreams = next;
  }
}
