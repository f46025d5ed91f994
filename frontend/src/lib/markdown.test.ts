// @vitest-environment jsdom
import { Lexer } from 'marked';
import hljs from 'highlight.js/lib/core';
import { describe, expect, it, vi } from 'vitest';
import { BLOCK_GROUP, escapeHtml, groupBlocks, highlightCode, markdownCacheUse, renderBlocks, renderMarkdown, sanitizeHtml, StreamingMarkdown, type MdBlock } from './markdown';

/** Parses rendered HTML so tests look at elements, not at strings. */
function dom(html: string): HTMLElement {
  const el = document.createElement('div');
  el.innerHTML = html;
  return el;
}

function everyAttribute(root: HTMLElement): string[] {
  return [...root.querySelectorAll('*')].flatMap((e) => [...e.attributes].map((a) => a.name.toLowerCase()));
}

describe('renderMarkdown: ordinary markdown', () => {
  it('renders emphasis, lists, tables and inline code', () => {
    const el = dom(renderMarkdown('**bold** and *it*\n\n- a\n- b\n\n| x | y |\n|---|---|\n| 1 | 2 |\n\nrun `ls -la`'));
    expect(el.querySelector('strong')?.textContent).toBe('bold');
    expect(el.querySelector('em')?.textContent).toBe('it');
    expect(el.querySelectorAll('li')).toHaveLength(2);
    expect(el.querySelector('table td')?.textContent).toBe('1');
    expect(el.querySelector('p code')?.textContent).toBe('ls -la');
  });

  it('keeps http(s) and mailto links', () => {
    const el = dom(renderMarkdown('[docs](https://example.com/a?b=1) [mail](mailto:me@example.com) <https://auto.example>'));
    const hrefs = [...el.querySelectorAll('a')].map((a) => a.getAttribute('href'));
    expect(hrefs).toEqual(['https://example.com/a?b=1', 'mailto:me@example.com', 'https://auto.example']);
  });

  it('returns an empty string for empty input', () => {
    expect(renderMarkdown('')).toBe('');
  });
});

describe('renderMarkdown: code highlighting', () => {
  it('highlights a fenced block in a known language', () => {
    const el = dom(renderMarkdown('```go\nfunc main() { return "x" }\n```'));
    const code = el.querySelector('pre code');
    expect(code?.classList.contains('hljs')).toBe(true);
    expect(code?.classList.contains('language-go')).toBe(true);
    expect(code?.querySelector('.hljs-keyword')?.textContent).toBe('func');
    expect(code?.querySelector('.hljs-string')?.textContent).toBe('"x"');
    expect(code?.textContent).toBe('func main() { return "x" }\n');
  });

  it('highlights python, typescript and bash too', () => {
    for (const [lang, src] of [['python', 'def f():\n    pass'], ['typescript', 'const x: number = 1;'], ['bash', 'echo "$HOME"']]) {
      const el = dom(renderMarkdown('```' + lang + '\n' + src + '\n```'));
      expect(el.querySelectorAll('pre code span[class^="hljs-"]').length, lang).toBeGreaterThan(0);
    }
  });

  it('escapes code in an unknown or missing language instead of guessing', () => {
    const el = dom(renderMarkdown('```klingon\n<b>not bold</b>\n```\n\n```\n<i>x</i>\n```'));
    const blocks = el.querySelectorAll('pre code');
    expect(blocks).toHaveLength(2);
    expect(el.querySelector('b, i')).toBeNull();
    expect(blocks[0].textContent).toBe('<b>not bold</b>\n');
    expect(blocks[1].classList.contains('hljs')).toBe(true);
  });

  it('highlightCode falls back to plain text', () => {
    expect(highlightCode('<x>', 'nope')).toBe('&lt;x&gt;');
  });
});

