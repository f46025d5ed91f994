// An ACP agent in the real window: added in Settings (its Test answered by the agent
// itself), picked for a chat, and worked with: its permission card with exactly its
// options, the edit's diff, the todo list, the mode picker and the slash commands. The
// agent is the real OpenCode that `make setup` installs in .cache/ (scripts/
// acp-setup.sh), its model the scripted provider; only the model is scripted.
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync, chmodSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { expect, test, text, toolCalls } from './fixtures';
import { AGENT_WAIT_MS } from './wait';

const OPENCODE_VERSION = '1.18.33'; // sidecar/acp/acptest.OpenCodeVersion
const arch = process.arch === 'x64' ? 'x64' : process.arch;
const opencode = resolve(process.cwd(), '..', '.cache', `opencode-${OPENCODE_VERSION}`, 'node_modules', `opencode-linux-${arch}`, 'bin', 'opencode');

/**
 * A launcher for OpenCode with its own home, its model at the scripted provider and
 * the switches that keep it off the network (sidecar/acp/acptest.OpenCodeOffline): the
 * command a user would give in Settings.
 */
function openCodeLauncher(providerURL: string): { launcher: string; workspace: string } {
  if (!existsSync(opencode)) throw new Error(`OpenCode ${OPENCODE_VERSION} is not installed at ${opencode}: run make setup`);
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'talaria-acp-window-')));
  const home = join(dir, 'home');
  const workspace = join(dir, 'workspace');
  mkdirSync(home);
  mkdirSync(workspace);
  const model = (name: string) => ({
    name, limit: { context: 131072, output: 8192 }, attachment: true, modalities: { input: ['text', 'image'], output: ['text'] },
  });
  const config = {
    autoupdate: false, share: 'disabled', model: 'talaria/scripted-model',
    // Its title requests go nowhere (a closed port), not into the scripted answers.
    small_model: 'aux/scripted-model', enabled_providers: ['talaria', 'aux'],
    permission: { edit: 'ask', bash: 'ask' },
    provider: {
      talaria: { npm: '@ai-sdk/openai-compatible', name: 'Scripted', options: { baseURL: providerURL, apiKey: 'no-key-required' }, models: { 'scripted-model': model('Scripted model') } },
      aux: { npm: '@ai-sdk/openai-compatible', name: 'Aux', options: { baseURL: 'http://127.0.0.1:9/v1', apiKey: 'none' }, models: { 'scripted-model': model('Aux') } },
    },
  };
  writeFileSync(join(dir, 'opencode.json'), JSON.stringify(config));
  const launcher = join(dir, 'opencode-acp');
  const env = {
    HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local/share'), XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'), OPENCODE_CONFIG: join(dir, 'opencode.json'),
    OPENCODE_DISABLE_AUTOUPDATE: '1', OPENCODE_DISABLE_MODELS_FETCH: '1', OPENCODE_DISABLE_LSP_DOWNLOAD: '1', OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1', OPENCODE_DISABLE_EXTERNAL_SKILLS: '1', OPENCODE_PURE: '1', npm_config_offline: 'true', npm_config_registry: 'http://127.0.0.1:9/',
  };
  const exports = Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n');
  writeFileSync(launcher, `#!/bin/sh\n${exports}\nexec '${opencode}' "$@"\n`);
  chmodSync(launcher, 0o755);
  return { launcher, workspace };
}

