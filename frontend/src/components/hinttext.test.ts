// @vitest-environment jsdom
// The first-run screen (and every hint from the host) shows `commands` as code, never
// the raw backticks, and never as HTML.
import { render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { hintParts } from '../lib/hinttext';
import FirstRun from './FirstRun.svelte';

describe('hints with commands', () => {
  it('the first-run hint shows its commands as code, without backticks', () => {
    const hint = 'Start a local model server (Ollama: `ollama serve`; llama.cpp: `llama-server -m model.gguf --port 8080`), or choose a hosted provider.';
    const { container } = render(FirstRun, {
      check: { ok: false, message: 'nothing answers at http://127.0.0.1:11434/v1', hint, models: [] },
      checking: false, onsettings: () => {}, onretry: () => {}, ondismiss: () => {},
    });
    const why = container.querySelector('.why')!;
    expect(why.textContent).not.toContain('`');
    const codes = [...why.querySelectorAll('code')].map((c) => c.textContent);
    expect(codes).toEqual(['ollama serve', 'llama-server -m model.gguf --port 8080']);
    expect(screen.getByText(/or choose a hosted provider/)).toBeTruthy();
  });

  it('splits at paired backticks only, and keeps markup as text', () => {
    expect(hintParts('run `a` then `b`')).toEqual([
      { code: false, text: 'run ' }, { code: true, text: 'a' }, { code: false, text: ' then ' }, { code: true, text: 'b' },
    ]);
    expect(hintParts("it's a ` lone tick")).toEqual([{ code: false, text: "it's a ` lone tick" }]);
    expect(hintParts('`a` and ` odd')).toEqual([{ code: true, text: 'a' }, { code: false, text: ' and ` odd' }]);
    expect(hintParts('')).toEqual([]);
    const { container } = render(FirstRun, {
      check: { ok: false, message: 'x', hint: 'try `<img src=x onerror=alert(1)>`', models: [] },
      checking: false, onsettings: () => {}, onretry: () => {}, ondismiss: () => {},
    });
    expect(container.querySelector('.why img')).toBeNull();
    expect(container.querySelector('.why code')!.textContent).toBe('<img src=x onerror=alert(1)>');
  });
});