describe('renderMarkdown: hostile input', () => {
  it('removes script tags (block and inline)', () => {
    const el = dom(renderMarkdown('<script>alert(1)</script>\n\nhi <script>alert(2)</script> there'));
    expect(el.querySelector('script')).toBeNull();
    // The raw HTML is shown as text, never executed.
    expect(el.textContent).toContain('<script>alert(1)</script>');
  });

  it('removes onerror and other inline handlers', () => {
    const html = renderMarkdown('<img src=x onerror="alert(1)">\n\n<a href="https://x.example" onclick="alert(2)">x</a>\n\n<div onmouseover="alert(3)">d</div>');
    const el = dom(html);
    expect(el.querySelector('img')).toBeNull();
    expect(everyAttribute(el).filter((n) => n.startsWith('on'))).toEqual([]);
  });

  it('drops javascript:, data: and vbscript: link targets', () => {
    const el = dom(renderMarkdown(
      '[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](  javascript:alert(1)) [d](data:text/html;base64,PHNjcmlwdD4=) [e](vbscript:x) [f](java&#09;script:alert(1))',
    ));
    const anchors = [...el.querySelectorAll('a')];
    for (const a of anchors) {
      const href = a.getAttribute('href');
      expect(href === null || /^(https?:|mailto:)/i.test(href), String(href)).toBe(true);
    }
    expect(el.innerHTML.toLowerCase()).not.toContain('javascript:');
  });

  it('removes raw iframes, objects, forms and styles', () => {
    const el = dom(renderMarkdown(
      '<iframe src="https://evil.example"></iframe>\n\n<object data="x"></object>\n\n<form action="https://evil.example"><input name="p"></form>\n\n<style>body{display:none}</style>',
    ));
    expect(el.querySelector('iframe, object, embed, form, style')).toBeNull();
    expect(el.querySelector('input:not([type="checkbox"])')).toBeNull();
  });

  it('turns images into links and never loads remote images', () => {
    const el = dom(renderMarkdown('![a cat](https://img.example/cat.png) ![x](javascript:alert(1))'));
    expect(el.querySelector('img')).toBeNull();
    const a = el.querySelector('a');
    expect(a?.getAttribute('href')).toBe('https://img.example/cat.png');
    expect(a?.textContent).toBe('a cat');
    expect(el.innerHTML).not.toContain('javascript:');
  });

  it('keeps GFM task list checkboxes inert', () => {
    const el = dom(renderMarkdown('- [x] done\n- [ ] todo'));
    const boxes = [...el.querySelectorAll('input')];
    expect(boxes).toHaveLength(2);
    for (const b of boxes) {
      expect(b.getAttribute('type')).toBe('checkbox');
      expect(b.hasAttribute('disabled')).toBe(true);
    }
  });

  it('strips style attributes, unknown tags and classes that are not the renderer\'s from raw HTML passed to the sanitiser', () => {
    const el = dom(sanitizeHtml('<p style="color:red" class="primary hljs-keyword">x</p><svg><script>alert(1)</script></svg><math></math><a href="javascript:alert(1)">y</a>'));
    expect(el.querySelector('p')?.hasAttribute('style')).toBe(false);
    expect(el.querySelector('p')?.getAttribute('class')).toBe('hljs-keyword');
    expect(el.querySelector('svg, math, script')).toBeNull();
    expect(el.querySelector('a')?.hasAttribute('href')).toBe(false);
  });
});

