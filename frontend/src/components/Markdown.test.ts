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
        // The next render is at most LIVE_INTERVAL_MS away, then on an animation frame.
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
});
