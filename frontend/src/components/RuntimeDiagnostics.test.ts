// @vitest-environment jsdom
// Diagnostics shows each started runtime besides the built-in one in its own section:
// a Hermes profile's version, gateway dialect, features, last error with its hint, and
// the gateway's own output as text.
import { render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import RuntimeDiagnostics from './RuntimeDiagnostics.svelte';
import type { RuntimeDiagnostics as RD, SidecarStatus } from '../lib/protocol.gen';

function hermes(over: Partial<SidecarStatus> = {}, stderr: string[] = []): RD {
  return {
    status: {
      runtime_id: 'hermes:work', state: 'ready', runtime: 'hermes', agent_version: '0.19.0', sidecar_version: 'v1', python: '3.11.2',
      protocol: 1, dialect: 'A', features: ['images', 'reasoning_effort'], attempt: 0, next_retry_s: 0, error: '', hint: '', pid: 77,
      restarts: 1, started_at: 0, sandbox: null, capabilities: [], ...over,
    } as SidecarStatus,
    stderr_tail: stderr,
  };
}

describe('RuntimeDiagnostics', () => {
  it("shows a Hermes profile's version, dialect, features and the gateway's output", () => {
    render(RuntimeDiagnostics, { runtime: hermes({}, ['level=INFO msg="hermes gateway" stderr="[gateway] ready"', '<b>not html</b>']) });
    const section = screen.getByRole('region', { name: 'Runtime hermes:work' });
    const text = section.textContent!;
    for (const w of ['0.19.0', 'Gateway dialect', 'A', 'images, reasoning_effort', '3.11.2', 'pid 77', '1 restart']) expect(text).toContain(w);
    const out = within(section).getByLabelText('Runtime hermes:work stderr');
    expect(out.textContent).toContain('[gateway] ready');
    expect(out.querySelector('b')).toBeNull(); // output is text, never markup
  });

  it('says what went wrong and what to do when Hermes could not start', () => {
    render(RuntimeDiagnostics, {
      runtime: hermes({ state: 'down', pid: 0, agent_version: '', dialect: '', features: [], error: '/usr/bin/python3 (Python 3.11.2) has no Hermes Agent installed', hint: "Choose the Python of Hermes's own virtualenv" }),
    });
    const section = screen.getByRole('region', { name: 'Runtime hermes:work' });
    expect(section.textContent).toContain('has no Hermes Agent installed');
    expect(section.textContent).toContain("Choose the Python of Hermes's own virtualenv");
    expect(section.textContent).toContain('not running');
    expect(section.textContent).toContain('Nothing written yet.');
    expect(section.textContent).not.toContain('Gateway dialect');
  });
});
