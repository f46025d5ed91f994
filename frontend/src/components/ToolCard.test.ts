// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import type { ToolView } from '../lib/cards';
import ToolCard from './ToolCard.svelte';

const DIFF = `--- a/main.go
+++ b/main.go
@@ -1,2 +1,3 @@
 package main
-import "fmt"
+import "os"
+// <img src=x onerror=alert(1)>
`;

function tool(p: Partial<ToolView> = {}): ToolView {
  return { id: 't1', name: 'terminal', keyArg: 'ls -la', status: 'done', isError: false, duration: 0.21, output: '', diff: '', editDiff: null, ...p };
}

describe('ToolCard', () => {
  it('shows the name, key argument, run time and a spinner while running', () => {
    const { container, rerender } = render(ToolCard, { tool: tool({ status: 'running', duration: null }) });
    expect(screen.getByText('terminal')).toBeTruthy();
    expect(screen.getByText('ls -la')).toBeTruthy();
    expect(container.querySelector('.spinner')).not.toBeNull();
    expect(screen.getByText('running…')).toBeTruthy();
    rerender({ tool: tool() });
    expect(container.querySelector('.spinner')).toBeNull();
    expect(screen.getByText('0.2s')).toBeTruthy();
  });

  it('styles a failed tool and says so in words', () => {
    const { container } = render(ToolCard, { tool: tool({ isError: true, output: 'exit status 1' }) });
    expect(container.querySelector('.tool.error')).not.toBeNull();
    expect(screen.getByText('failed')).toBeTruthy();
  });

  it('says a call the user denied, or the rules refused, was not run: not "failed"', () => {
    const denied = '{"error":"denied: the user did not allow this (it deletes files); it was not run."}';
    const { container, rerender } = render(ToolCard, { tool: tool({ isError: true, output: denied }) });
    expect(container.querySelector('.tool.error')).toBeNull();
    expect(container.querySelector('.tool.refused')).not.toBeNull();
    expect(screen.getByText('denied')).toBeTruthy();
    expect(screen.queryByText('failed')).toBeNull();
    rerender({ tool: tool({ isError: true, output: '', result: { error: 'refused: this command deletes your home folder; it is never run' } }) });
    expect(screen.getByText('refused')).toBeTruthy();
    // A failure that merely mentions a denial is still a failure.
    rerender({ tool: tool({ isError: true, output: '{"error":"open x: permission denied: nope"}' }) });
    expect(screen.getByText('failed')).toBeTruthy();
  });

  it('keeps output collapsed until opened, and shows it as text', async () => {
    const output = '<b>bold</b> & <script>alert(1)</script>';
    const { container } = render(ToolCard, { tool: tool({ output }) });
    const head = screen.getByRole('button');
    expect(head.getAttribute('aria-expanded')).toBe('false');
    expect(container.querySelector('pre')).toBeNull();
    await fireEvent.click(head);
    expect(head.getAttribute('aria-expanded')).toBe('true');
    const pre = container.querySelector('pre.output')!;
    expect(pre.textContent).toBe(output);
    expect(pre.querySelector('b, script')).toBeNull();
  });

  it('shows a diff with its counts and per-line colours, as text', async () => {
    const { container } = render(ToolCard, {
      tool: tool({ name: 'patch', keyArg: 'main.go', diff: DIFF, editDiff: { files: ['main.go'], added: 2, removed: 1 } }),
      open: true,
    });
    expect(container.querySelector('.head .plus')?.textContent).toBe('+2');
    expect(container.querySelector('.head .minus')?.textContent).toBe('−1');
    const adds = [...container.querySelectorAll('.line.add .text')].map((n) => n.textContent);
    const dels = [...container.querySelectorAll('.line.del .text')].map((n) => n.textContent);
    expect(adds).toEqual(['import "os"', '// <img src=x onerror=alert(1)>']);
    expect(dels).toEqual(['import "fmt"']);
    expect(container.querySelector('.line.add .sign')?.textContent).toBe('+added');
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelectorAll('.line.ctx')).toHaveLength(1);
  });

  it('counts a result diff itself when the host sent no edit_diff', () => {
    const { container } = render(ToolCard, { tool: tool({ name: 'patch', diff: DIFF }) });
    expect(container.querySelector('.head .plus')?.textContent).toBe('+2');
    expect(container.querySelector('.head .minus')?.textContent).toBe('−1');
  });
});

describe('ToolCard: a live edit', () => {
  it('opens when its diff arrives, and stays as the user left it', async () => {
    const { container, rerender } = render(ToolCard, { tool: tool({ name: 'patch', status: 'running' }), open: false });
    expect(container.querySelector('.diff')).toBeNull();
    await rerender({ tool: tool({ name: 'patch', diff: DIFF }), open: true });
    expect(container.querySelector('.diff')).not.toBeNull();
    await fireEvent.click(screen.getByRole('button'));
    expect(container.querySelector('.diff')).toBeNull();
  });
});
