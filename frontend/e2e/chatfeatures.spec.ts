// The chat features of issue 12 in the real window: the message actions (Copy as
// Markdown through the system clipboard, Copy code, Edit and resend keeping the old
// branch as a fork, Retry with the same or another model, the turn's cost), the keyboard
// shortcuts and their sheet, files by drag and drop and by paste reaching the model, the
// context meter, Summarise and continue with its marker, Regenerate title, Jump to
// latest. Each new piece of UI is photographed in light and dark into
// build/window-test/screenshots/ (the ones in docs/screenshots/ are copies of these).
import type { Locator, Page } from '@playwright/test';
import { expect, test, text, type App, type Turn } from './fixtures';

const shots = `${process.env.WINDOW_TEST_OUT ?? '../build/window-test'}/screenshots`;

/**
 * Photographs `target` (or the window; several locators: the box around them all, with
 * a margin) in the light and the dark scheme.
 */
async function shoot(page: Page, name: string, target?: Locator | Locator[]): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    const path = `${shots}/chat-${name}-${scheme}.png`;
    if (Array.isArray(target)) {
      const boxes = (await Promise.all(target.map((t) => t.boundingBox()))).filter((b) => b !== null);
      const x = Math.max(0, Math.min(...boxes.map((b) => b.x)) - 8);
      const y = Math.max(0, Math.min(...boxes.map((b) => b.y)) - 8);
      const right = Math.max(...boxes.map((b) => b.x + b.width)) + 8;
      const bottom = Math.max(...boxes.map((b) => b.y + b.height)) + 8;
      await page.screenshot({ path, animations: 'disabled', clip: { x, y, width: right - x, height: bottom - y } });
    } else if (target) await target.screenshot({ path, animations: 'disabled' });
    else await page.screenshot({ path, animations: 'disabled' });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/** The system clipboard's text, read through the Wails runtime (the Go side's clipboard). */
function clipboard(app: App): Promise<string> {
  return app.page.evaluate(async () => {
    const w = window as unknown as { runtime: { ClipboardGetText(): Promise<string> } };
    return w.runtime.ClipboardGetText();
  });
}

/** A turn that streams `answer` and reports usage with an OpenRouter-style cost (USD). */
function priced(answer: string, prompt: number, completion: number, cost: number): Turn {
  const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion, cost };
  return {
    chunks: [
      { text: answer },
      { raw: `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'scripted-model', choices: [], usage })}\n\n` },
    ],
  };
}

/** The chat open in the window (its id, from the backend). */
async function openChat(app: App): Promise<{ id: string; title: string; forked_from: string }> {
  const all = await app.call<{ id: string; title: string; forked_from: string; updated_at: number }[]>('ListSessions');
  const active = await app.page.evaluate(() => document.querySelector('[aria-current="page"][data-session]')?.getAttribute('data-session') ?? '');
  return all.find((s) => s.id === active) ?? all.sort((a, b) => b.updated_at - a.updated_at)[0];
}

/** Waits until the open chat has its automatic title (so the next aux answer is ours). */
async function titled(app: App): Promise<void> {
  await expect.poll(async () => (await openChat(app)).title).not.toBe('');
}

/** The last user or assistant row, hovered so its actions show. */
async function hovered(app: App, role: 'user' | 'assistant'): Promise<Locator> {
  const row = app.rows(role).last();
  await row.hover();
  return row;
}

/** The title the scripted provider gives each test's first chat (title calls are aux). */
const TITLE = 'Chat features test';

test.beforeEach(async ({ provider }) => {
  await provider.aux(text(TITLE));
});

const ANSWER = 'Use **ls**:\n\n```sh\nls -t photos/\n```\n\nThat sorts by date.';

