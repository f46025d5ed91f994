// A fake app.Imports for store and component tests. Test code only.

import { vi } from 'vitest';
import type { ImportsApi } from '../lib/api';
import type { ImportProgress } from '../lib/imports.svelte';

/** A progress with every field; extra overrides. */
export function progress(extra: Partial<ImportProgress> = {}): ImportProgress {
  return {
    job_id: 'import-1', kind: 'hermes', source: 'hermes', state: 'running', total: 0, imported: 0, skipped: 0, failed: 0,
    current: '', problems: [], session_ids: [], cancel_requested: false, started_at: 1_800_000_000_000, ...extra,
  };
}

/** A fake app.Imports: starts answer the first progress; emit sends a progress event. */
export function fakeImports() {
  let listener: ((p: ImportProgress) => void) | null = null;
  const api = {
    startHermes: vi.fn(async (runtimeId: string, _ids: string[], _all: boolean) => progress({ source: runtimeId })),
    chooseWebFolder: vi.fn(async () => '/home/me/talaria-web'),
    startWeb: vi.fn(async (folder: string) => progress({ kind: 'web', source: folder, job_id: 'import-2' })),
    cancel: vi.fn(async (jobId: string) => progress({ job_id: jobId, cancel_requested: true })),
    status: vi.fn(async () => progress({ state: 'done' })),
    onProgress: vi.fn((cb: (p: ImportProgress) => void) => {
      listener = cb;
      return () => (listener = null);
    }),
  } satisfies ImportsApi;
  return { api, emit: (p: ImportProgress) => listener?.(p), listening: () => listener !== null };
}

