// An ACP agent's account and earlier sessions in the real window, against the real
// OpenCode that `make setup` installs in .cache/ (scripts/acp-setup.sh), its model the
// scripted provider (or, signed out, a built-in provider with no key): the sign-in
// card a chat shows when the agent asks to sign in (ACP authenticate, then the message
// is answered again), and Settings' "Sessions" of an agent (ACP session/list) opening
// one of its earlier sessions as a chat that goes on with it, whose deletion leaves the
// session at the agent (the dialog says so).
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, test, text } from './fixtures';
import { AGENT_WAIT_MS } from './wait';

const OPENCODE_VERSION = '1.18.33'; // sidecar/acp/acptest.OpenCodeVersion
const arch = process.arch === 'x64' ? 'x64' : process.arch;
const opencode = resolve(process.cwd(), '..', '.cache', `opencode-${OPENCODE_VERSION}`, 'node_modules', `opencode-linux-${arch}`, 'bin', 'opencode');

/**
 * A launcher for OpenCode with its own home and config, kept off the network
 * (sidecar/acp/acptest.OpenCodeOffline), and the folder its chats work in.
 */
function launcher(config: object): { command: string; workspace: string } {
  if (!existsSync(opencode)) throw new Error(`OpenCode ${OPENCODE_VERSION} is not installed at ${opencode}: run make setup`);
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'talaria-acp-account-')));
  const home = join(dir, 'home');
  const workspace = join(dir, 'workspace');
  mkdirSync(home);
  mkdirSync(workspace);
  writeFileSync(join(dir, 'opencode.json'), JSON.stringify({ autoupdate: false, share: 'disabled', ...config }));
  const env = {
    HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local/share'), XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'), OPENCODE_CONFIG: join(dir, 'opencode.json'),
    OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1', OPENCODE_DISABLE_EXTERNAL_SKILLS: '1', OPENCODE_PURE: '1', npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/',
  };
  const command = join(dir, 'opencode-acp');
  const exports = Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n');
  writeFileSync(command, `#!/bin/sh\nunset ANTHROPIC_API_KEY\n${exports}\nexec '${opencode}' "$@"\n`);
  chmodSync(command, 0o755);
  return { command, workspace };
}

/** Adds the agent (name, command) and opens a new chat on it in workspace. */
async function chatOn(app: import('./fixtures').App, providerURL: string, name: string, command: string, workspace: string): Promise<string> {
  await app.call('SaveSettings', { provider_name: 'scripted', base_url: providerURL, model: 'scripted-model', api_key: '', clear_api_key: false, workspace });
  const agent = await app.call<{ id: string }>('SaveACPAgent', { id: '', name, command, args: ['acp'], env: [], dir: '', preset: 'opencode' });
  // The window lists runtimes when it starts (Settings re-lists them after its own edits).
  await app.page.reload();
  await expect(app.composer).toBeVisible();
  await app.newChat();
  await app.page.getByLabel('Runtime of this chat').selectOption(`acp:${agent.id}`);
  return `acp:${agent.id}`;
}

test('an agent that asks to sign in shows its sign-in card; choosing a way signs in and sends the message again', async ({ app, provider }) => {
  test.slow(); // OpenCode starts (a Bun binary)
  const page = app.page;
  // Signed out: its model is Anthropic's and no key is anywhere (its env var renamed).
  const { command, workspace } = launcher({
    model: 'anthropic/claude-sonnet-4-5', small_model: 'anthropic/claude-sonnet-4-5', enabled_providers: ['anthropic'],
    provider: { anthropic: { env: ['TALARIA_TEST_NO_SUCH_KEY'], options: { baseURL: 'http://127.0.0.1:9/v1' } } },
  });
  await chatOn(app, provider.url, 'OpenCode (signed out)', command, workspace);
  await app.send('hello');
  const banner = page.getByRole('alert').filter({ hasText: 'needs you to sign in' });
  await expect(banner).toBeVisible({ timeout: AGENT_WAIT_MS });
  // Its advice is to sign in to the agent, not the API-key advice of a provider.
  await expect(banner).toContainText('Sign in to the agent');
  await expect(banner).not.toContainText('API key');
  await banner.getByRole('button', { name: 'Sign in…' }).click();
  const card = page.locator('[data-acp-signin]');
  await expect(card.getByRole('button', { name: 'Login with opencode' })).toBeVisible({ timeout: AGENT_WAIT_MS });
  await expect(card).toContainText('Run `opencode auth login` in the terminal');
  await card.getByRole('button', { name: 'Login with opencode' }).click();
  // OpenCode accepts (its method means "run opencode auth login"); the card closes and
  // the message is answered again: still no key, so the agent asks again.
  await expect(card).toHaveCount(0);
  await expect(page.getByRole('alert').filter({ hasText: 'needs you to sign in' })).toBeVisible({ timeout: AGENT_WAIT_MS });
  await expect(app.rows('user')).toHaveCount(1);
});

