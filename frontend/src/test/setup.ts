import { configure } from '@testing-library/dom';
import { WAIT_MS } from './wait';

// Every findBy*/waitFor of Testing Library waits up to the suite's one deadline (its
// default, 1 s, is less than a lazy dialog's first import takes on a loaded machine).
// @testing-library/svelte re-exports this same module and keeps this value across its
// per-test configure/restore.
configure({ asyncUtilTimeout: WAIT_MS });

// Test setup for every vitest file. jsdom has no layout and no ResizeObserver, which the
// virtual lists (virtua) use to measure the viewport and the rows: this one reports a
// very tall viewport for a scroll container and 40 px for a row (virtua positions its
// rows absolutely), so every row of a test's chat or sidebar is in the DOM. virtua
// measures only rows with an offsetParent, which jsdom never sets: a row in the document
// gets its parent.
if (typeof window !== 'undefined' && !('ResizeObserver' in window)) {
  Object.defineProperty((window as Window & typeof globalThis).HTMLElement.prototype, 'offsetParent', {
    configurable: true,
    get(this: HTMLElement) {
      return this.isConnected ? this.parentElement : null;
    },
  });
  type Entry = { target: Element; contentRect: { width: number; height: number } };
  class LayoutlessResizeObserver {
    private readonly cb: (entries: Entry[]) => void;
    constructor(cb: (entries: Entry[]) => void) {
      this.cb = cb;
    }
    observe(target: Element): void {
      const row = (target as HTMLElement).style?.position === 'absolute';
      const entry = { target, contentRect: { width: 800, height: row ? 40 : 100_000 } };
      queueMicrotask(() => this.cb([entry]));
    }
    unobserve(): void {}
    disconnect(): void {}
  }
  (window as unknown as { ResizeObserver: unknown }).ResizeObserver = LayoutlessResizeObserver;
  (globalThis as unknown as { ResizeObserver: unknown }).ResizeObserver = LayoutlessResizeObserver;
  // virtua scrolls its container to a row (a search hit's message); jsdom has no scrollTo.
  const proto = (window as Window & typeof globalThis).HTMLElement.prototype as HTMLElement & { scrollTo?: unknown };
  if (typeof proto.scrollTo !== 'function') {
    proto.scrollTo = function (this: HTMLElement, a?: ScrollToOptions | number, b?: number) {
      if (typeof a === 'object' && a) {
        if (typeof a.top === 'number') this.scrollTop = a.top;
        if (typeof a.left === 'number') this.scrollLeft = a.left;
      } else if (typeof a === 'number') {
        this.scrollLeft = a;
        if (typeof b === 'number') this.scrollTop = b;
      }
    } as HTMLElement['scrollTo'];
  }
}

// jsdom's frames come every 16 ms; the app waits for a paint in places (the first chat
// opened at start-up is drawn after the sidebar's paint): here a frame comes at once.
if (typeof window !== 'undefined') {
  const raf = (cb: FrameRequestCallback) => setTimeout(() => cb(performance.now()), 0) as unknown as number;
  (window as unknown as { requestAnimationFrame: unknown }).requestAnimationFrame = raf;
  (globalThis as unknown as { requestAnimationFrame: unknown }).requestAnimationFrame = raf;
  const caf = (id: number) => clearTimeout(id);
  (window as unknown as { cancelAnimationFrame: unknown }).cancelAnimationFrame = caf;
  (globalThis as unknown as { cancelAnimationFrame: unknown }).cancelAnimationFrame = caf;
}


// Code colours are loaded after the window's first paint (main.ts); the tests render
// as the window does from then on. lib/markdown.test.ts checks the plain text before.
await (await import('../lib/markdown')).loadHighlighter();
