// Markdown fidelity in the window (issue 11): what a model writes is shown as the
// Markdown means, and model HTML is shown as text. Each test failed before the fix.
import { expect, test, text } from './fixtures';

const LONG_CODE = Array.from({ length: 60 }, (_, i) => `line_${i} = ${i}`).join('\n');
const WIDE_ROW = Array.from({ length: 14 }, (_, i) => `column_heading_${i}`);

const ANSWER = [
  'Steps:\n\n3. third\n4. fourth\n\n',
  '| left | centre | right |\n|:---|:---:|---:|\n| a | b | c |\n\n',
  'look <code> then <h1 1>BIG</h1> and <a href="https://evil.example" class="primary" -x>click me</a> done\n\n',
  'שלום, זו פסקה בעברית.\n\n',
  'before <!-- a hidden note --> after\n\n',
  'first line\nsecond line\n\n',
  '[dead link](javascript:alert(1)) and [live link](https://example.com)\n\n',
  '```python\n' + LONG_CODE + '\n```\n\n',
  '| ' + WIDE_ROW.join(' | ') + ' |\n|' + WIDE_ROW.map(() => '---').join('|') + '|\n| ' + WIDE_ROW.map((_, i) => `value_number_${i}`).join(' | ') + ' |\n\nThe end.',
];

test('an answer renders as its Markdown means, and model HTML as text', async ({ app, provider }) => {
  await provider.script(text(...ANSWER));
  await app.newChat();
  await app.send('show me everything');
  const answer = app.assistant().last();
  await expect(answer).toContainText('The end.');
  const md = answer.locator('.md');

  // Ordered lists keep their start number; table columns keep their alignment.
  await expect(md.locator('ol').first()).toHaveAttribute('start', '3');
  await expect(md.locator('td').first()).toHaveAttribute('align', 'left');
  await expect(md.locator('td').nth(1)).toHaveAttribute('align', 'center');
  await expect(md.locator('td').nth(2)).toHaveAttribute('align', 'right');

  // Model HTML after an inline <code> is text: no heading, no anchor of its own, no app class.
  await expect(md.locator('h1')).toHaveCount(0);
  await expect(md.locator('.primary')).toHaveCount(0);
  await expect(md).toContainText('<h1 1>BIG</h1>');
  await expect(md.locator('a', { hasText: 'click me' })).toHaveCount(0);

  // Right-to-left paragraphs get dir="auto" (and read right to left).
  const rtl = md.locator('p', { hasText: 'שלום' });
  await expect(rtl).toHaveAttribute('dir', 'auto');
  expect(await rtl.evaluate((el) => getComputedStyle(el).direction)).toBe('rtl');

  // Comments are left out; a single line break is a line break.
  await expect(md).not.toContainText('hidden note');
  await expect(md.locator('p', { hasText: 'first line' }).locator('br')).toHaveCount(1);

  // A neutralised link is text: not an anchor, not link-coloured, nothing to click.
  const dead = md.getByText('dead link', { exact: true });
  expect(await dead.evaluate((el) => el.closest('a'))).toBeNull();
  const live = md.locator('a', { hasText: 'live link' });
  const [deadStyle, liveStyle] = await Promise.all([
    dead.evaluate((el) => ({ color: getComputedStyle(el).color, line: getComputedStyle(el).textDecorationLine, cursor: getComputedStyle(el).cursor })),
    live.evaluate((el) => ({ color: getComputedStyle(el).color, line: getComputedStyle(el).textDecorationLine })),
  ]);
  expect(deadStyle.color).not.toBe(liveStyle.color);
  expect(deadStyle.line).toBe('none');
  expect(deadStyle.cursor).not.toBe('pointer');

  // A code block over 40 lines is collapsed and scrolls inside; "Show all" opens it.
  const block = md.locator('.code-block', { hasText: 'line_59' });
  const pre = block.locator('pre');
  // Coloured by highlight.js, which the window loads after its first paint (its own chunk).
  await expect(pre.locator('.hljs-number').first()).toHaveText('0');
  const collapsed = await pre.evaluate((el) => ({ client: el.clientHeight, scroll: el.scrollHeight }));
  expect(collapsed.scroll).toBeGreaterThan(collapsed.client + 20);
  await block.getByRole('button', { name: /show all 60 lines/i }).click();
  await expect(block.getByRole('button', { name: /show less/i })).toBeVisible();
  const open = await pre.evaluate((el) => ({ client: el.clientHeight, scroll: el.scrollHeight }));
  expect(open.scroll).toBeLessThanOrEqual(open.client + 2);

  // A wide table scrolls sideways inside the message; the message stays within the chat.
  const wide = md.locator('table', { hasText: 'column_heading_13' });
  const sizes = await wide.evaluate((el) => ({ client: el.clientWidth, scroll: el.scrollWidth, overflow: getComputedStyle(el).overflowX }));
  expect(sizes.scroll).toBeGreaterThan(sizes.client + 50);
  expect(['auto', 'scroll']).toContain(sizes.overflow);
  const [bubble, chat] = await Promise.all([
    answer.locator('.bubble').evaluate((el) => el.getBoundingClientRect().right),
    app.page.locator('.scroller').evaluate((el) => el.getBoundingClientRect().right),
  ]);
  expect(bubble).toBeLessThanOrEqual(chat);
  // Column headings are not squeezed to a letter per line.
  const th = await wide.locator('th').first().evaluate((el) => el.getBoundingClientRect().height);
  expect(th).toBeLessThan(40);
});
