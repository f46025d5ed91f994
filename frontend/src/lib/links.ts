// Links never navigate the webview: a click on any anchor is stopped, and http(s) or
// mailto targets are handed to the system browser.

const EXTERNAL = /^(?:https?:\/\/|mailto:)/i;

/** True for an absolute http(s) or mailto URL, the only kinds we open. */
export function isSafeExternalUrl(href: string | null | undefined): href is string {
  if (!href) return false;
  const h = href.trim();
  if (!EXTERNAL.test(h)) return false;
  try {
    const u = new URL(h);
    return u.protocol === 'http:' || u.protocol === 'https:' || u.protocol === 'mailto:';
  } catch {
    return false;
  }
}

/**
 * Installs one capturing listener on `root` that stops every anchor click (and
 * middle-click) from navigating, and opens safe targets with `open`. Also stops files
 * dropped on the window from replacing the page. Returns the uninstaller.
 */
export function installLinkGuard(root: Document, open: (url: string) => void): () => void {
  const onClick = (ev: MouseEvent) => {
    const target = ev.target as Element | null;
    const a = target && typeof target.closest === 'function' ? target.closest('a') : null;
    if (!a) return;
    ev.preventDefault();
    const href = a.getAttribute('href');
    if (ev.type === 'click' || (ev.type === 'auxclick' && ev.button === 1)) {
      if (isSafeExternalUrl(href)) open(href.trim());
    }
  };
  const stopDrop = (ev: DragEvent) => {
    ev.preventDefault();
  };
  root.addEventListener('click', onClick, true);
  root.addEventListener('auxclick', onClick, true);
  root.addEventListener('dragover', stopDrop);
  root.addEventListener('drop', stopDrop);
  return () => {
    root.removeEventListener('click', onClick, true);
    root.removeEventListener('auxclick', onClick, true);
    root.removeEventListener('dragover', stopDrop);
    root.removeEventListener('drop', stopDrop);
  };
}
