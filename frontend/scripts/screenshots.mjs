// Screenshots of the cards from the dev mock (src/dev/mock.ts, `?scenario=agent`), taken
// with the system Chromium through playwright-core. Starts its own Vite dev server on
// 127.0.0.1 and closes it (and the browser) when done.
//
//   node scripts/screenshots.mjs            (CHROMIUM=/path/to/chromium to override)

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { createServer } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = join(root, 'screenshots');
const port = Number(process.env.PORT || 5179);

const server = await createServer({
  root,
  logLevel: 'warn',
  server: { host: '127.0.0.1', port, strictPort: true, hmr: false },
});
await server.listen();
const base = `http://127.0.0.1:${port}/`;
const userDataDir = mkdtempSync(join(tmpdir(), 'talaria-shots-'));
let context;

async function shot(page, query, card, file, prepare) {
  await page.goto(base + query, { waitUntil: 'domcontentloaded' });
  await page.locator(`[data-card="${card}"]`).waitFor({ timeout: 30_000 });
  if (prepare) await prepare(page);
  // Let the card arm (its buttons ignore clicks for a moment) and the transcript settle.
  await page.waitForTimeout(1200);
  await page.screenshot({ path: join(out, file) });
  console.log('wrote', join('screenshots', file));
}

try {
  for (const scheme of ['light', 'dark']) {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      viewport: { width: 1180, height: 860 },
      deviceScaleFactor: 1,
      colorScheme: scheme,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    page.on('pageerror', (e) => console.error('page error:', e.message));
    const suffix = scheme === 'dark' ? '-dark' : '';
    await shot(page, '?scenario=agent', 'approval', `approval-card${suffix}.png`, async (p) => {
      await p.getByText('1 more waiting').waitFor({ timeout: 10_000 });
    });
    await shot(page, '?scenario=agent&at=vault&saved', 'vault', `vault-card${suffix}.png`, async (p) => {
      await p.locator('[data-card="vault"] input[type="password"]').fill('ghp_exampleExampleExample');
    });
    if (scheme === 'light') {
      await shot(page, '?scenario=agent&at=vault&keyring=off', 'vault', 'vault-card-no-keychain.png');
    }
    await context.close();
    context = undefined;
  }
} finally {
  await context?.close().catch(() => {});
  await server.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
