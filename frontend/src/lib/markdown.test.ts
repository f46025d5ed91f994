// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { escapeHtml, highlightCode, renderMarkdown, sanitizeHtml } from './markdown';

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

  it('strips style attributes and unknown tags from raw HTML passed to the sanitiser', () => {
    const el = dom(sanitizeHtml('<p style="color:red" class="ok">x</p><svg><script>alert(1)</script></svg><math></math><a href="javascript:alert(1)">y</a>'));
    expect(el.querySelector('p')?.hasAttribute('style')).toBe(false);
    expect(el.querySelector('p')?.getAttribute('class')).toBe('ok');
    expect(el.querySelector('svg, math, script')).toBeNull();
    expect(el.querySelector('a')?.hasAttribute('href')).toBe(false);
  });
});

describe('escapeHtml', () => {
  it('escapes the five HTML specials', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
