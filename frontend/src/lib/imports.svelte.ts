// The import of existing histories in the window (docs/import.md): the user's own
// Hermes sessions, chosen in the Hermes sessions dialog or all of a profile, and a
// Talaria web folder chosen in a native dialog. One import runs at a time in the host;
// this store follows its progress events, offers Cancel, and keeps the last report
// (what was skipped or failed, and why). App owns one instance.

import type { ImportsApi, Unsubscribe } from './api';
import { errorText } from './api';
import type { Progress } from './protocol';

export type ImportProgress = Progress;

/** "Imported 3 · skipped 1 · failed 1 of 6": the counts of p. */
export function importSummary(p: ImportProgress): string {
  const done = p.imported + p.skipped + p.failed;
  const parts = [`Imported ${p.imported}`];
  if (p.skipped) parts.push(`skipped ${p.skipped}`);
  if (p.failed) parts.push(`failed ${p.failed}`);
  const of = p.total ? ` of ${p.total}` : '';
  if (p.state === 'running') return `${parts.join(' · ')} (${done}${of})`;
  return `${parts.join(' · ')}${of}`;
}

/** A heading for p's dialog. */
export function importTitle(p: ImportProgress | null): string {
  if (!p) return 'Import';
  const what = p.kind === 'web' ? 'Talaria web folder' : 'Hermes sessions';
  switch (p.state) {
    case 'running':
      return `Importing ${what}…`;
    case 'cancelled':
      return `Import of ${what} cancelled`;
    case 'failed':
      return `Import of ${what} failed`;
    default:
      return `${what}: imported`;
  }
}

export class ImportStore {
  /** The running or last import (null before the first). */
  progress = $state<ImportProgress | null>(null);
  /** Why the last start or cancel was refused. */
  error = $state<string | null>(null);
  /** The import dialog (progress, Cancel, the report). */
  open = $state(false);
  /** The Hermes session ids ticked in the Hermes sessions dialog. */
  selected = $state<string[]>([]);
  /** Called when an import has made chats (the sidebar reloads them itself). */
  onimported: ((sessionIds: string[]) => void) | null = null;

  private unsubscribe: Unsubscribe | null = null;

  constructor(private readonly api: ImportsApi) {}

  get running(): boolean {
    return this.progress?.state === 'running';
  }

  isSelected(id: string): boolean {
    return this.selected.includes(id);
  }

  toggle(id: string): void {
    this.selected = this.isSelected(id) ? this.selected.filter((x) => x !== id) : [...this.selected, id];
  }

  /** Imports the ticked Hermes sessions of runtimeId, or all of that profile. */
  async importHermes(runtimeId: string, all: boolean): Promise<boolean> {
    const ids = all ? [] : [...this.selected];
    if (!all && ids.length === 0) {
      this.error = 'Tick the Hermes sessions to import first, or import all of this profile.';
      return false;
    }
    return this.begin(() => this.api.startHermes(runtimeId, ids, all), () => (this.selected = []));
  }

  /** Asks for a Talaria web folder, then imports it; false when cancelled or refused. */
  async importWebFolder(): Promise<boolean> {
    let folder: string;
    try {
      folder = await this.api.chooseWebFolder();
    } catch (err) {
      this.error = errorText(err);
      this.open = true;
      return false;
    }
    if (!folder) return false;
    return this.begin(() => this.api.startWeb(folder));
  }

  /** Stops the running import after the chat it is writing. */
  async cancel(): Promise<void> {
    const p = this.progress;
    if (!p || p.state !== 'running') return;
    try {
      this.apply(await this.api.cancel(p.job_id));
    } catch (err) {
      this.error = errorText(err);
    }
  }

  /** Takes a progress event: the current import's, or a newer one's. */
  apply(p: ImportProgress): void {
    const cur = this.progress;
    if (cur && cur.job_id === p.job_id && p.state === 'running') {
      // An older report of the same import (the start's answer after its first events).
      if (cur.state !== 'running' || done(p) < done(cur)) return;
    }
    const madeBefore = cur && cur.job_id === p.job_id ? cur.session_ids.length : 0;
    this.progress = p;
    if (p.session_ids.length > madeBefore) this.onimported?.(p.session_ids);
  }

  close(): void {
    this.open = false;
    if (!this.running) this.error = null;
  }

  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = null;
  }

  private async begin(start: () => Promise<ImportProgress>, onStarted?: () => void): Promise<boolean> {
    this.listen();
    this.error = null;
    this.open = true;
    try {
      const p = await start();
      onStarted?.();
      this.apply(p);
      return true;
    } catch (err) {
      this.error = errorText(err);
      return false;
    }
  }

  private listen(): void {
    if (!this.unsubscribe) this.unsubscribe = this.api.onProgress((p) => this.apply(p));
  }
}

function done(p: ImportProgress): number {
  return p.imported + p.skipped + p.failed;
}
