// @vitest-environment jsdom
// Importing existing histories through App with a fake backend: Hermes sessions ticked
// in the Hermes sessions dialog (or all of the profile) are imported with a progress
// count and Cancel; a Talaria web folder chosen from the sidebar ends with a report of
// what was skipped or damaged, and the first imported chat opens.
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it } from 'vitest';
import App from '../App.svelte';
import { findElement } from '../test/dom';
import { fakeApi, session } from '../test/fakeApi';
import { fakeImports, progress } from '../test/fakeImports';

beforeAll(() => {
  Element.prototype.scrollIntoView ??= function () {};
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

async function start() {
  const f = fakeApi();
  f.sessions.set('a', session('a', 5, { title: 'Deploy notes', runtime: 'builtin' }));
  const imp = fakeImports();
  render(App, { backend: f.api, importer: imp.api, armDelayMs: 0 });
  const user = userEvent.setup();
  await waitFor(() => expect(screen.getByRole('heading', { name: 'Deploy notes' })).toBeTruthy());
  return { f, imp, user };
}

describe('Importing Hermes sessions', () => {
  it('imports the ticked sessions with a count, cancels, and reports', async () => {
    const { f, imp, user } = await start();
    await user.click(screen.getAllByRole('button', { name: /settings/i })[0]);
    // Settings and its Hermes section load lazily.
    await user.click(await screen.findByRole('button', { name: 'Hermes sessions…' }));
    const list = await findElement('[data-hermes-session-list]');
    const importSelected = (await screen.findByRole('button', { name: 'Import selected (0)' })) as HTMLButtonElement;
    expect(importSelected.disabled).toBe(true);
    await user.click(within(list).getByRole('checkbox', { name: 'Import Trip planning' }));
    await user.click(screen.getByRole('button', { name: 'Import selected (1)' }));
    await waitFor(() => expect(imp.api.startHermes).toHaveBeenCalledWith('hermes', ['20261201_081947_e89317'], false));
    const count = await findElement('[data-import-count]');
    imp.emit(progress({ total: 1, current: '20261201_081947_e89317 (Trip planning)' }));
    await waitFor(() => expect(count.textContent).toBe('Imported 0 (0 of 1)'));
    expect(await screen.findByRole('heading', { name: 'Importing Hermes sessions…' })).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Cancel import' }));
    expect(imp.api.cancel).toHaveBeenCalledWith('import-1');
    expect((await findElement('[data-import-cancelling]')).textContent).toContain('Cancelling');
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Cancel import' })).toBeNull());
    imp.emit(progress({ total: 1, state: 'cancelled', ended_at: 2 }));
    expect(await screen.findByRole('heading', { name: 'Import of Hermes sessions cancelled' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Cancel import' })).toBeNull();

    // All of the profile: one imported, one already a chat; the list is asked again.
    await user.click(within(await findElement('dialog.import-dialog')).getByRole('button', { name: 'Close' }));
    const asked = f.api.hermesSessions.mock.calls.length;
    await user.click(await screen.findByRole('button', { name: 'Import all of this profile' }));
    await waitFor(() => expect(imp.api.startHermes).toHaveBeenLastCalledWith('hermes', [], true));
    imp.emit(progress({ total: 2, imported: 1, skipped: 1, state: 'done', session_ids: ['a'], ended_at: 3,
      problems: [{ item: '20261130_101010_aaaaaa (Refactor notes)', outcome: 'skipped', message: 'already a Talaria chat (continued or imported before)' }] }));
    await waitFor(async () => expect((await findElement('[data-import-count]')).textContent).toBe('Imported 1 · skipped 1 of 2'));
    expect((await findElement('[data-import-skipped]')).textContent).toContain('already a Talaria chat');
    await waitFor(() => expect(f.api.hermesSessions.mock.calls.length).toBeGreaterThan(asked));
  });
});

describe('Importing a Talaria web folder', () => {
  it('asks for the folder, shows the damaged files, and opens the first imported chat', async () => {
    const { f, imp, user } = await start();
    f.sessions.set('w1', session('w1', 2, { title: 'Paddock census', runtime: 'builtin' }));
    await user.click(screen.getByRole('button', { name: 'Import web…' }));
    await waitFor(() => expect(imp.api.startWeb).toHaveBeenCalledWith('/home/me/talaria-web'));
    expect(imp.api.chooseWebFolder).toHaveBeenCalled();
    imp.emit(progress({ job_id: 'import-2', kind: 'web', source: '/home/me/talaria-web', total: 4, imported: 2, skipped: 1, failed: 1,
      state: 'done', session_ids: ['w1', 'w2'], ended_at: 5, problems: [
        { item: 'broken.json', outcome: 'failed', message: 'cannot import this file: not a JSON object (it ends too early)' },
        { item: 's1 (1).json', outcome: 'skipped', message: 'a duplicate of s1.json (the same session_id s1)' },
      ] }));
    const failed = await findElement('[data-import-failed]');
    await waitFor(() => expect(failed.textContent).toContain('broken.json'));
    expect(failed.textContent).toContain('not a JSON object');
    expect((await findElement('[data-import-skipped]')).textContent).toContain('a duplicate of s1.json');
    expect(screen.getByText('/home/me/talaria-web')).toBeTruthy();
    await user.click(screen.getByRole('button', { name: 'Open the first imported chat' }));
    await waitFor(() => expect(screen.getByRole('heading', { name: 'Paddock census' })).toBeTruthy());
  });
});