test('Copy puts the raw Markdown on the clipboard; Copy code copies the code alone', async ({ app, provider }) => {
  await provider.script(text(ANSWER));
  await app.newChat();
  await app.send('How do I sort photos by date?');
  await expect(app.assistant().last()).toContainText('That sorts by date.');

  const row = await hovered(app, 'assistant');
  await row.getByRole('button', { name: 'Copy', exact: true }).click();
  await expect(row.getByRole('button', { name: 'Copied' })).toBeVisible();
  await expect.poll(() => clipboard(app)).toBe(ANSWER);
  await shoot(app.page, 'message-actions', row);

  const block = row.locator('.code-block');
  await block.hover();
  await block.getByRole('button', { name: 'Copy code' }).click();
  await expect.poll(() => clipboard(app)).toBe('ls -t photos/\n');
  await shoot(app.page, 'copy-code', block);

  // A message of yours copies as you wrote it.
  const mine = await hovered(app, 'user');
  await mine.getByRole('button', { name: 'Copy', exact: true }).click();
  await expect.poll(() => clipboard(app)).toBe('How do I sort photos by date?');
});

test('Edit resends the message in place and keeps the conversation before it as a fork', async ({ app, provider }) => {
  await provider.script(text('Paris.'), text('Rome.'));
  await app.newChat();
  await app.send('Capital of France?');
  await expect(app.assistant().last()).toContainText('Paris.');
  const before = await openChat(app);

  const row = await hovered(app, 'user');
  await row.getByRole('button', { name: 'Edit' }).click();
  const box = row.getByLabel('Edit your message');
  await expect(box).toBeFocused();
  await expect(box).toHaveValue('Capital of France?');
  await box.fill('Capital of Italy?');
  await shoot(app.page, 'edit-message', row);
  await box.press('Enter');

  await expect(app.assistant().last()).toContainText('Rome.');
  await expect(app.rows('user')).toHaveCount(1);
  await expect(app.rows('user').last()).toContainText('Capital of Italy?');
  await expect(app.page.getByText('Paris.')).toHaveCount(0);
  const streams = await provider.streams();
  expect(streams).toHaveLength(2);
  expect(streams[1].messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Capital of Italy?']);

  // The old branch is a chat of its own, forked from this one, with the old answer.
  const all = await app.call<{ id: string; forked_from: string }[]>('ListSessions');
  const fork = all.find((s) => s.forked_from === before.id || (s.id !== before.id && s.forked_from !== '' && s.forked_from === before.forked_from));
  expect(fork, 'a fork of the chat keeps the old branch').toBeTruthy();
  const old = await app.call<{ messages: { role: string; content: string }[] }>('GetSession', fork!.id);
  expect(old.messages.map((m) => m.content)).toEqual(['Capital of France?', 'Paris.']);
});

test('Retry answers again with the same model, or with another from the provider\'s list', async ({ app, provider }) => {
  await provider.models('scripted-model', 'bigger-model');
  await app.page.reload();
  await expect(app.composer).toBeVisible();
  await provider.script(text('First try.'), text('Second try.'), text('Third try.'));
  await app.newChat();
  await app.send('Write a haiku');
  await expect(app.assistant().last()).toContainText('First try.');

  let row = await hovered(app, 'assistant');
  await row.getByRole('button', { name: 'Retry' }).click();
  await expect(app.assistant().last()).toContainText('Second try.');
  await expect(app.page.getByText('First try.')).toHaveCount(0);

  row = await hovered(app, 'assistant');
  await row.getByTitle('Answer again with another model').click();
  const menu = row.getByRole('menu', { name: 'Answer again with' });
  await expect(menu.getByRole('menuitem', { name: 'bigger-model' })).toBeVisible();
  await shoot(app.page, 'retry-model', [row, menu]);
  await menu.getByRole('menuitem', { name: 'bigger-model' }).click();
  await expect(app.assistant().last()).toContainText('Third try.');

  const streams = await provider.streams();
  expect(streams.map((s) => s.model)).toEqual(['scripted-model', 'scripted-model', 'bigger-model']);
  for (const s of streams) expect(s.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Write a haiku']);
  // Only the last answer offers Retry.
  await expect(app.assistant()).toHaveCount(1);
});

test('the turn\'s reported cost stands under its answer and in the header; the context meter shows used / window', async ({ app, provider }) => {
  await provider.script(priced('A priced answer.', 1000, 24, 0.0123));
  await app.newChat();
  await app.send('What does this cost?');
  await expect(app.assistant().last()).toContainText('A priced answer.');
  const row = app.assistant().last();
  await expect(row.locator('[data-turn-cost]')).toHaveText('$0.0123');
  await expect(app.page.locator('[data-chat-cost]')).toHaveText('$0.0123');

  // The window of this model, set in the chat's settings (the scripted provider
  // publishes none for it): the meter shows used / window.
  try {
    await app.page.getByRole('button', { name: 'Options of this chat' }).click();
    const pop = app.page.locator('[data-chat-settings]');
    await expect(pop).toBeVisible();
    await pop.locator('[data-field="context_length"]').fill('4096');
    await shoot(app.page, 'chat-settings', pop);
    await pop.getByRole('button', { name: 'Save' }).click();
    await expect(pop).toBeHidden();
    const gauge = app.page.locator('[data-context-meter]').getByRole('button');
    await expect(gauge).toHaveAttribute('aria-label', 'Context: 1k / 4.1k tokens (25%)');
    await gauge.click();
    const meter = app.page.locator('[data-context-meter]');
    await expect(meter.getByRole('dialog', { name: 'Context' })).toContainText('as set for this model');
    await shoot(app.page, 'context-meter', [meter, meter.getByRole('dialog', { name: 'Context' })]);
  } finally {
    await app.call('SetModelSettings', 'scripted-model', {});
  }
});

test('Summarise and continue: the summary marker opens to the summary; the model gets the summary and the recent turns', async ({ app, provider }) => {
  await provider.script(text('One.'), text('Two.'), text('Three.'), text('Four.'));
  await app.newChat();
  for (const [q, a] of [['Say one', 'One.'], ['Say two', 'Two.'], ['Say three', 'Three.']]) {
    await app.send(q);
    await expect(app.assistant().last()).toContainText(a);
  }
  await titled(app);
  await provider.aux(text('The user counted to three.'));
  await app.page.getByRole('button', { name: 'More actions for this chat' }).click();
  await app.page.getByRole('menuitem', { name: 'Summarise and continue' }).click();
  const marker = app.page.locator('[data-summary]');
  await expect(marker).toBeVisible();
  const toggle = marker.getByRole('button', { name: /Earlier messages summarised/ });
  await toggle.click();
  await expect(marker).toContainText('The user counted to three.');
  await shoot(app.page, 'summary-marker', marker);
  // Every row is still in the transcript.
  await expect(app.page.getByText('One.', { exact: true })).toBeVisible();

  await app.send('Say four');
  await expect(app.assistant().last()).toContainText('Four.');
  const last = (await provider.streams()).at(-1)!;
  expect(JSON.stringify(last.messages)).toContain('The user counted to three.');
  expect(last.messages.at(-1)).toMatchObject({ role: 'user', content: 'Say four' });
});

test('a conversation too long for the model offers Summarise and continue, which sends the message again', async ({ app, provider }) => {
  await provider.script(text('Hello.'));
  await app.newChat();
  await app.send('Hi');
  await expect(app.assistant().last()).toContainText('Hello.');
  await titled(app);
  await provider.script(
    { status: 400, body: JSON.stringify({ error: { message: "This model's maximum context length is 8192 tokens.", type: 'invalid_request_error', code: 'context_length_exceeded' } }) },
    text('Answered after the summary.'),
  );
  await provider.aux(text('The user said hi.'));
  await app.send('A very long question');
  const banner = app.page.getByRole('alert').filter({ hasText: 'Conversation too long for the model' });
  await expect(banner).toBeVisible();
  await shoot(app.page, 'context-too-long', banner);
  await banner.getByRole('button', { name: 'Summarise and continue' }).click();
  await expect(app.assistant().last()).toContainText('Answered after the summary.');
  await expect(banner).toBeHidden();
  const last = (await provider.streams()).at(-1)!;
  expect(JSON.stringify(last.messages)).toContain('The user said hi.');
  expect(last.messages.at(-1)).toMatchObject({ role: 'user', content: 'A very long question' });
});

test('keyboard shortcuts: the sheet, new chat, search, settings, next and previous chat, stop', async ({ app, provider }) => {
  const page = app.page;
  await app.newChat();
  await app.send('first chat');
  await expect(app.assistant().last()).toContainText('You said: first chat');
  await page.locator('.scroller').first().click();

  await page.keyboard.press('?');
  const sheet = page.locator('[data-shortcut-sheet]');
  await expect(sheet).toBeVisible();
  await expect(sheet).toContainText('New chat');
  await expect(sheet).toContainText('Ctrl+N');
  await shoot(page, 'shortcut-sheet', sheet);
  await page.keyboard.press('Escape');
  await expect(sheet).toBeHidden();

  const count = (await app.call<unknown[]>('ListSessions')).length;
  await provider.aux(text('Second chat'));
  await page.keyboard.press('Control+n');
  await expect(app.composer).toBeFocused();
  await app.send('second chat');
  await expect(app.assistant().last()).toContainText('You said: second chat');
  await expect.poll(async () => (await app.call<unknown[]>('ListSessions')).length).toBe(count + 1);

  await page.keyboard.press('Control+Tab');
  await expect(app.rows('user').last()).toContainText('first chat');
  await page.keyboard.press('Control+Shift+Tab');
  await expect(app.rows('user').last()).toContainText('second chat');

  await page.keyboard.press('Control+k');
  await expect(page.getByRole('searchbox', { name: 'Search conversations' })).toBeFocused();

  await page.keyboard.press('Control+,');
  const settings = page.locator('dialog[aria-labelledby="settings-title"]');
  await expect(settings).toBeVisible();
  await page.keyboard.press('Escape');
  await expect(settings).toBeHidden();

  // Stop (Escape) while an answer streams.
  await provider.script({ chunks: [{ text: 'Partial answer' }, { text: ' never sent', gate: 'g-stop' }] });
  try {
    await app.composer.click();
    await app.send('stream slowly');
    await expect(page.locator('.chat').getByText('Partial answer')).toBeVisible();
    await page.keyboard.press('Escape');
    await expect(page.locator('.chat').getByText('Stopped')).toBeVisible();
    await expect(page.locator('.chat').getByText('Partial answer')).toBeVisible();
  } finally {
    await provider.release('g-stop');
  }
});

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

/** A DataTransfer of files made in the page (what a drop or a paste carries). */
async function transfer(page: Page, files: { name: string; type: string; base64: string }[]) {
  return page.evaluateHandle((list) => {
    const dt = new DataTransfer();
    for (const f of list) {
      const bytes = Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0));
      dt.items.add(new File([bytes], f.name, { type: f.type }));
    }
    return dt;
  }, files);
}

