// Whether the user is looking at the window: focus, blur and the page being hidden are
// told to the host, which notifies only when the user is away; the drafts are saved when
// the page goes. One area of the window's state (issue 25); the main store hosts it as
// `store.windowWatch` and App starts it once mounted.

import type { Api } from './api';
import { errorMessage } from './api';
import type { Drafts } from './drafts.svelte';

/** What WindowWatch needs of the main store. */
export interface WindowWatchHost {
  readonly drafts: Pick<Drafts, 'flushAll'>;
}

export class WindowWatch {
  private lastFocused: boolean | null = null;

  constructor(
    private readonly api: Pick<Api, 'setWindowFocused'>,
    private readonly host: WindowWatchHost,
  ) {}

  /**
   * Tells the host whether the user is looking at the window (focus, blur, and the page
   * being hidden), so it notifies only when the user is away; saves drafts when the page
   * goes. Returns the clean-up.
   */
  watch(win: Window = window, doc: Document = document): () => void {
    const report = () => {
      const focused = doc.visibilityState !== 'hidden' && doc.hasFocus();
      if (focused === this.lastFocused) return;
      this.lastFocused = focused;
      this.api.setWindowFocused(focused).catch((err) => console.warn('SetWindowFocused failed', errorMessage(err)));
    };
    const flush = () => {
      this.host.drafts.flushAll();
    };
    const onVisibility = () => {
      report();
      if (doc.visibilityState === 'hidden') flush();
    };
    win.addEventListener('focus', report);
    win.addEventListener('blur', report);
    win.addEventListener('pagehide', flush);
    doc.addEventListener('visibilitychange', onVisibility);
    report();
    return () => {
      win.removeEventListener('focus', report);
      win.removeEventListener('blur', report);
      win.removeEventListener('pagehide', flush);
      doc.removeEventListener('visibilitychange', onVisibility);
    };
  }
}
