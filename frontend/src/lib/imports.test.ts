// The import store: starting (Hermes chosen or all, a web folder), following the
// host's progress events in any order, Cancel, and what a refused start says.
import { describe, expect, it } from 'vitest';
import { fakeImports, progress } from '../test/fakeImports';
import { ApiError } from './errors';
import { ImportStore, importSummary, importTitle } from './imports.svelte';

describe('ImportStore', () => {
  it('imports the ticked Hermes sessions and follows the progress to the end', async () => {
    const f = fakeImports();
    const s = new ImportStore(f.api);
    const made: string[][] = [];
    s.onimported = (ids) => made.push(ids);
    expect(await s.importHermes('hermes:work', false)).toBe(false); // nothing ticked
    expect(s.error).toMatch(/Tick the Hermes sessions/);
    s.toggle('h1');
    s.toggle('h2');
    s.toggle('h1');
    expect(s.selected).toEqual(['h2']);
    expect(await s.importHermes('hermes:work', false)).toBe(true);
    expect(f.api.startHermes).toHaveBeenCalledWith('hermes:work', ['h2'], false);
    expect(s.selected).toEqual([]);
    expect(s.open).toBe(true);
    expect(s.running).toBe(true);
    f.emit(progress({ total: 1, imported: 1, session_ids: ['chat-1'] }));
    expect(made).toEqual([['chat-1']]);
    // A late start answer or a stale event does not move the count back.
    s.apply(progress({ total: 1 }));
    expect(s.progress?.imported).toBe(1);
    f.emit(progress({ total: 1, imported: 1, session_ids: ['chat-1'], state: 'done', ended_at: 1 }));
    expect(s.running).toBe(false);
    f.emit(progress({ total: 1, imported: 1, session_ids: ['chat-1'] })); // after the end
    expect(s.progress?.state).toBe('done');
    expect(made.length).toBe(1);
    expect(importSummary(s.progress!)).toBe('Imported 1 of 1');
  });

  it('imports all of a profile', async () => {
    const f = fakeImports();
    const s = new ImportStore(f.api);
    s.toggle('h1');
    await s.importHermes('hermes', true);
    expect(f.api.startHermes).toHaveBeenCalledWith('hermes', [], true);
  });

  it('asks for a web folder, imports it, and cancels it', async () => {
    const f = fakeImports();
    const s = new ImportStore(f.api);
    expect(await s.importWebFolder()).toBe(true);
    expect(f.api.startWeb).toHaveBeenCalledWith('/home/me/talaria-web');
    expect(f.listening()).toBe(true);
    f.emit(progress({ kind: 'web', job_id: 'import-2', total: 8, imported: 2, skipped: 1, failed: 1, current: 's5.json' }));
    expect(importSummary(s.progress!)).toBe('Imported 2 · skipped 1 · failed 1 (4 of 8)');
    expect(importTitle(s.progress)).toBe('Importing Talaria web folder…');
    await s.cancel();
    expect(f.api.cancel).toHaveBeenCalledWith('import-2');
    f.emit(progress({ kind: 'web', job_id: 'import-2', total: 8, imported: 3, skipped: 1, failed: 1, state: 'cancelled' }));
    expect(importTitle(s.progress)).toBe('Import of Talaria web folder cancelled');
    s.dispose();
    expect(f.listening()).toBe(false);
  });

  it('does nothing when the folder dialog is cancelled, and says why a start was refused', async () => {
    const f = fakeImports();
    f.api.chooseWebFolder.mockResolvedValueOnce('');
    const s = new ImportStore(f.api);
    expect(await s.importWebFolder()).toBe(false);
    expect(f.api.startWeb).not.toHaveBeenCalled();
    expect(s.open).toBe(false);
    f.api.startWeb.mockRejectedValueOnce(new ApiError('an import is already running: wait for it to end or cancel it, then start this one', 'conflict'));
    expect(await s.importWebFolder()).toBe(false);
    expect(s.open).toBe(true);
    expect(s.error).toMatch(/already running/);
  });
});