test('files dropped on the chat and pasted into the composer reach the model: the image byte-exact, the text inline', async ({ app, provider }) => {
  const page = app.page;
  await app.newChat();
  await app.send('start');
  await expect(app.assistant().last()).toContainText('You said: start');

  // Drop an image on the chat.
  const dropped = await transfer(page, [{ name: 'dot.png', type: 'image/png', base64: PNG.toString('base64') }]);
  await page.dispatchEvent('main.main', 'dragenter', { dataTransfer: dropped });
  await expect(page.locator('[data-drop-overlay]')).toBeVisible();
  await page.dispatchEvent('main.main', 'dragover', { dataTransfer: dropped });
  await page.dispatchEvent('main.main', 'drop', { dataTransfer: dropped });
  const staged = page.getByRole('list', { name: 'Files to send' });
  await expect(staged).toContainText('dot.png');

  // Paste a text file into the composer.
  const notes = 'meeting at noon\nbring the photos\n';
  const pasted = await transfer(page, [{ name: 'notes.txt', type: 'text/plain', base64: Buffer.from(notes).toString('base64') }]);
  await app.composer.focus();
  await app.composer.evaluate((el, dt) => {
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: dt as DataTransfer, bubbles: true, cancelable: true }));
  }, pasted);
  await expect(staged).toContainText('notes.txt');
  await shoot(page, 'attachments-staged', [staged, page.locator('form.composer')]);

  await app.send('What are these?');
  await expect(app.assistant().last()).toContainText('You said');
  const user = app.rows('user').last();
  await expect(user).toContainText('dot.png');
  await expect(user).toContainText('notes.txt');
  await shoot(page, 'attachments-sent', user);

  const req = (await provider.streams()).at(-1)!;
  const body = req.body as { messages: { role: string; content: unknown }[] };
  const last = body.messages.at(-1)!;
  expect(last.role).toBe('user');
  const parts = last.content as { type: string; text?: string; image_url?: { url: string } }[];
  expect(Array.isArray(parts)).toBe(true);
  const image = parts.find((p) => p.type === 'image_url');
  expect(image?.image_url?.url).toBe(`data:image/png;base64,${PNG.toString('base64')}`);
  const texts = parts.filter((p) => p.type === 'text').map((p) => p.text).join('\n');
  expect(texts).toContain('What are these?');
  expect(texts).toContain('name="notes.txt"');
  expect(texts).toContain(notes.trim());
  // The earlier message went as plain text, without the files.
  expect(JSON.stringify(body.messages.slice(0, -1))).not.toContain('image_url');
});