describe('escapeHtml', () => {
  it('escapes the five HTML specials', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});

// Issue 11, "Markdown fidelity": each of these failed before the fix.
describe('renderMarkdown: fidelity', () => {
  it('keeps an ordered list start number', () => {
    const el = dom(renderMarkdown('3. three\n4. four'));
    expect(el.querySelector('ol')?.getAttribute('start')).toBe('3');
    expect(el.querySelectorAll('ol > li')).toHaveLength(2);
  });

  it('keeps table column alignment', () => {
    const el = dom(renderMarkdown('| l | c | r |\n|:---|:---:|---:|\n| 1 | 2 | 3 |'));
    const cells = [...el.querySelectorAll('tbody td')].map((td) => td.getAttribute('align'));
    expect(cells).toEqual(['left', 'center', 'right']);
    expect([...el.querySelectorAll('th')].map((th) => th.getAttribute('align'))).toEqual(['left', 'center', 'right']);
  });

  it('still drops non-URL values where a URL is expected, and odd values elsewhere', () => {
    const el = dom(sanitizeHtml('<ol start="x">a</ol><td align="javascript:x">b</td><a href="start">c</a><p dir="rtl">d</p>'));
    expect(el.querySelector('ol')?.hasAttribute('start')).toBe(false);
    expect(el.querySelector('[align]')).toBeNull();
    expect(el.querySelector('a')?.hasAttribute('href')).toBe(false);
    expect(el.querySelector('p')?.getAttribute('dir')).toBe('auto');
  });

  it('shows model HTML after an inline <code>, <kbd> or <pre> tag as text, not as elements', () => {
    for (const tag of ['code', 'kbd', 'pre', 'script', 'a href="https://x.example"']) {
      const src = `look <${tag}> then <h1 1>big</h1> and <a href="https://evil.example" class="primary" -x>click</a> and <span class=app-x x>y</span> **bold**`;
      const el = dom(renderMarkdown(src));
      expect(el.querySelector('h1, span.app-x, .primary, code, kbd, pre, script'), tag).toBeNull();
      // The URL in the model's tag may autolink as text does; its own anchor is text.
      expect([...el.querySelectorAll('a')].map((a) => a.textContent), tag).not.toContain('click');
      expect(el.textContent, tag).toContain('<h1 1>big</h1>');
      expect(el.textContent, tag).toContain(`<${tag}>`);
      // Markdown after it still works.
      expect(el.querySelector('strong')?.textContent, tag).toBe('bold');
    }
  });

  it('gives paragraphs, list items, headings and cells dir="auto" for right-to-left text', () => {
    const el = dom(renderMarkdown('שלום עולם\n\n- פריט\n\n# כותרת\n\n| א |\n|---|\n| ב |\n\n> ציטוט'));
    for (const sel of ['p', 'li', 'ul', 'h1', 'th', 'td', 'blockquote']) {
      expect(el.querySelector(sel)?.getAttribute('dir'), sel).toBe('auto');
    }
  });

  it('leaves out HTML comments but shows an unclosed one as text', () => {
    const el = dom(renderMarkdown('before <!-- hidden note --> after\n\n<!--\nblock comment\n-->\n\nlast'));
    expect(el.textContent).not.toContain('hidden note');
    expect(el.textContent).not.toContain('block comment');
    expect(el.textContent).toContain('before');
    expect(el.textContent).toContain('after');
    expect(el.textContent).toContain('last');
    expect(dom(renderMarkdown('x <!-- never closed')).textContent).toContain('<!-- never closed');
  });

  it('keeps single line breaks as line breaks (GFM, as chat apps show them)', () => {
    const el = dom(renderMarkdown('line one\nline two'));
    expect(el.querySelectorAll('p')).toHaveLength(1);
    expect(el.querySelector('p br')).not.toBeNull();
  });
});

describe('renderMarkdown: dead links', () => {
  it('renders a neutralised link as plain text, not as a link', () => {
    const el = dom(renderMarkdown('[click me](javascript:alert(1)) and [ok](https://ok.example) and [rel](./x) and <javascript:alert(2)>'));
    const anchors = [...el.querySelectorAll('a')];
    expect(anchors.map((a) => a.getAttribute('href'))).toEqual(['https://ok.example']);
    expect(el.textContent).toContain('click me');
    expect(el.textContent).toContain('rel');
    const dead = [...el.querySelectorAll('.dead-link')].map((d) => d.textContent);
    expect(dead).toEqual(['click me', 'rel', 'javascript:alert(2)']);
    for (const d of el.querySelectorAll('.dead-link')) expect(d.tagName).toBe('SPAN');
  });

  it('never leaves an anchor without a target', () => {
    const el = dom(sanitizeHtml('<a href="javascript:x">a</a><a>b</a>'));
    for (const a of el.querySelectorAll('a')) {
      expect(a.hasAttribute('href')).toBe(false);
      expect(a.classList.contains('dead-link')).toBe(true);
    }
  });
});

describe('renderBlocks and StreamingMarkdown', () => {
  it('splits a message into top-level blocks with the code blocks apart', () => {
    const blocks = renderBlocks('# T\n\npara\n\n```go\na\nb\nc\n```\n\n| a |\n|---|\n| 1 |\n');
    expect(blocks.map((b) => b.kind)).toEqual(['html', 'html', 'code', 'table']);
    expect(blocks[2].lines).toBe(3);
    expect(blocks[2].lang).toBe('go');
    expect(blocks.map((b) => b.html).join('')).toBe(renderMarkdown('# T\n\npara\n\n```go\na\nb\nc\n```\n\n| a |\n|---|\n| 1 |\n'));
  });

  it('counts the lines of a long code block, fenced or indented', () => {
    const long = Array.from({ length: 57 }, (_, i) => `line ${i}`).join('\n');
    expect(renderBlocks('```\n' + long + '\n```')[0].lines).toBe(57);
    expect(renderBlocks('~~~py\n' + long + '\n~~~\n\nafter')[0].lines).toBe(57);
    expect(renderBlocks(long.split('\n').map((l) => '    ' + l).join('\n'))[0].lines).toBe(57);
  });

  it('renders a growing text like a whole one, keeping finished blocks as the same objects', () => {
    const text = '# Title\n\nA paragraph with **bold** and a [ref][r].\n\n- one\n- two\n\n  more\n- three\n\n```js\nlet a = 1;\nlet b = 2;\n```\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n[r]: https://ref.example\n\nThe end.';
    const s = new StreamingMarkdown();
    let prev: ReturnType<typeof s.update> = [];
    let redone = 0;
    for (let n = 1; n <= text.length; n += 3) {
      const blocks = s.update(text.slice(0, n));
      // Every block but the last two of the previous update is kept as it was, except
      // once: when the reference definition arrives, everything is rendered again.
      if (prev.slice(0, -2).some((b, i) => blocks[i] !== b)) redone++;
      prev = blocks;
    }
    expect(redone).toBeLessThanOrEqual(1);
    const final = s.update(text);
    expect(final.map((b) => b.html).join('')).toBe(renderMarkdown(text));
  });

  it('starts over when the text is replaced rather than extended', () => {
    const s = new StreamingMarkdown();
    s.update('first paragraph\n\nsecond');
    const blocks = s.update('other text');
    expect(blocks.map((b) => b.html).join('')).toBe(renderMarkdown('other text'));
  });

  it('lexes only the unfinished tail of a long streaming text', () => {
    const s = new StreamingMarkdown();
    const para = 'Some words in a paragraph that goes on for a while.\n\n';
    let text = '';
    for (let i = 0; i < 400; i++) {
      text += para;
      s.update(text);
    }
    const spy = vi.spyOn(Lexer.prototype, 'lex');
    s.update(text + 'tail');
    expect(spy).toHaveBeenCalledTimes(1);
    expect((spy.mock.calls[0][0] as string).length).toBeLessThan(para.length * 2 + 10);
    spy.mockRestore();
  });
});

/**
 * expectSettled checks a stream's last update against the whole text rendered at once:
 * the same blocks, except that a code fence still open at the end is an open-code block
 * of the same code (the finished message is rendered whole by renderBlocks).
 */
function expectSettled(blocks: MdBlock[], text: string) {
  const whole = renderBlocks(text);
  const last = blocks.at(-1);
  if (last?.kind === 'open-code') {
    expect(whole.at(-1)!.kind).toBe('code');
    expect(dom(whole.at(-1)!.html).textContent!.replace(/\n$/, '')).toBe(last.text!.replace(/\n$/, ''));
    expect(blocks.slice(0, -1).map((b) => b.html).join('')).toBe(whole.slice(0, -1).map((b) => b.html).join(''));
    return;
  }
  expect(blocks.map((b) => b.html).join('')).toBe(whole.map((b) => b.html).join(''));
}

describe('StreamingMarkdown: a fenced code block still being written', () => {
  const body = Array.from({ length: 300 }, (_, i) => `let v${i} = "<b>${i}</b>"; // \u202E`).join('\n');

  it('shows an open fence as plain text without lexing, highlighting or sanitising it again', () => {
    const s = new StreamingMarkdown();
    s.update('Intro.\n\n```ts\n'); // the fence becomes the tail
    const lex = vi.spyOn(Lexer.prototype, 'lex');
    const hl = vi.spyOn(hljs, 'highlight');
    let blocks = s.update('Intro.\n\n```ts\n');
    for (let n = 1; n <= body.length; n += 97) blocks = s.update('Intro.\n\n```ts\n' + body.slice(0, n));
    expect(lex).not.toHaveBeenCalled();
    expect(hl).not.toHaveBeenCalled();
    lex.mockRestore();
    hl.mockRestore();
    const last = blocks[blocks.length - 1];
    expect(last.kind).toBe('open-code');
    expect(last.lang).toBe('ts');
    expect(last.html).toBe('');
    expect(body.startsWith(last.text!)).toBe(true);
    expect(blocks[0].html).toBe(renderMarkdown('Intro.'));
  });

  it('highlights the block once its fence closes, as the whole text renders', () => {
    const text = 'Intro.\n\n```ts\n' + body + '\n```\n\nAfter.';
    const s = new StreamingMarkdown();
    let kinds: string[] = [];
    for (let n = 1; n <= text.length; n += 211) kinds = s.update(text.slice(0, n)).map((b) => b.kind);
    expect(kinds).toContain('open-code');
    const final = s.update(text);
    expect(final.map((b) => b.kind)).toEqual(['html', 'code', 'html']);
    expect(final.map((b) => b.html).join('')).toBe(renderMarkdown(text));
  });

  it.each([
    ['~~~ fences', '~~~py\nx = 1\n', '~~~\n'],
    ['a longer closing fence', '```\nx\n', '`````\n'],
    ['a closing fence indented by three spaces, then spaces', '```\nx\n', '   ```  \n'],
  ])('closes on %s', (_name, open, close) => {
    const s = new StreamingMarkdown();
    expect(s.update(open).at(-1)!.kind).not.toBe('code');
    expect(s.update(open + 'more\n').at(-1)!.kind).toBe('open-code');
    const done = s.update(open + 'more\n' + close + '\nafter');
    expect(done.map((b) => b.html).join('')).toBe(renderMarkdown(open + 'more\n' + close + '\nafter'));
    expect(done.some((b) => b.kind === 'code')).toBe(true);
  });

  it.each([
    ['a shorter fence', '````\nx\n', '```\n'],
    ['the other fence character', '```\nx\n', '~~~\n'],
    ['a fence indented by four spaces', '```\nx\n', '    ```\n'],
    ['a fence followed by text', '```\nx\n', '``` not a fence\n'],
  ])('stays open on %s', (_name, open, line) => {
    const s = new StreamingMarkdown();
    s.update(open);
    const blocks = s.update(open + line + 'y\n');
    expect(blocks.at(-1)!.kind).toBe('open-code');
    expect(blocks.at(-1)!.text).toBe(open.slice(open.indexOf('\n') + 1) + line + 'y\n');
  });

  it('does not take a backtick line with a backtick in its info string for a fence', () => {
    const s = new StreamingMarkdown();
    const blocks = s.update('``` a`b\nstill text\n');
    expect(blocks.every((b) => b.kind !== 'open-code')).toBe(true);
  });
});

// Payloads of the usual XSS filter-evasion lists (OWASP's cheat sheet, DOMPurify's own
// tests, mutation XSS), raw and inside Markdown constructs: nothing of them may reach
// the DOM as an element, handler or URL, at any point of a stream.
const XSS_CORPUS = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(1)>',
  '<svg/onload=alert(1)>',
  '<svg><animate onbegin=alert(1) attributeName=x dur=1s>',
  '<body onload=alert(1)>',
  '<details open ontoggle=alert(1)>',
  '<input autofocus onfocus=alert(1)>',
  '<video><source onerror="alert(1)">',
  '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
  '<object data="javascript:alert(1)">',
  '<embed src="javascript:alert(1)">',
  '<base href="javascript:alert(1)//">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
  '<link rel=stylesheet href="https://evil.example/x.css">',
  '<style>@import "https://evil.example/x.css";</style>',
  '<form action="javascript:alert(1)"><button>go</button></form>',
  '<button formaction="javascript:alert(1)">x</button>',
  '<a href="javas&#x09;cript:alert(1)">x</a>',
  '<a href="&#106;avascript:alert(1)">x</a>',
  '<a href=" javascript:alert(1)">x</a>',
  '<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>',
  '<noscript><p title="</noscript><img src=x onerror=alert(1)>">',
  '<svg></p><style><a id="</style><img src=1 onerror=alert(1)>">',
  '<form><math><mtext></form><form><mglyph><style></math><img src onerror=alert(1)>',
  '<template><img src=x onerror=alert(1)></template>',
  '<xmp><img src=x onerror=alert(1)></xmp>',
  '<div style="background:url(javascript:alert(1))">x</div>',
  '<span class="primary" data-x=1 aria-label=x>x</span>',
  '<code>x</code><img src=x onerror=alert(1)>',
  '<kbd><a href="javascript:alert(1)">k</a></kbd>',
  '<pre><svg onload=alert(1)></pre>',
  '[x](javascript:alert(1))',
  '[x](JAVASCRIPT:alert(1))',
  '[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)',
  '[x](vbscript:msgbox(1))',
  '[x](https://ok.example "a\\" onmouseover=\\"alert(1)")',
  '[x][r]\n\n[r]: javascript:alert(1)',
  '![x](javascript:alert(1))',
  '![x" onerror="alert(1)](https://img.example/a.png)',
  '<javascript:alert(1)>',
  '[<img src=x onerror=alert(1)>](https://ok.example)',
  '**<img src=x onerror=alert(1)>**',
  '`<img src=x onerror=alert(1)>`',
  '```html\n</code></pre><img src=x onerror=alert(1)>\n```',
  '```"><img src=x onerror=alert(1)>\ncode\n```',
  '| a |\n|---|\n| <img src=x onerror=alert(1)> |',
  '- [x] <input type=text onfocus=alert(1)>\n- <script>alert(1)</script>',
  '> <iframe src="https://evil.example"></iframe>',
  '<!-- --><img src=x onerror=alert(1)><!-- -->',
  '<!--><img src=x onerror=alert(1)>-->',
  '<a href="https://ok.example" target=_blank rel=opener>x</a>',
];

