// The first-screen picture (backend/firstscreen, app/boot.go): the host serves the page
// with the window's last first screen in it, as inert HTML over the whole window, when
// its data are those the picture was taken of, so a start paints the last chat before
// the app's script has been fetched and run (issue 24). The app draws itself under it
// and takes it away (dropFirstScreen) once its own first chat is drawn, in the same task,
// so the next frame shows the live chat where the picture was. The window takes a new
// picture (watchFirstScreen) once it has been quiet for a moment while it shows the
// chat a start opens first, at its end, with nothing over it.

/** The picture's element, as the host puts it in the page. */
export const FIRST_SCREEN_ID = 'talaria-first-screen';

/** How long the window must be unchanged before a picture is taken (ms). */
export const QUIET_MS = 1500;

/** The page's document; undefined where there is none (tests run outside a page). */
function pageDocument(): Document | undefined {
  try {
    return typeof document === 'undefined' ? undefined : document;
  } catch {
    return undefined;
  }
}

/** Whether the page came with a picture that is still on screen. */
export function firstScreenShown(doc: Document | undefined = pageDocument()): boolean {
  return !!doc?.getElementById(FIRST_SCREEN_ID);
}

/** The first paint's time (ms since the page's time origin), or null before it. */
function firstPaint(): number | null {
  const paint = typeof performance !== 'undefined' && typeof performance.getEntriesByName === 'function' ? performance.getEntriesByName('first-contentful-paint')[0] : undefined;
  return paint ? paint.startTime : null;
}

/** When the picture on screen was painted (ms since the time origin); null without one or before its paint. */
export function firstScreenPaint(doc: Document | undefined = pageDocument()): number | null {
  return firstScreenShown(doc) ? firstPaint() : null;
}

/**
 * Takes the picture away (nothing when there is none). Returns the time (ms since the
 * page's time origin) the picture was first painted, from the browser's paint timing
 * (first-contentful-paint), or null when it was not on screen or was never painted.
 */
export function dropFirstScreen(doc: Document | undefined = pageDocument()): number | null {
  const el = doc?.getElementById(FIRST_SCREEN_ID);
  if (!el) return null;
  const at = firstPaint();
  el.remove();
  return at;
}

/** What watchFirstScreen needs of the app. */
export interface FirstScreenSource {
  /**
   * The chat shown when a picture may be taken now (the chat a start opens first, idle,
   * nothing over it; '' for the empty chat of a data folder without chats); null otherwise.
   */
  ready(): string | null;
  /** Keeps the picture (the host checks the chat and the data again). */
  save(sessionId: string, width: number, page: string): Promise<void>;
}

/** Whether the chat's list shows its end (a picture of another place would not be where the app opens). */
function atEnd(root: Element): boolean {
  const el = root.querySelector<HTMLElement>('[data-first-screen-scroll="end"]');
  return !!el && el.scrollHeight - el.scrollTop - el.clientHeight < 8;
}

/** Something over the chat, or of the moment: a dialog, a menu, an alert, a drag. */
const TRANSIENT = 'dialog[open], [role="dialog"], [role="alertdialog"], [role="menu"], [role="alert"], [role="listbox"], [data-drop-overlay]';

/** A label a clock rewrites ("14:32" to "yesterday" at midnight): its changes alone call for no new picture. */
const CLOCK = '[data-clock]';

/** Whether a mutation is inside a clock's label. */
function byClock(r: MutationRecord): boolean {
  const el = r.target instanceof Element ? r.target : r.target.parentElement;
  return el !== null && el.closest(CLOCK) !== null;
}

/**
 * Takes a picture of root (the app's element) QUIET_MS after it last changed, when
 * source.ready() names a chat, root's chat is at its end and nothing transient is in it,
 * and gives it to source.save (not again while it is the same). A label a clock rewrites
 * (`data-clock`) changing alone takes no picture. Returns the function that stops
 * watching. Nothing runs while nothing changes.
 */
export function watchFirstScreen(root: HTMLElement, source: FirstScreenSource, quietMs = QUIET_MS): () => void {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let last = '';
  let stopped = false;
  const take = () => {
    timer = null;
    if (stopped) return;
    const id = source.ready();
    if (id === null || !atEnd(root) || root.querySelector(TRANSIENT) || root.ownerDocument.getElementById(FIRST_SCREEN_ID)) return;
    const page = root.innerHTML;
    if (page === last) return;
    last = page;
    source.save(id, root.ownerDocument.defaultView?.innerWidth ?? 0, page).catch(() => {
      last = '';
    });
  };
  const schedule = () => {
    if (timer !== null) clearTimeout(timer);
    timer = setTimeout(take, quietMs);
  };
  const observer = new MutationObserver((records) => {
    if (!records.every(byClock)) schedule();
  });
  observer.observe(root, { subtree: true, childList: true, characterData: true, attributes: true });
  const onScroll = () => schedule();
  root.addEventListener('scroll', onScroll, { capture: true, passive: true });
  schedule();
  return () => {
    stopped = true;
    observer.disconnect();
    root.removeEventListener('scroll', onScroll, { capture: true });
    if (timer !== null) clearTimeout(timer);
  };
}
