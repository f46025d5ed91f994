// @vitest-environment jsdom
// Tool output is readable: a saved terminal row (the result object as Go's JSON, with
// \u003c escapes and \n) shows its output as text with colours taken out, its exit code
// and its error apart; a live card reads raw_result the same way; other tools show
// labelled fields; nothing becomes HTML.
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import type { ToolView } from '../lib/cards';
import { toolResultView } from '../lib/toolresult';
import ToolCard from './ToolCard.svelte';

function tool(p: Partial<ToolView> = {}): ToolView {
  return { id: 't1', name: 'terminal', keyArg: 'make', status: 'done', isError: false, duration: 0.5, output: '', diff: '', editDiff: null, ...p };
}

// What backend/store keeps for a terminal call: Go's encoding/json escapes <, > and &.
const SAVED_TERMINAL =
  '{"output":"\\u001b[31mFAIL\\u001b[0m \\u003ctest\\u003e\\nline 2\\n","exit_code":2,"error":"","sandbox":"workspace-write, no network"}';

async function open(container: HTMLElement) {
  await fireEvent.click(container.querySelector('.head')!);
}

describe('tool output', () => {
  it('a saved terminal result: output as text without ANSI codes, exit code and error apart, no JSON', async () => {
    const { container } = render(ToolCard, { tool: tool({ output: SAVED_TERMINAL, isError: true }) });
    await open(container);
    const out = container.querySelector('[data-output]')!;
    expect(out.textContent).toBe('FAIL <test>\nline 2\n');
    expect(container.querySelector('[data-exit-code]')!.textContent).toBe('exit code 2');
    expect(container.querySelector('.exit.failed')).not.toBeNull();
    expect(screen.getByText('workspace-write, no network')).toBeTruthy();
    const text = container.querySelector('.body')!.textContent!;
    expect(text).not.toContain('\\u003c');
    expect(text).not.toContain('"exit_code"');
    expect(text).not.toContain('\\n');
    expect(container.querySelector('.body test')).toBeNull();
  });

  it('a live terminal card reads raw_result: the error is shown apart from the output', async () => {
    const { container } = render(ToolCard, {
      tool: tool({ output: 'partial\n[timed out after 30s]', result: { output: 'partial\n', exit_code: -1, error: 'timed out after 30s', timed_out: true }, isError: true }),
    });
    await open(container);
    expect(container.querySelector('[data-output]')!.textContent).toBe('partial\n');
    expect(container.querySelector('[data-error]')!.textContent).toBe('timed out after 30s');
    expect(screen.getByText('timed out')).toBeTruthy();
    expect(screen.getByText('exit code -1')).toBeTruthy();
  });

  it('other tools show their fields: strings as text, nested values indented', async () => {
    const saved = JSON.stringify({ path: 'a/<b>.txt', content: 'one\ntwo\n', lines: 2, meta: { kind: 'text' } });
    const { container } = render(ToolCard, { tool: tool({ name: 'read_file', output: saved }) });
    await open(container);
    const labels = [...container.querySelectorAll('dt')].map((d) => d.textContent);
    expect(labels).toEqual(['path', 'content', 'lines', 'meta']);
    const values = [...container.querySelectorAll('dd')].map((d) => d.textContent);
    expect(values[0]).toBe('a/<b>.txt');
    expect(values[1]).toBe('one\ntwo\n');
    expect(values[2]).toBe('2');
    expect(values[3]).toBe('{\n  "kind": "text"\n}');
    expect(container.querySelector('dd b')).toBeNull();
  });

  it('text stays text; a JSON array is indented', () => {
    expect(toolResultView(null, 'created a.txt (+3 -0)')).toEqual({ kind: 'text', text: 'created a.txt (+3 -0)' });
    expect(toolResultView(null, '\u001b[1;32mok\u001b[0m')).toEqual({ kind: 'text', text: 'ok' });
    expect(toolResultView(null, '[1,2]')).toEqual({ kind: 'text', text: '[\n  1,\n  2\n]' });
    expect(toolResultView(null, '{"truncated_res')).toEqual({ kind: 'text', text: '{"truncated_res' });
  });
});

describe('a question the user never answered', () => {
  it('a timed-out clarify is "not answered", not done', async () => {
    const saved = JSON.stringify({ answered: false, message: 'The user did not answer within 300 seconds.' });
    const { container } = render(ToolCard, { tool: tool({ name: 'clarify', keyArg: 'Which database?', output: saved }) });
    expect(screen.getByText('not answered')).toBeTruthy();
    expect(container.querySelector('.tool.no-answer')).not.toBeNull();
    expect(container.querySelector('.icon')!.textContent).toBe('–');
    expect(container.querySelector('.visually-hidden')!.textContent).toBe('not answered:');
    // Live, from raw_result.
    const live = render(ToolCard, { tool: tool({ id: 't2', name: 'clarify', output: 'The user did not answer', result: { answered: false, message: 'x' } }) });
    expect(live.container.querySelector('.tool.no-answer')).not.toBeNull();
    // Answered is done.
    const ok = render(ToolCard, { tool: tool({ id: 't3', name: 'clarify', result: { answered: true, answers: [] }, output: 'q\n→ a' }) });
    expect(ok.container.querySelector('.tool.no-answer')).toBeNull();
  });
});

describe('tool output with bidi controls', () => {
  it('shows them as markers, in the output and in fields', () => {
    const v = toolResultView({ output: 'saved \u202Etxt.exe\n', exit_code: 0 }, '');
    expect(JSON.stringify(v)).not.toMatch(/[\u202A-\u202E]/);
    expect(JSON.stringify(v)).toContain('⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩txt.exe');
  });
});
