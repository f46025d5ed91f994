import { defineConfig } from 'vitest/config';
import type { Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

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

export default defineConfig({
  plugins: [svelte(), keepDistGitkeep()],
  // Wails serves the bundle from its own asset server; relative URLs work everywhere.
  base: './',
  build: {
    outDir,
    emptyOutDir: true,
    sourcemap: false,
  },
  server: {
    // `wails dev` proxies to this port; keep it fixed and fail loudly if taken.
    port: 5173,
    strictPort: true,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
