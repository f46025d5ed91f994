// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { tick } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import Markdown from './Markdown.svelte';

const LONG = Array.from({ length: 60 }, (_, i) => `line_${i} = ${i}`).join('\n');

describe('Markdown', () => {
  it('collapses a code block over 40 lines with "Show all", and opens it', async () => {
    const { container } = render(Markdown, { source: 'short:\n\n```py\na = 1\n```\n\nlong:\n\n```py\n' + LONG + '\n```\n' });
    const blocks = [...container.querySelectorAll('.code-block')];
    expect(blocks).toHaveLength(2);
    expect(blocks[0].classList.contains('collapsed')).toBe(false);
    expect(blocks[0].querySelector('button.show-all')).toBeNull();
    expect(blocks[1].classList.contains('collapsed')).toBe(true);
    const btn = screen.getByRole('button', { name: 'Show all 60 lines' });
    expect(btn.getAttribute('aria-expanded')).toBe('false');
    await fireEvent.click(btn);
    expect(blocks[1].classList.contains('collapsed')).toBe(false);
    expect(btn.textContent?.trim()).toBe('Show less');
    expect(btn.getAttribute('aria-expanded')).toBe('true');
  });

  it('renders a streaming answer\'s finished blocks once: their DOM stays while the tail grows', async () => {
    vi.useFakeTimers();
    try {
      const head = '# Title\n\nA first paragraph.\n\n';
      const r = render(Markdown, { source: head + 'tail', live: true });
      await tick();
      const h1 = r.container.querySelector('h1');
      expect(h1?.textContent).toBe('Title');
      let tail = 'tail';
      for (const more of [' grows', ' and grows', ' <img src=x onerror=alert(1)> on']) {
        tail += more;
        await r.rerender({ source: head + tail, live: true });
        // The next render is at most LIVE_MS away, then on an animation frame.
        await vi.advanceTimersByTimeAsync(400);
      }
      expect(r.container.querySelector('h1')).toBe(h1);
      expect(r.container.textContent).toContain('<img src=x onerror=alert(1)> on');
      expect(r.container.querySelector('img')).toBeNull();
    } finally {
      vi.useRealTimers();
    }
  });

  it('marks finished groups of blocks so the browser can skip them off screen', () => {
    const source = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}.`).join('\n\n');
    const { container } = render(Markdown, { source });
    const groups = [...container.querySelectorAll('.md-group')];
    expect(groups.length).toBe(3);
    expect(groups.map((g) => g.classList.contains('done'))).toEqual([true, true, false]);
    expect(container.querySelectorAll('p')).toHaveLength(40);
  });

  it('streams an open code block as text appended in chunks, then highlights it once closed', async () => {
    vi.useFakeTimers();
    try {
      const head = 'Here it is:\n\n```html\n';
      const lines = Array.from({ length: 150 }, (_, i) => `<img src=x onerror=alert(${i})> \u202E line ${i}`);
      const r = render(Markdown, { source: head, live: true });
      await tick();
      let code = '';
      let chunkNode: Node | null = null;
      for (let i = 0; i < lines.length; i += 10) {
        code += lines.slice(i, i + 10).join('\n') + '\n';
        await r.rerender({ source: head + code, live: true });
        await vi.advanceTimersByTimeAsync(400);
        const open = r.container.querySelector('[data-open-code]');
        expect(open, `after ${i + 10} lines`).not.toBeNull();
        // The text written so far, as text: no element of it reaches the DOM.
        expect(open!.querySelector('img')).toBeNull();
        expect(open!.textContent).toContain(`alert(${Math.min(i + 9, lines.length - 1)})`);
        // Bidi controls are shown, not obeyed.
        expect(open!.textContent).not.toMatch(/\u202E/);
        expect(open!.textContent).toContain('U+202E');
        // What was appended before stays the same node (only the new text is laid out).
        const first = open!.querySelector('.chunk')!.firstChild;
        if (chunkNode) expect(first).toBe(chunkNode);
        chunkNode = first;
      }
      const open = r.container.querySelector('[data-open-code]')!;
      expect(open.querySelectorAll('.chunk').length).toBe(Math.ceil(150 / 64));
      expect(open.querySelector('.hljs-tag')).toBeNull(); // not highlighted while open
      await r.rerender({ source: head + code + '```\n\nDone.', live: true });
      await vi.advanceTimersByTimeAsync(400);
      expect(r.container.querySelector('[data-open-code]')).toBeNull();
      const closed = r.container.querySelector('.code-block')!;
      expect(closed.querySelector('.hljs-tag')).not.toBeNull(); // highlighted once closed
      expect(closed.querySelector('img')).toBeNull();
      expect(r.container.textContent).toContain('Done.');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('Markdown before the code colours arrive (issue 24, item 3)', () => {
  it('shows a code block as plain text, then coloured once highlight.js is loaded', async () => {
    // A fresh lib/markdown, as the window has before its first paint (test/setup.ts
    // loads the colours into the shared one), with the Svelte it is rendered by.
    vi.resetModules();
    const md = await import('../lib/markdown');
    const { default: View } = await import('./Markdown.svelte');
    const { render } = await import('@testing-library/svelte');
    const { tick } = await import('svelte');
    expect(md.codeColoured()).toBe(false);
    const source = 'Before.\n\n```go\nfunc main() { x := "<b>" }\n```\n\nAfter.';
    const { container } = render(View, { source });
    const code = () => container.querySelector('.code-block pre code')!;
    expect(code().textContent).toBe('func main() { x := "<b>" }\n');
    expect(code().querySelector('span')).toBeNull(); // plain text: no highlight.js spans
    expect(container.querySelector('b')).toBeNull();
    // The same block rendered elsewhere meanwhile is plain too (from the block cache).
    expect(md.renderMarkdown(source)).not.toContain('hljs-keyword');
    await md.loadHighlighter();
    await tick();
    expect(md.codeColoured()).toBe(true);
    expect(code().querySelector('.hljs-keyword')?.textContent).toBe('func');
    expect(code().querySelector('.hljs-string')?.textContent).toBe('"<b>"');
    expect(container.querySelector('b')).toBeNull();
    expect(container.textContent).toContain('Before.');
    expect(container.textContent).toContain('After.');
    // The cache no longer gives the plain block.
    expect(md.renderMarkdown(source)).toContain('hljs-keyword');
  });
});