test('Regenerate title from the session menu asks the model for a new title', async ({ app, provider }) => {
  await app.newChat();
  await app.send('sort my photos');
  await expect(app.assistant().last()).toContainText('You said');
  await titled(app);
  await provider.aux(text('Sorting holiday photos by date'));
  const item = app.page.locator('[data-session][aria-current="page"]');
  await expect(item).toHaveAccessibleName(TITLE);
  await item.hover();
  await item.locator('xpath=ancestor::div[contains(@class, "row")][1]').getByRole('button', { name: `Actions for ${TITLE}` }).click();
  const menu = app.page.getByRole('menu');
  await shoot(app.page, 'session-menu', menu);
  await menu.getByRole('menuitem', { name: 'Regenerate title' }).click();
  await expect(app.page.getByRole('button', { name: 'Sorting holiday photos by date', exact: true }).first()).toBeVisible();
});

test('Jump to latest appears when scrolled up and goes back to the newest row', async ({ app, provider }) => {
  const long = Array.from({ length: 60 }, (_, i) => `Line ${i + 1} of a long answer.`).join('\n\n');
  await provider.script(text(long), text(long));
  await app.newChat();
  await app.send('long one');
  await expect(app.assistant().last()).toContainText('Line 60');
  await app.send('long two');
  await expect(app.assistant().last()).toContainText('Line 60');
  const scroller = app.page.locator('.scroller').first();
  const jump = app.page.getByRole('button', { name: /Jump to latest/ });
  // Scroll up as a user does (the wheel), again if the list was still settling at the end
  // (it may scroll back to the newest row once): until the button is offered.
  await scroller.hover();
  await expect
    .poll(async () => {
      await app.page.mouse.wheel(0, -4000);
      return jump.isVisible();
    })
    .toBe(true);
  await shoot(app.page, 'jump-to-latest', app.page.locator('.chat').first());
  await jump.click();
  await expect(jump).toBeHidden();
  await expect
    .poll(() => scroller.evaluate((el) => el.scrollHeight - el.scrollTop - el.clientHeight))
    .toBeLessThan(4);
});
