// The first-screen picture (app/boot.go injectFirstScreen) is HTML of the window as it
// was: its chat must show its end, as the app opens it. This runs as the page is parsed,
// before its first paint. A picture taken at another width would lay out otherwise
// than the app will: it is taken away and the app paints as it did without one.
//
// The host hands this script the app's module (data-app; the page only preloads it)
// instead of leaving it in the page's head. WebKit paints nothing until the page is
// "visually non-empty" (over 200 characters of text or 32x32 px of images, or else the
// page parsed), so a picture with little text (a fresh start's empty chat) can paint
// only once the page is parsed; and a parsed page whose module is already fetched runs
// it at once, before the next frame: the picture was painted with the app, 60-90 ms
// later. The module starts here once the page is parsed, from a task queued in the
// next frame's requestAnimationFrame (it runs after that frame is painted).
(() => {
  const me = document.currentScript;
  const app = me && me.dataset.app;
  let started = false;
  const start = () => {
    if (started || !app) return;
    started = true;
    const s = document.createElement('script');
    s.type = 'module';
    s.crossOrigin = '';
    s.src = app;
    document.head.appendChild(s);
  };
  const shot = document.getElementById('talaria-first-screen');
  let parsed = () => {
    // At the latest after 100 ms, should no frame come (a hidden window).
    requestAnimationFrame(() => setTimeout(start, 0));
    setTimeout(start, 100);
  };
  if (!shot || Math.abs(window.innerWidth - Number(shot.dataset.width)) > 1) {
    if (shot) shot.remove();
    parsed = start; // no picture to wait for; the app's element is parsed by then
  } else {
    for (const el of shot.querySelectorAll('[data-first-screen-scroll="end"]')) el.scrollTop = el.scrollHeight;
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', parsed, { once: true });
  else parsed();
})();
