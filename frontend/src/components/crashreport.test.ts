// @vitest-environment jsdom
// The Diagnostics view shows the app process's newest crash report (issue 26, item 9a):
// when, its first line and its file, and the report itself as text.
import { render, screen, within } from '@testing-library/svelte';
import { beforeAll, describe, expect, it } from 'vitest';
import { fakeApi } from '../test/fakeApi';
import DiagnosticsDialog from './DiagnosticsDialog.svelte';

beforeAll(() => {
  const proto = HTMLDialogElement.prototype as HTMLDialogElement & { showModal?: () => void };
  if (typeof proto.showModal !== 'function') {
    proto.showModal = function (this: HTMLDialogElement) {
      this.setAttribute('open', '');
    };
    proto.close = function (this: HTMLDialogElement) {
      this.removeAttribute('open');
    };
  }
});

const noop = () => {};

describe('Diagnostics: the last crash', () => {
  it('shows the newest crash report, as text', async () => {
    const d = await fakeApi().api.getDiagnostics();
    d.last_crash = {
      path: '/d/logs/crashes/crash-20261204T081500.000Z.log', at: Date.UTC(2026, 11, 4, 8, 15),
      summary: 'panic: <b>boom</b>', text: 'panic: <b>boom</b>\n\ngoroutine 7 [running]:\nmain.main()\n',
    };
    render(DiagnosticsDialog, { open: true, diagnostics: d, onrefresh: noop, onrestart: noop, onopenlogs: noop, onclose: noop });
    const dialog = screen.getByRole('dialog', { name: 'Diagnostics' });
    expect(within(dialog).getByText('/d/logs/crashes/crash-20261204T081500.000Z.log')).toBeTruthy();
    expect(within(dialog).getByText('panic: <b>boom</b>')).toBeTruthy();
    expect(dialog.querySelector('time')!.getAttribute('datetime')).toBe('2026-12-04T08:15:00.000Z');
    const report = within(dialog).getByLabelText('Crash report');
    expect(report.textContent).toContain('goroutine 7 [running]');
    expect(dialog.querySelector('b')).toBeNull();
  });

  it('says none when the app never crashed', async () => {
    const d = await fakeApi().api.getDiagnostics();
    render(DiagnosticsDialog, { open: true, diagnostics: d, onrefresh: noop, onrestart: noop, onopenlogs: noop, onclose: noop });
    const dialog = screen.getByRole('dialog', { name: 'Diagnostics' });
    expect(within(dialog).getByText('Last crash').nextElementSibling!.textContent).toBe('none');
    expect(within(dialog).queryByLabelText('Crash report')).toBeNull();
  });
});
