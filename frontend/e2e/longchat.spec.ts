// Long chats and many chats (issue 16, issue 12 item 8, issue 11): the transcript is a
// virtual list over pages read from the backend, the sidebar reaches every chat, and
// switching chats never shows the previous one's rows. (The 5,000-message figures are
// measured in the real WebKit window by `make bench`.)
import { expect, test, type App } from './fixtures';
import { AGENT_WAIT_MS } from './wait';

/** A Talaria session export (backend/store/export.go) of `rows`, titled `title`. */
function exportDoc(title: string, rows: { role: string; content: string }[], t0 = Date.now() - rows.length * 1000): string {
  return JSON.stringify({
    format: 'talaria.session',
    version: 1,
    exported_at: Date.now(),
    app_version: 'e2e',
    session: { id: 'seed', title, title_manual: true, model: '', workspace: '', created_at: t0, updated_at: t0 },
    messages: rows.map((r, i) => ({ position: i, role: r.role, content: r.content, created_at: t0 + i * 1000 })),
  });
}

function chatRows(n: number, tag: string, special: Record<number, string> = {}): { role: string; content: string }[] {
  return Array.from({ length: n }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content:
      special[i] ?? (i % 2 ? `${tag} row ${i} **ok**` : `${tag} row ${i}?`),
  }));
}

/**
 * Stores a chat of n messages through the real import and returns its id; row i says
 * `${tag} row ${i}`. (wails dev's websocket takes one frame per call, so a seeded chat
 * stays under about 60 KB: 600 short rows, ten times the first page the window reads.)
 */
async function seedChat(app: App, title: string, n: number, tag: string, special: Record<number, string> = {}): Promise<string> {
  const s = await app.call<{ id: string }>('ImportSessionData', exportDoc(title, chatRows(n, tag, special)));
  return s.id;
}

/** Calls a bound method once per argument list, 25 calls at a time. */
async function callMany<T>(app: App, method: string, args: unknown[][]): Promise<T[]> {
  return app.page.evaluate(
    async ([m, all]) => {
      const w = window as unknown as { go: { app: Record<string, Record<string, (...x: unknown[]) => Promise<unknown>>> } };
      const svc = Object.values(w.go.app).find((s) => typeof s[m] === 'function');
      if (!svc) throw new Error(`no bound service has ${m}`);
      const out: unknown[] = [];
      for (let i = 0; i < all.length; i += 25) out.push(...(await Promise.all(all.slice(i, i + 25).map((a) => svc[m](...a)))));
      return out as never;
    },
    [method, args] as const,
  ) as Promise<T[]>;
}

async function openFromSidebar(app: App, title: string): Promise<void> {
  await app.page.getByRole('button', { name: title, exact: true }).first().click();
}

test('a long chat opens at its end with only a screenful in the DOM, and scrolls back to its start', async ({ app }) => {
  await app.newChat();
  const id = await seedChat(app, 'Six hundred rows', 600, 'long');
  await app.page.reload();
  await expect(app.composer).toBeVisible();
  await openFromSidebar(app, 'Six hundred rows');
  const chat = app.page.locator('.scroller');
  await expect(chat).toContainText('long row 599');
  // Virtual: far fewer rows in the DOM than the chat has.
  const rows = await chat.locator('[data-position]').count();
  expect(rows).toBeGreaterThan(0);
  expect(rows).toBeLessThan(120);
  // Scrolled up: older pages come in (each scroll to the top asks for the page above),
  // "Jump to latest" is offered.
  await expect
    .poll(
      async () => {
        await chat.evaluate((el) => (el.scrollTop = 0));
        // Visible, not only mounted: a page put above keeps the rows in view where they
        // were (the list keeps its place), so the first row may mount above the view
        // and go again before the next scroll to the top.
        return chat.getByText('long row 0?').isVisible();
      },
      { intervals: [60], timeout: AGENT_WAIT_MS },
    )
    .toBe(true);
  expect(await chat.locator('[data-position]').count()).toBeLessThan(300);
  const latest = app.page.getByRole('button', { name: /jump to latest/i });
  await expect(latest).toBeVisible();
  await latest.click();
  await expect(chat.getByText('long row 599', { exact: false })).toBeVisible();
  await app.call('DeleteSession', id);
});

