// The first-screen picture (issue 24, backend/firstscreen): once the window has been
// quiet showing the chat a start opens first, the host serves the next page with a
// sanitised picture of it, and the app replaces it with the live chat as it starts:
// nothing of the picture stays, nothing is shown twice. A picture of data that changed
// since is not served. (Its paint time is measured in the real WebKit window by
// `make bench`.)
import { expect, test, text } from './fixtures';
import { AGENT_WAIT_MS } from './wait';

/** The page as the host serves it now (the boot middleware's output). */
async function servedPage(page: import('@playwright/test').Page): Promise<string> {
  return page.evaluate(async () => (await fetch('/', { cache: 'no-store' })).text());
}

test('a start paints the kept first screen, then the live chat in its place', async ({ app, provider }) => {
  await provider.script(text('Picture **answer** <img src=x onerror="window.__pwned=1">'));
  await app.newChat();
  await app.send('first screen please');
  await expect(app.assistant().last()).toContainText('Picture answer');
  // The window keeps its picture once it has been quiet for a moment.
  await expect.poll(() => servedPage(app.page), { timeout: AGENT_WAIT_MS }).toContain('id="talaria-first-screen"');
  // What the picture holds, as the browser parses the page: the answer's text; no
  // script, handler or lookup hook (the model's <img onerror> is text in it).
  const shot = await app.page.evaluate(async () => {
    const doc = new DOMParser().parseFromString(await (await fetch('/', { cache: 'no-store' })).text(), 'text/html');
    const el = doc.getElementById('talaria-first-screen')!;
    const handlers = [...el.querySelectorAll('*')].filter((e) => [...e.attributes].some((a) => a.name.startsWith('on'))).length;
    return { text: el.textContent ?? '', scripts: el.querySelectorAll('script').length, handlers, sessions: el.querySelectorAll('[data-session]').length, next: el.nextElementSibling?.outerHTML ?? '' };
  });
  expect(shot.text).toContain('Picture answer');
  expect(shot).toMatchObject({ scripts: 0, handlers: 0, sessions: 0 });
  // first-screen.js starts the app's module (data-app) once the picture has painted.
  expect(shot.next).toMatch(/^<script src="\/first-screen\.js"( data-app="\.\/assets\/[\w.-]+\.js")?><\/script>$/);

  await app.page.reload();
  await expect(app.assistant().last()).toContainText('Picture answer');
  await expect(app.page.locator('#talaria-first-screen')).toHaveCount(0);
  await expect(app.page.getByText('first screen please', { exact: true })).toHaveCount(1);
  expect(await app.page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

  // The chat changes: the page is not served the old picture, and a new one is kept.
  await provider.script(text('A second answer'));
  await app.send('and now?');
  await expect(app.assistant().last()).toContainText('A second answer');
  await expect.poll(async () => {
    const p = await servedPage(app.page);
    return p.includes('id="talaria-first-screen"') && p.includes('A second answer');
  }, { timeout: AGENT_WAIT_MS }).toBe(true);
});
