// Hermes Agent in the real window: with nothing found Settings says how to install it;
// pointed at the real Hermes 0.19.0 that scripts/hermes-setup.sh installs (and a
// throw-away HERMES_HOME whose model is the scripted provider) it shows what it found,
// a chat moved to "Hermes Agent" runs on the real gateway, Hermes's approval card offers
// Hermes's choices, Deny keeps the command from running, and the answer is shown.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test, text, toolCalls, type App } from './fixtures';
import { HERMES_PYTHON, writeHermesHome } from './hermes';
import { AGENT_WAIT_MS } from './wait';

const python = HERMES_PYTHON;

function hermesHome(): string {
  return writeHermesHome(fs.mkdtempSync(path.join(os.tmpdir(), 'talaria-window-hermes-')));
}

async function resetHermes(app: App) {
  await app.call('SaveHermesSettings', { path: '', home: '', model: '', install: {} });
}

test.afterEach(async ({ app }) => resetHermes(app));

test('Settings says how to install Hermes when there is none, and what it found when pointed at one', async ({ app }) => {
  test.slow(); // each look-up runs Hermes's Python (seconds at load 20)
  await resetHermes(app);
  const page = app.page;
  await page.getByRole('button', { name: 'Settings' }).click();
  const section = page.locator('[data-hermes-settings]');
  // The window tests' machine has no Hermes on PATH nor in ~/.hermes.
  await expect(section.locator('[data-hermes-missing]')).toContainText('not found', { timeout: AGENT_WAIT_MS });
  await expect(section).toContainText('pip install hermes-agent');

  await section.getByLabel('Hermes path (optional)').fill(python);
  await section.getByRole('button', { name: 'Save Hermes settings' }).click();
  await expect(section.locator('[data-hermes-found]')).toContainText('Hermes Agent 0.19.0', { timeout: AGENT_WAIT_MS });
  await expect(section.locator('[data-hermes-found]')).toContainText(python);
  await page.keyboard.press('Escape');
});

test('a chat on the real Hermes: its approval card, Deny, its answer', async ({ app, provider }) => {
  // The first turn starts Hermes's gateway and builds its agent (Python imports, its
  // tool registry): a few CPU seconds, which on a 2-core machine at load 20 took more
  // than a minute of wall time. The waits below are bounded by events; this bounds their sum.
  test.slow();
  const page = app.page;
  const home = hermesHome();
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'talaria-window-hermes-ws-'));
  const victim = path.join(ws, 'keep-me');
  fs.mkdirSync(victim);
  try {
    // Pointed at the real Hermes through Settings, as a user does.
    await page.getByRole('button', { name: 'Settings' }).click();
    const section = page.locator('[data-hermes-settings]');
    await section.getByLabel('Hermes path (optional)').fill(python);
    await section.getByLabel('Hermes home (optional)').fill(home);
    await section.getByRole('button', { name: 'Save Hermes settings' }).click();
    await expect(section.locator('[data-hermes-found]')).toContainText('Hermes Agent 0.19.0', { timeout: AGENT_WAIT_MS });
    await page.keyboard.press('Escape');
    await app.newChat();
    const picker = page.getByLabel('Runtime of this chat');
    await expect(picker.locator('option', { hasText: 'Hermes Agent' })).toBeEnabled({ timeout: AGENT_WAIT_MS });
    await picker.selectOption({ label: 'Hermes Agent' });
    await expect(picker).toHaveValue('hermes');
    const sessions = await app.call<{ id: string; runtime: string }[]>('ListSessions');
    const chat = sessions.find((s) => s.runtime === 'hermes');
    expect(chat).toBeTruthy();
    await app.call('SetSessionWorkspace', chat!.id, ws);

    await provider.script(
      toolCalls({ id: 'w1', name: 'terminal', args: { command: `rm -rf ${victim}` } }),
      text('I left ', 'the folder alone.'),
    );
    await app.send('delete keep-me');
    const card = page.locator('[data-card="approval"]');
    await expect(card).toBeVisible({ timeout: AGENT_WAIT_MS });
    await expect(card).toContainText(`rm -rf ${victim}`);
    for (const label of ['Allow once', 'Allow for this session', 'Always allow', 'Deny']) {
      await expect(card.getByRole('button', { name: label })).toBeVisible();
    }
    await page.screenshot({ path: '../build/window-test/hermes-approval.png' });
    await card.getByRole('button', { name: 'Deny' }).click();
    await expect(app.assistant().last()).toContainText('I left the folder alone.', { timeout: AGENT_WAIT_MS });
    expect(fs.existsSync(victim)).toBe(true);

    // Diagnostics has the Hermes runtime's own section: its version, gateway dialect
    // and the runtime's output.
    await page.getByRole('button', { name: 'Diagnostics' }).click();
    const diag = page.locator('[data-runtime-diagnostics="hermes"]');
    await expect(diag).toContainText('0.19.0');
    await expect(diag).toContainText('Gateway dialect');
    await expect(diag.getByLabel('Runtime hermes stderr')).toContainText('Hermes gateway ready');
    await page.screenshot({ path: '../build/window-test/hermes-diagnostics.png' });
    await page.keyboard.press('Escape');
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
    fs.rmSync(ws, { recursive: true, force: true });
  }
});
