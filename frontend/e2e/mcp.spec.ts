// MCP servers in the real window: a pasted mcpServers configuration becomes a server
// whose Test lists its tools, prompts and resources; the agent's calls of its tools ask
// first (annotations on the card), deny never runs the tool, the answer's image shows
// on the tool card and stays after the turn is saved and the window reloaded; the
// server's prompts are in the composer's slash list. The server is the real
// @modelcontextprotocol/server-everything installed by scripts/mcp-setup.sh, run by the
// real sidecar in the chat's sandbox.
import path from 'node:path';
import { expect, test, text, toolCalls, type App } from './fixtures';

const everything = path.resolve(process.cwd(), '../.cache/mcp-servers/node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const config = JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } } }, null, 2);

async function removeServers(app: App) {
  const list = await app.call<{ name: string }[]>('ListMCPServers');
  for (const s of list ?? []) await app.call('DeleteMCPServer', s.name);
}

test.beforeEach(async ({ app }) => removeServers(app));
test.afterEach(async ({ app }) => removeServers(app));

async function importServer(app: App) {
  const page = app.page;
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Import JSON…' }).click();
  const dlg = page.locator('dialog.mcp-import');
  await dlg.getByLabel('MCP configuration (JSON)').fill(config);
  await dlg.getByRole('button', { name: 'Import' }).click();
  await expect(dlg.getByRole('status')).toContainText('Added: everything');
  await dlg.getByRole('button', { name: 'Done' }).click();
}

test('a pasted mcpServers config becomes a server whose Test lists its tools, prompts and resources', async ({ app }) => {
  await importServer(app);
  const row = app.page.locator('[data-mcp-server="everything"]');
  await expect(row).toContainText('local');
  await row.getByRole('button', { name: 'Test' }).click();
  const report = row.locator('[data-mcp-report="everything"]');
  await expect(report).toContainText('Connected');
  await expect(report).toContainText('get-tiny-image');
  await expect(report).toContainText(/\d+ prompts?/);
  await expect(report).toContainText(/\d+ resources?/);
  await expect(report.getByText('read-only').first()).toBeVisible();
  const saved = await app.call<{ name: string; command: string; enabled: boolean }[]>('ListMCPServers');
  expect(saved).toMatchObject([{ name: 'everything', command: process.execPath, enabled: true }]);
});

test('an MCP tool call asks first, shows its image, and keeps it after a reload', async ({ app, provider }) => {
  await importServer(app);
  await app.page.getByRole('button', { name: 'Cancel' }).click(); // close Settings
  await provider.script(
    toolCalls({ id: 'c1', name: 'everything__get-tiny-image', args: {} }),
    text('That is the MCP logo.'),
  );
  await app.newChat();
  await app.send('show me the MCP logo');
  const card = app.page.locator('[data-card="approval"]');
  await expect(card.getByRole('heading', { name: 'Use this MCP tool?' })).toBeVisible();
  await expect(card.locator('[data-mcp-approval="everything"]')).toContainText('get-tiny-image');
  await expect(card.getByText('read-only')).toBeVisible();
  await card.getByRole('button', { name: 'Allow once' }).click();
  await expect(app.assistant().last()).toContainText('That is the MCP logo.');
  const tool = app.page.locator('.tool[data-mcp-server="everything"]').last();
  await expect(tool.locator('.server')).toHaveText('everything');
  await expect(tool.locator('img')).toHaveAttribute('src', /^data:image\/png;base64,iVBORw0KGgo/);
  // The model read a description of the image, not its bytes.
  const streams = await provider.streams();
  const toolRow = streams[1].messages.find((m) => m.role === 'tool');
  expect(toolRow?.content).toContain('[image image/png');
  // Saved and reloaded: the card shows what the server sent again.
  await app.page.reload();
  await expect(app.page.locator('.tool[data-mcp-server="everything"] img').last()).toHaveAttribute('src', /^data:image\/png;base64,/);
});

test('a denied MCP tool never runs and the model is told', async ({ app, provider }) => {
  await importServer(app);
  await app.page.getByRole('button', { name: 'Cancel' }).click();
  await provider.script(toolCalls({ id: 'd1', name: 'everything__echo', args: { message: 'should not echo' } }), text('Understood.'));
  await app.newChat();
  await app.send('echo something');
  const card = app.page.locator('[data-card="approval"]');
  await card.getByRole('button', { name: 'Deny' }).click();
  await expect(app.assistant().last()).toContainText('Understood.');
  const tool = app.page.locator('.tool[data-mcp-server="everything"]').last();
  await expect(tool).toHaveClass(/error/);
  const streams = await provider.streams();
  const toolRow = streams[1].messages.find((m) => m.role === 'tool');
  expect(toolRow?.content).toContain('denied');
  expect(toolRow?.content).not.toContain('Echo: should not echo');
});

test("the server's prompts are in the composer's slash list", async ({ app }) => {
  await importServer(app);
  await app.page.getByRole('button', { name: 'Cancel' }).click();
  await app.newChat();
  await app.composer.fill('/simple');
  const option = app.page.getByRole('option', { name: /\/everything:simple-prompt/ });
  await expect(option).toBeVisible();
  await option.click();
  await expect(app.composer).not.toHaveValue('/simple');
  await expect(app.composer).not.toHaveValue('');
});

test("an MCP server's sampling request asks first, then the chat's model answers the server", async ({ app, provider }) => {
  await importServer(app);
  await app.page.getByRole('button', { name: 'Cancel' }).click();
  await provider.script(
    toolCalls({ id: 's1', name: 'everything__trigger-sampling-request', args: { prompt: 'write a haiku about roots', maxTokens: 60 } }),
    text('roots run deep'), // the sampling
    text('The server got its haiku.'),
  );
  await app.newChat();
  await app.send('ask the server to sample');
  const card = app.page.locator('[data-card="approval"]');
  await expect(card.getByRole('heading', { name: 'Use this MCP tool?' })).toBeVisible();
  await card.getByRole('button', { name: 'Allow once' }).click();
  // The sampling asks on its own, with the server's prompt; no per-server answer.
  await expect(card.getByRole('heading', { name: "Let this MCP server use the chat's model?" })).toBeVisible();
  await expect(card.getByLabel('Arguments')).toContainText('write a haiku about roots');
  await expect(card.getByRole('button', { name: 'Always allow this server' })).toHaveCount(0);
  await card.getByRole('button', { name: 'Allow once' }).click();
  await expect(app.assistant().last()).toContainText('The server got its haiku.');
  const tool = app.page.locator('.tool[data-mcp-server="everything"]').last();
  await tool.locator('button[aria-expanded]').first().click();
  await expect(tool).toContainText('roots run deep');
  const streams = await provider.streams();
  expect(streams[1].messages[0]).toMatchObject({ role: 'system', content: 'You are a helpful test server.' });
  expect(streams[1].messages[1].content).toContain('write a haiku about roots');
});

test("an MCP server's elicitation is a series of question cards whose answers reach the server", async ({ app, provider }) => {
  await importServer(app);
  await app.page.getByRole('button', { name: 'Cancel' }).click();
  await provider.script(toolCalls({ id: 'e1', name: 'everything__trigger-elicitation-request', args: {} }), text('Thanks, Ada.'));
  await app.newChat();
  await app.send('fill in the form');
  await app.page.locator('[data-card="approval"]').getByRole('button', { name: 'Allow once' }).click();
  const clarify = app.page.locator('[data-card="clarify"]');
  const field = (i: number) => clarify.locator('fieldset').nth(i);
  // Required first, then by name: name, birthdate, check, email, firstLine.
  await expect(field(0).locator('legend')).toContainText('The MCP server everything asks: Please provide inputs for the following fields:');
  await expect(field(0).locator('legend')).toContainText('Your full, legal name');
  await field(0).locator('input[type="text"]').fill('Ada Lovelace');
  await field(1).locator('input[type="text"]').fill('-');
  await field(2).getByRole('radio', { name: 'Yes' }).check();
  await field(3).locator('input[type="text"]').fill('-');
  await field(4).locator('input[type="text"]').fill('-');
  await clarify.getByRole('button', { name: 'Submit' }).click();
  // homepage, integer, legacyTitledEnum, number, titledMultipleSelectEnum.
  await expect(field(1).locator('legend')).toContainText('Your favorite integer');
  await field(0).locator('input[type="text"]').fill('-');
  await field(1).locator('input[type="text"]').fill('7');
  await field(2).locator('input[type="text"]').fill('Dogs');
  await field(3).locator('input[type="text"]').fill('-');
  await field(4).getByRole('checkbox', { name: 'Salmon' }).check();
  await clarify.getByRole('button', { name: 'Submit' }).click();
  // titledSingleSelectEnum, untitledMultipleSelectEnum, untitledSingleSelectEnum.
  await expect(field(0).locator('legend')).toContainText('Choose your favorite hero');
  await field(0).getByRole('radio', { name: 'Wonder Woman' }).check();
  await field(1).locator('input[type="text"]').fill('Piano');
  await field(2).locator('input[type="text"]').fill('Ross');
  await clarify.getByRole('button', { name: 'Submit' }).click();
  await expect(app.assistant().last()).toContainText('Thanks, Ada.');
  const tool = app.page.locator('.tool[data-mcp-server="everything"]').last();
  await tool.locator('button[aria-expanded]').first().click();
  await expect(tool).toContainText('Name: Ada Lovelace');
  await expect(tool).toContainText('Favorite Integer: 7');
  const streams = await provider.streams();
  const toolRow = streams[1].messages.find((m) => m.role === 'tool');
  expect(toolRow?.content).toContain('"legacyTitledEnum": "pet-2"');
  expect(toolRow?.content).toContain('"titledSingleSelectEnum": "hero-3"');
});
