// Importing a Talaria web folder in the real window: the folder (built here in the
// shapes of the web product's session store, with a damaged file and a copy of a
// session) is imported by the real backend; the Import dialog counts and reports, the
// imported chat opens with its tool call, and search finds its text. Only the native
// folder dialog is replaced (Playwright cannot drive GTK's): the page's binding for it
// answers the folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from './fixtures';

function webFolder(word: string): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'talaria-window-web-'));
  const dir = path.join(root, 'sessions');
  fs.mkdirSync(dir);
  const sid = `w-${word}`;
  const session = {
    session_id: sid, title: `Census of the ${word}s`, created_at: 1_700_000_000, updated_at: 1_700_000_100, pinned: false,
    messages: [
      { role: 'user', content: `count the ${word}s in the meadow`, timestamp: 1_700_000_001 },
      { role: 'assistant', content: '', timestamp: 1_700_000_002,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'terminal', arguments: JSON.stringify({ command: 'ls meadow' }) } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'terminal', content: `${word}-1 ${word}-2 ${word}-3`, timestamp: 1_700_000_003 },
      { role: 'assistant', content: `Three ${word}s graze in the meadow.`, timestamp: 1_700_000_004 },
    ],
  };
  fs.writeFileSync(path.join(dir, `${sid}.json`), JSON.stringify(session));
  fs.writeFileSync(path.join(dir, `${sid} (1).json`), JSON.stringify(session));
  fs.writeFileSync(path.join(dir, 'broken.json'), '{"session_id": "broken", "messages": [');
  fs.writeFileSync(path.join(dir, '_index.json'), JSON.stringify([{ session_id: sid, updated_at: 1_700_000_100 }]));
  return root;
}

test('a Talaria web folder is imported with a count and a report, and its chat opens and is found', async ({ app }) => {
  test.setTimeout(120_000);
  const page = app.page;
  // A word of its own, so search finds this run's chat only.
  const word = `gnu${Date.now().toString(36)}`;
  const folder = webFolder(word);
  await page.evaluate((dir) => {
    const w = window as unknown as { go: { app: { Imports: { ChooseWebFolder: () => Promise<string> } } } };
    w.go.app.Imports.ChooseWebFolder = async () => dir;
  }, folder);

  await page.getByRole('button', { name: 'Import web…' }).click();
  const dialog = page.locator('dialog.import-dialog');
  await expect(dialog.locator('[data-import-count]')).toHaveText('Imported 1 · skipped 1 · failed 1 of 3', { timeout: 60_000 });
  await expect(dialog.locator('[data-import-failed]')).toContainText('broken.json');
  await expect(dialog.locator('[data-import-skipped]')).toContainText(`a duplicate of w-${word}.json`);
  await dialog.getByRole('button', { name: 'Open the first imported chat' }).click();
  await expect(page.getByRole('heading', { name: `Census of the ${word}s` })).toBeVisible();
  await expect(app.rows('assistant').last()).toContainText(`Three ${word}s graze in the meadow.`);
  await expect(page.locator('main')).toContainText('terminal');

  // A second import adds nothing.
  await page.getByRole('button', { name: 'Import web…' }).click();
  await expect(dialog.locator('[data-import-count]')).toHaveText('Imported 0 · skipped 2 · failed 1 of 3', { timeout: 60_000 });
  await dialog.getByRole('button', { name: 'Close' }).click();
  const list = (await app.call('ListSessions')) as { title: string }[];
  expect(list.filter((s) => s.title === `Census of the ${word}s`)).toHaveLength(1);

  // Search finds the imported text at once, the tool's output too.
  const hits = (await app.call('SearchSessions', `${word}-2`, 10)) as { session_id: string }[];
  expect(hits.length).toBe(1);
});