test("an agent's earlier session opens from Settings as a chat that goes on with it", async ({ app, provider }) => {
  test.slow(); // OpenCode starts (a Bun binary)
  const page = app.page;
  const model = { name: 'Scripted model', limit: { context: 131072, output: 8192 } };
  const { command, workspace } = launcher({
    model: 'talaria/scripted-model', small_model: 'aux/scripted-model', enabled_providers: ['talaria', 'aux'],
    provider: {
      talaria: { npm: '@ai-sdk/openai-compatible', name: 'Scripted', options: { baseURL: provider.url, apiKey: 'no-key-required' }, models: { 'scripted-model': model } },
      aux: { npm: '@ai-sdk/openai-compatible', name: 'Aux', options: { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'none' }, models: { 'scripted-model': model } },
    },
  });
  const name = 'OpenCode (sessions)';
  const rt = await chatOn(app, provider.url, name, command, workspace);
  await provider.script(text('First answer.'));
  await app.send('the first question');
  await expect(app.assistant().last()).toContainText('First answer.', { timeout: AGENT_WAIT_MS });
  // The chat goes; the agent keeps its session.
  const sessions = await app.call<{ id: string; runtime: string }[]>('ListSessions');
  const chat = sessions.find((s) => s.runtime === rt)!;
  await app.call('DeleteSession', chat.id);

  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const agents = page.locator('[data-section="acp-agents"]');
  await agents.locator('li', { hasText: name }).getByRole('button', { name: 'Sessions' }).click();
  const dialog = page.getByRole('dialog', { name: `${name} sessions` });
  await expect(dialog.locator('[data-acp-session-list] li')).toHaveCount(1, { timeout: AGENT_WAIT_MS });
  await expect(dialog).toContainText(workspace);
  await expect(dialog.locator('[data-acp-signout]')).toHaveCount(0); // OpenCode offers no logout
  await dialog.getByRole('button', { name: 'Open as a chat' }).click();
  await expect(dialog).toBeHidden();
  await expect(app.assistant().first()).toContainText("OpenCode (sessions)'s own history");
  await expect(page.getByLabel('Runtime of this chat')).toHaveValue(rt);

  // The next message goes on in the agent's session: the model gets the earlier turn.
  await provider.script(text('Second answer.'));
  await app.send('the second question');
  await expect(app.assistant().last()).toContainText('Second answer.', { timeout: AGENT_WAIT_MS });
  const reqs = await provider.streams();
  expect(JSON.stringify(reqs[reqs.length - 1])).toContain('the first question');

  // Deleting the continued chat removes it from Talaria only: the dialog says the agent
  // keeps its history, and the agent lists the session again, with no chat bound.
  const item = page.locator('[data-session][aria-current="page"]');
  await item.hover();
  await item.locator('xpath=ancestor::div[contains(@class, "row")][1]').getByRole('button', { name: /^Actions for / }).click();
  await page.getByRole('menu').getByRole('menuitem', { name: 'Delete…' }).click();
  const confirm = page.getByRole('dialog', { name: 'Delete this conversation?' });
  await expect(confirm).toContainText(`Its history stays in ${name}: Talaria does not delete the session there.`);
  await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
  await expect(confirm).toBeHidden();
  await expect(page.locator('[data-session]', { hasText: 'the first question' })).toHaveCount(0);
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  await agents.locator('li', { hasText: name }).getByRole('button', { name: 'Sessions' }).click();
  await expect(dialog.locator('[data-acp-session-list] li')).toHaveCount(1, { timeout: AGENT_WAIT_MS });
  await expect(dialog.getByRole('button', { name: 'Open as a chat' })).toBeVisible();
});