const SAFE_TAGS = new Set([
  'A', 'P', 'BR', 'HR', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'STRONG', 'EM', 'DEL', 'S', 'CODE', 'PRE',
  'BLOCKQUOTE', 'UL', 'OL', 'LI', 'TABLE', 'THEAD', 'TBODY', 'TR', 'TH', 'TD', 'SPAN', 'INPUT', 'SUP', 'SUB',
]);
const SAFE_ATTRS = new Set(['href', 'title', 'class', 'align', 'start', 'type', 'checked', 'disabled', 'dir']);

/** What a sanitised fragment may hold; the problems found, for the failure message. */
function unsafeParts(html: string): string[] {
  const bad: string[] = [];
  for (const el of dom(html).querySelectorAll('*')) {
    if (!SAFE_TAGS.has(el.tagName)) bad.push(`<${el.tagName.toLowerCase()}>`);
    for (const a of el.attributes) {
      if (!SAFE_ATTRS.has(a.name)) bad.push(`${el.tagName.toLowerCase()}[${a.name}]`);
      if (a.name === 'href' && !/^(?:https?:|mailto:)/i.test(a.value)) bad.push(`href=${a.value}`);
      if (a.name === 'class' && a.value.split(/\s+/).some((c) => !/^(?:hljs(?:-[\w-]+)?|language-[\w+#.-]+|dead-link|[a-z]+_)$/.test(c))) bad.push(`class=${a.value}`);
    }
    if (el.tagName === 'INPUT' && (el.getAttribute('type') !== 'checkbox' || !el.hasAttribute('disabled'))) bad.push('live input');
  }
  return bad;
}

describe('StreamingMarkdown: hostile input at every step of a stream', () => {
  // Each payload streamed in pieces of 1, 2, 5 and 3 characters in turn, so every kind
  // of cut (inside a tag, an attribute, an entity, a fence) is an update's end somewhere.
  it.each(XSS_CORPUS)('sanitises every block of every update: %s', (payload) => {
    const text = `Intro with **bold** text.\n\n${payload}\n\nAfter: ${payload} and the end.\n`;
    const checked = new Set<string>();
    const s = new StreamingMarkdown();
    const steps = [1, 2, 5, 3];
    for (let n = 1, k = 0; n < text.length + 5; n += steps[k++ % steps.length]) {
      for (const b of s.update(text.slice(0, n))) {
        // Finished blocks come back as they were: each distinct block is checked once.
        if (checked.has(b.html)) continue;
        checked.add(b.html);
        expect(unsafeParts(b.html), `at ${n}`).toEqual([]);
      }
    }
    // The finished stream renders as the whole text does (a fence left open at the end
    // is still text here: the finished message is rendered whole, with renderBlocks).
    expectSettled(s.update(text), text);
  });

  it('sanitises a corpus streamed as one answer, blocks finished and unfinished', () => {
    const text = XSS_CORPUS.join('\n\n');
    const s = new StreamingMarkdown();
    const checked = new Set<string>();
    for (let n = 7; n < text.length + 7; n += 7) {
      for (const b of s.update(text.slice(0, n))) {
        if (checked.has(b.html)) continue;
        checked.add(b.html);
        expect(unsafeParts(b.html), `at ${n}`).toEqual([]);
      }
    }
    expect(unsafeParts(renderMarkdown(text))).toEqual([]);
  });
});

describe('renderMarkdown: bidi controls', () => {
  it('shows a right-to-left override as a marker, in text, code and links, so a name cannot be spoofed', () => {
    const html = renderMarkdown('Open `invoice\u202Efdp.exe` or [report\u202E.pdf](https://x.io/a\u202Eb) now \u2066x\u2069');
    expect(html).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    expect(html).toContain('invoice⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩fdp.exe');
    expect(html).toContain('⟨U+2066 LEFT-TO-RIGHT ISOLATE⟩x');
    // Right-to-left prose itself is untouched.
    expect(renderMarkdown('שלום עולם')).toContain('שלום עולם');
  });
});

// Issue 24: the rendered-block cache is bounded by what it holds, source and HTML. A
// block's HTML may be several times its source (here every "&" is "&amp;"); counting the
// source alone let the cache hold five times its bound.
describe('renderBlocks: the block cache', () => {
  it('keeps at most its bound of source and HTML, and still answers a block again from it', () => {
    const bound = 8_000_000;
    let last: MdBlock | null = null;
    for (let i = 0; i < 10; i++) {
      const blocks = renderBlocks(`block ${i} ` + '&'.repeat(400_000));
      expect(blocks).toHaveLength(1);
      expect(blocks[0].html.length).toBeGreaterThan(2_000_000);
      last = blocks[0];
    }
    const use = markdownCacheUse();
    expect(use.chars).toBeLessThanOrEqual(bound);
    // Each block costs some 2.4 M characters: three fit, not ten.
    expect(use.blocks).toBeLessThanOrEqual(3);
    expect(renderBlocks(`block 9 ` + '&'.repeat(400_000))[0]).toBe(last);
  });
});

describe('groupBlocks', () => {
  it('keeps each group unchanged since the last call as the same array, so a streaming render touches its last group only', () => {
    const s = new StreamingMarkdown();
    const para = (i: number) => `Paragraph ${i} of the answer.\n\n`;
    let src = Array.from({ length: BLOCK_GROUP * 3 + 2 }, (_, i) => para(i)).join('') + 'The tail';
    const first = groupBlocks(s.update(src));
    expect(first.map((g) => g.length)).toEqual([BLOCK_GROUP, BLOCK_GROUP, BLOCK_GROUP, 3]);
    src += ' grows';
    const second = groupBlocks(s.update(src), first);
    expect(second.slice(0, 3)).toEqual(first.slice(0, 3));
    second.slice(0, 3).forEach((g, i) => expect(g).toBe(first[i])); // finished groups: the same arrays
    expect(second[3]).not.toBe(first[3]); // the tail's group is new
    expect(second[3][2].html).toContain('The tail grows');
    // A block that changed inside a finished group (an answer replaced) is a new group.
    const blocks = s.update(src).slice();
    blocks[5] = { ...blocks[5], html: '<p>other</p>' };
    const third = groupBlocks(blocks, second);
    expect(third[0]).not.toBe(second[0]);
    expect(third[1]).toBe(second[1]);
    // Fewer blocks (a shorter answer): the last group is cut, not kept.
    const fourth = groupBlocks(blocks.slice(0, BLOCK_GROUP + 1), third);
    expect(fourth.map((g) => g.length)).toEqual([BLOCK_GROUP, 1]);
  });
});