test('a search hit deep in a long chat opens at its message', async ({ app }) => {
  await app.newChat();
  const id2 = await seedChat(app, 'Searchable long chat', 600, 'deep', { 240: 'the zanzibarquux answer is here' });
  await app.page.reload();
  await app.page.getByRole('searchbox', { name: 'Search conversations' }).fill('zanzibarquux');
  await app.page.locator('[data-hit]').first().click();
  const row = app.page.locator('[data-position="240"]');
  await expect(row).toBeVisible();
  await expect(row).toContainText('zanzibarquux');
  await expect(row).toHaveClass(/highlighted/);
  await app.call('DeleteSession', id2);
});

test('switching between large chats never shows the previous one', async ({ app }) => {
  await app.newChat();
  const a = await seedChat(app, 'Large chat A', 600, 'alpha');
  const b = await seedChat(app, 'Large chat B', 600, 'bravo');
  await app.page.reload();
  await openFromSidebar(app, 'Large chat A');
  await expect(app.page.locator('.scroller')).toContainText('alpha row 599');
  // Click B and look at every frame until B's rows are shown: none may show A's rows.
  // (A frame count, not a clock: a slow machine draws B later and is looked at longer.)
  const seen = await app.page.evaluate(async () => {
    const btn = [...document.querySelectorAll<HTMLButtonElement>('[data-session]')].find((x) => x.textContent?.includes('Large chat B'));
    btn!.click();
    const out: boolean[] = [];
    for (let i = 0; i < 100_000; i++) {
      await new Promise((r) => requestAnimationFrame(r));
      const t = document.querySelector('.scroller')?.textContent ?? '';
      out.push(t.includes('alpha row'));
      if (t.includes('bravo row 599')) break;
    }
    return out;
  });
  expect(seen.some(Boolean)).toBe(false);
  await expect(app.page.locator('.scroller')).toContainText('bravo row 599');
  await app.call('DeleteSession', a);
  await app.call('DeleteSession', b);
});

test('the sidebar reaches every chat, not only the newest 500', async ({ app }) => {
  test.slow(); // 521 chats imported and deleted through the real backend
  await app.newChat();
  const ids: string[] = [];
  // Imported first: an import shows at the top (its chat's time is the import's), so this
  // one comes after the 520 imported after it, past the first 500 rows. Chats the specs
  // before this one left are older still and come after it.
  const oldest = exportDoc('The oldest chat of all', chatRows(1, 'oldest'));
  ids.push((await app.call<{ id: string }>('ImportSessionData', oldest)).id);
  const docs = Array.from({ length: 520 }, (_, i) => exportDoc(`Filler chat ${i}`, chatRows(1, 'filler')));
  ids.push(...(await callMany<{ id: string }>(app, 'ImportSessionData', docs.map((d) => [d]))).map((s) => s.id));
  // The host lists it past the first 500.
  const past500 = await app.call<{ id: string }[]>('ListSessionsPage', 500, 500);
  expect(past500.map((s) => s.id)).toContain(ids[0]);
  await app.page.reload();
  const nav = app.page.getByRole('navigation', { name: 'Conversations' });
  const target = nav.locator('[data-session]', { hasText: 'The oldest chat of all' });
  // Down half a screen at a time, so every row passes through the virtual list's window;
  // near the end each scroll asks for the next page of the list.
  await expect
    .poll(
      async () => {
        if ((await target.count()) > 0) return 1;
        await nav.evaluate((el) => (el.scrollTop += el.clientHeight / 2));
        return target.count();
      },
      { intervals: [50], timeout: AGENT_WAIT_MS },
    )
    .toBeGreaterThan(0);
  await target.scrollIntoViewIfNeeded();
  await expect(target).toBeVisible();
  // Virtual: only a screenful of rows is in the DOM.
  expect(await nav.locator('[data-session]').count()).toBeLessThan(150);
  // Opened from the keyboard: a pointer click could land between rows that the virtual
  // list was still moving (the scroll into view asks for the next page; Playwright saw
  // the list itself under the pointer and the click opened nothing).
  await target.focus();
  await target.press('Enter');
  await expect(target).toHaveAttribute('aria-current', 'page');
  await callMany(app, 'DeleteSession', ids.map((id) => [id]));
});
