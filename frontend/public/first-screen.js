// The first-screen picture (app/boot.go injectFirstScreen) is HTML of the window as it
// was: its chat must show its end, as the app opens it. This runs as the page is parsed,
// before its first paint. A picture taken at another width would lay out otherwise
// than the app will: it is taken away and the app paints as it did without one.
(() => {
  const shot = document.getElementById('talaria-first-screen');
  if (!shot) return;
  if (Math.abs(window.innerWidth - Number(shot.dataset.width)) > 1) {
    shot.remove();
    return;
  }
  for (const el of shot.querySelectorAll('[data-first-screen-scroll="end"]')) el.scrollTop = el.scrollHeight;
})();
