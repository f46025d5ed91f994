// Screenshots from the dev mock (src/dev/mock.ts), taken with the system Chromium
// through playwright-core: the approval and vault cards (`?scenario=agent`), steering
// (`?scenario=steer`: queued messages and a consumed steer), the sidebar search and the
// session menu (`?scenario=search`), the Diagnostics view, the background task panel
// and a /btw side answer (`?scenario=tasks`). Starts its own Vite dev server on
// 127.0.0.1 and closes it (and the browser) when done.
//
//   node scripts/screenshots.mjs            (CHROMIUM=/path/to/chromium to override;
//                                            ONLY=tasks takes only the files naming it)

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
  await view(page, query, `[data-card="${card}"]`, file, prepare);
}

/** Opens query, waits for selector, runs prepare, lets things settle, takes the shot. */
async function view(page, query, selector, file, prepare, settleMs = 1200) {
  if (process.env.ONLY && !file.includes(process.env.ONLY)) return;
  await page.goto(base + query, { waitUntil: 'domcontentloaded' });
  await page.locator(selector).first().waitFor({ timeout: 30_000 });
  if (prepare) await prepare(page);
  // Let cards arm (their buttons ignore clicks for a moment) and the transcript settle.
  await page.waitForTimeout(settleMs);
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
    // Steering: one message read mid-answer (a user bubble), two still queued while the
    // provider's rate limit holds the turn.
    await view(page, '?scenario=steer', '[data-steer]', `steering${suffix}.png`, async (p) => {
      await p.locator('[data-steer-id]').nth(1).waitFor({ timeout: 15_000 });
      await p.getByText(/rate limit/).first().waitFor({ timeout: 15_000 });
      await p.getByLabel('Message', { exact: true }).fill('Also update the README example');
    });
    // The sidebar search as you type.
    await view(page, '?scenario=search', 'nav', `search${suffix}.png`, async (p) => {
      await p.getByRole('searchbox', { name: 'Search conversations' }).pressSequentially('file', { delay: 40 });
      await p.locator('[data-hit]').nth(2).waitFor({ timeout: 10_000 });
      await p.locator('[data-hit]').first().hover();
    });
    // The session menu of a sidebar row.
    await view(page, '?scenario=search', '[data-session="q2"]', `session-menu${suffix}.png`, async (p) => {
      await p.getByRole('button', { name: 'Actions for Parsing the config file' }).click();
      await p.getByRole('menu').waitFor();
      await p.keyboard.press('ArrowDown');
    }, 400);
    // The Diagnostics view.
    await view(page, '', 'nav', `diagnostics${suffix}.png`, async (p) => {
      await p.getByRole('button', { name: 'Diagnostics' }).click();
      await p.getByRole('dialog', { name: 'Diagnostics' }).getByText('/talaria.db').waitFor({ timeout: 10_000 });
    }, 600);
    // Background tasks: running, waiting for an approval (its card in the panel), queued,
    // completed with its result open.
    await view(page, '?scenario=tasks', '[data-task]', `background-tasks${suffix}.png`, async (p) => {
      await p.locator('[data-task] [data-card="approval"]').waitFor({ timeout: 10_000 });
      await p.locator('[data-status="completed"]').getByRole('button', { name: 'Show result' }).click();
      await p.getByRole('region', { name: /^Result of/ }).waitFor({ timeout: 10_000 });
    });
    // A /btw side answer in the drawer, beside the conversation and its tasks.
    await view(page, '?scenario=tasks', '[data-task]', `side-question${suffix}.png`, async (p) => {
      await p.getByRole('button', { name: /Background tasks/ }).click();
      const box = p.getByLabel('Message', { exact: true });
      await box.fill('/btw does the task queue block my own turns?');
      await box.press('Enter');
      await p.getByRole('complementary', { name: 'Side question' }).getByText('runs beside the turn too').waitFor({ timeout: 15_000 });
      await box.fill('Then start on the release notes draft');
    }, 600);
    await context.close();
    context = undefined;
  }
} finally {
  await context?.close().catch(() => {});
  await server.close();
  rmSync(userDataDir, { recursive: true, force: true });
}
