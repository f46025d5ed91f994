import './app.css';
import { mount } from 'svelte';
import App from './App.svelte';
import { api } from './lib/api';
import { installLinkGuard } from './lib/links';

async function start() {
  // Dev only: outside Wails (plain `npm run dev`) there is no window.go; load a fake
  // backend. `import.meta.env.DEV` is false in `vite build`, so this import and the
  // mock are dropped from the production bundle.
  if (import.meta.env.DEV && !(window as unknown as { go?: unknown }).go) {
    const { installMock } = await import('./dev/mock');
    installMock();
  }
  installLinkGuard(document, (url) => api.openURL(url));
  mount(App, { target: document.getElementById('app')! });
}

void start();
