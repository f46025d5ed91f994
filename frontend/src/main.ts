import './app.css';
import { mount } from 'svelte';
import App from './App.svelte';
import { api, holdCallsUntil } from './lib/api';
import { installLinkGuard } from './lib/links';
import { afterNextPaint } from './lib/perf';
import { loadHighlighter } from './lib/markdown';
import { dropFirstScreen } from './lib/firstscreen';

async function start() {
  // Start-up marks for the window benchmark's split (bench/webkit): the bundle evaluated,
  // then the app mounted (its first render, before layout and paint).
  performance.mark('talaria:script');
  // Dev only: outside Wails (plain `npm run dev`) there is no window.go; load a fake
  // backend. `import.meta.env.DEV` is false in `vite build`, so this import and the
  // mock are dropped from the production bundle.
  if (import.meta.env.DEV && !(window as unknown as { go?: unknown }).go) {
    const { installMock } = await import('./dev/mock');
    installMock();
  }
  installLinkGuard(document, (url) => api.openURL(url));
  // When the first screen's data came with the page (app/boot.go), what the app asks the
  // host while it mounts goes out after the first paint (lib/api), one task behind the
  // work queued for right after it (the sidebar's painted mark among it). Without that
  // data, the sidebar's list is asked for at once. A window started hidden does not
  // paint: the calls then go after a second.
  if (document.getElementById('talaria-boot')) {
    holdCallsUntil(afterNextPaint(1000).then(() => new Promise<void>((r) => setTimeout(r, 0))));
  }
  mount(App, { target: document.getElementById('app')! });
  performance.mark('talaria:mounted');
  // The page's first-screen picture is taken away by the app once its first chat is
  // drawn (lib/store start); should that never come, it goes after 3 s all the same.
  setTimeout(() => dropFirstScreen(), 3000);
  // Code colours (highlight.js, its own chunk) come after the first paint and the calls
  // held for it: code blocks are plain text until then (issue 24, item 3).
  void afterNextPaint(1000)
    .then(() => new Promise<void>((r) => setTimeout(r, 0)))
    .then(loadHighlighter)
    .catch((err: unknown) => console.warn('code colours could not be loaded; code blocks stay plain text', err));
}

void start();
