import { defineConfig } from 'vitest/config';
import type { Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { searchForWorkspaceRoot } from 'vite';
import { WAIT_MS } from './src/test/wait.ts';

const outDir = fileURLToPath(new URL('./dist', import.meta.url));

// Vite empties dist/ before a build, which deletes the tracked dist/.gitkeep that lets
// Go's `//go:embed all:frontend/dist` compile on a clean checkout. Put it back.
function keepDistGitkeep(): Plugin {
  return {
    name: 'talaria-keep-dist-gitkeep',
    apply: 'build',
    closeBundle() {
      mkdirSync(outDir, { recursive: true });
      writeFileSync(resolve(outDir, '.gitkeep'), '');
    },
  };
}

// The dev server only: let Vite's HMR websocket through the CSP (under `wails dev` the
// page and the Vite server may differ in origin). Production keeps connect-src 'self'.
function devHmrCsp(): Plugin {
  return {
    name: 'talaria-dev-hmr-csp',
    apply: 'serve',
    transformIndexHtml(html) {
      return html.replace("connect-src 'self'", "connect-src 'self' ws://localhost:* ws://127.0.0.1:*");
    },
  };
}

const here = fileURLToPath(new URL('.', import.meta.url));

function realNodeModules(): string {
  const nm = resolve(here, 'node_modules');
  try {
    return realpathSync(nm);
  } catch {
    return nm;
  }
}

export default defineConfig({
  // svelteTesting: under vitest only, Svelte's browser build and DOM clean-up after each test.
  plugins: [svelte(), svelteTesting(), keepDistGitkeep(), devHmrCsp()],
  // Wails serves the bundle from its own asset server; relative URLs work everywhere.
  base: './',
  build: {
    outDir,
    emptyOutDir: true,
    sourcemap: false,
    // No <link rel=modulepreload> for lazy chunks: in WebKitGTK (2.50) a dynamic import()
    // of a chunk that a modulepreload link is fetching at the same moment sometimes never
    // settles, and the Markdown renderer (or a dialog) then never loaded: a chat stayed as
    // plain text until the app restarted (about one start in three under the window
    // benchmark). The chunks are local files; preloading them gains nothing.
    modulePreload: false,
  },
  server: {
    // `wails dev` proxies to this port; keep it fixed and fail loudly if taken.
    // TALARIA_VITE_PORT moves it (`make dev VITE_PORT=5174`) so two dev servers can run.
    port: Number(process.env.TALARIA_VITE_PORT ?? 5173),
    strictPort: true,
    // The workspace (Vite's default) and node_modules where it really is: a git
    // worktree's node_modules may be a symlink to the main checkout's, and Vite refuses
    // files outside the allowed folders (vitest's jsdom files then cannot load
    // @testing-library/svelte's setup file). In the main checkout this is the default.
    fs: { allow: [searchForWorkspaceRoot(here), realNodeModules()] },
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
    setupFiles: ['src/test/setup.ts'],
    // The machine is shared: a test that types through the whole App may wait its turn.
    // Every wait has the one deadline WAIT_MS (src/test/wait.ts, TALARIA_TEST_WAIT_MS);
    // a test or hook may hold several waits, and must outlive one stuck wait so that
    // its own error is what is reported.
    testTimeout: 3 * WAIT_MS,
    hookTimeout: 3 * WAIT_MS,
  },
});