test('an ACP agent added in Settings works a chat: its options on the permission card, the diff, the todo list', async ({ app, provider }) => {
  test.slow(); // OpenCode starts (a Bun binary) for the Test and for the chat
  const page = app.page;
  const { launcher, workspace } = openCodeLauncher(provider.url);
  // The chats of this test work in a folder of their own.
  await app.call('SaveSettings', { provider_name: 'scripted', base_url: provider.url, model: 'scripted-model', api_key: '', clear_api_key: false, workspace });

  // Settings: add OpenCode from its preset, with the launcher as its command, and Test it.
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const agents = page.locator('[data-section="acp-agents"]');
  await agents.getByRole('combobox', { name: 'Add an agent' }).selectOption('opencode');
  await expect(agents.getByRole('textbox', { name: 'Arguments' })).toHaveValue('acp');
  await agents.getByRole('textbox', { name: 'Name' }).fill('OpenCode (window test)');
  await agents.getByRole('textbox', { name: 'Command' }).fill(launcher);
  await agents.getByRole('button', { name: 'Test' }).click();
  await expect(agents.locator('[data-test="acp-test-ok"]')).toContainText(`OpenCode ${OPENCODE_VERSION}`, { timeout: AGENT_WAIT_MS });
  await expect(agents.locator('[data-test="acp-test-ok"]')).toContainText('resumes sessions');
  await agents.getByRole('button', { name: 'Add agent' }).click();
  await expect(agents.locator('.list .name', { hasText: 'OpenCode (window test)' })).toBeVisible();
  await page.keyboard.press('Escape');

  // A chat on it: the runtime picker of the chat header.
  await app.newChat();
  const runtimes = await app.call<{ id: string; label: string }[]>('ListRuntimes');
  const rt = runtimes.find((r) => r.label === 'OpenCode (window test)');
  expect(rt, JSON.stringify(runtimes)).toBeTruthy();
  await page.getByLabel('Runtime of this chat').selectOption(rt!.id);
  // What the agent offers: its modes (OpenCode's build and plan) and models.
  const mode = page.locator('[data-picker="mode"] select');
  await expect(mode).toHaveValue('build', { timeout: AGENT_WAIT_MS });
  await expect(page.locator('[data-picker="model"] select')).toHaveValue('talaria/scripted-model');
  // The header says what holds: OpenCode asks by its own rules (here it asks for edits
  // and commands), Talaria guards its file and terminal requests; not "every command asks".
  const policy = page.getByTestId('sandbox-policy');
  await expect(policy).toContainText('is not sandboxed · asks by its own rules');
  await expect(policy).not.toContainText('every command asks');
  await expect(page.getByTestId('self-approves')).toHaveCount(0);

  // A turn that writes a file (OpenCode asks first) and updates its todo list.
  const notes = join(workspace, 'notes.txt');
  const write = toolCalls({ id: 'w1', name: 'write', args: { filePath: notes, content: 'one\ntwo\n' } });
  write.chunks = [{ reasoning: 'The notes first.' }, { text: 'Writing the notes.' }, ...write.chunks!];
  await provider.script(
    write,
    toolCalls({ id: 't1', name: 'todowrite', args: { todos: [{ content: 'write the notes', status: 'completed', priority: 'high' }, { content: 'review them', status: 'in_progress', priority: 'low' }] } }),
    text('The notes are written.'),
  );
  await app.send('write my notes');
  const card = page.locator('[data-card="approval"]');
  await expect(card).toBeVisible({ timeout: AGENT_WAIT_MS });
  await expect(card.locator('button[data-option]')).toHaveText(['Allow once', 'Always allow', 'Reject']);
  await expect(card.getByRole('group', { name: 'Changes' })).toContainText('two');
  await card.getByRole('button', { name: 'Allow once' }).click();
  await expect(app.assistant().last()).toContainText('The notes are written.', { timeout: AGENT_WAIT_MS });
  await expect(page.getByRole('region', { name: 'Todo list' })).toContainText('1 of 2 done');
  await expect(page.locator('.tool').filter({ hasText: 'notes.txt' }).first()).toContainText('+2');
  expect(readFileSync(notes, 'utf8')).toBe('one\ntwo\n');
  // OpenCode tells its slash commands with its first answer: the composer offers them.
  await app.composer.fill('/in');
  await expect(page.getByRole('listbox', { name: "The agent's commands" })).toContainText('/init');
  await app.composer.press('Tab');
  await expect(app.composer).toHaveValue('/init ');
  await app.composer.fill('');
  if (process.env.WINDOW_TEST_OUT) await page.screenshot({ path: join(process.env.WINDOW_TEST_OUT, 'acp-opencode.png') });
});
