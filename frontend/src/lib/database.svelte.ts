// The database check as the window shows it: the background check's events (damage
// found, recovering, recovered or not) and the report of what a recovery saved, shown
// until dismissed. One area of the window's state (issue 25); the main store hosts it as
// `store.database` and reopens the open chat once the database was recovered.

import type { Api } from './api';
import { errorMessage } from './api';
import type { DatabaseEvent, RecoveryReport } from './protocol';
import type { SessionList } from './sessions.svelte';

/** What DatabaseRecovery needs of the main store. */
export interface DatabaseHost {
  /** A short, non-error word (here: the database is being recovered). */
  info: string | null;
  /** Error with no session to pin it to (the database could not be recovered). */
  globalError: string | null;
  readonly list: Pick<SessionList, 'refreshSessions'>;
  /** Reads the open chat's rows again, or closes it when it is gone. */
  reopenActive(): Promise<void>;
  /** Shows a failed action under the open chat (or above the window when none is open). */
  actionError(label: string, err: unknown): void;
}

export class DatabaseRecovery {
  /** What the start-up check recovered from a damaged database, until dismissed. */
  recovery = $state<RecoveryReport | null>(null);

  constructor(
    private readonly api: Pick<Api, 'dismissRecoveryReport' | 'getRecoveryReport'>,
    private readonly host: DatabaseHost,
  ) {}

  async dismissRecovery(): Promise<void> {
    try {
      await this.api.dismissRecoveryReport();
      this.recovery = null;
    } catch (err) {
      this.host.actionError('Could not dismiss the recovery report', err);
    }
  }

  /** The background database check: damage found, recovered (the report is shown) or not. */
  async onDatabase(e: DatabaseEvent): Promise<void> {
    if (e.state === 'recovering') {
      this.host.info = e.message || 'The database file is damaged; Talaria is recovering it.';
      return;
    }
    if (e.state === 'failed') {
      this.host.info = null;
      this.host.globalError = [e.message, e.hint].filter(Boolean).join(' ') || 'The database file is damaged and could not be recovered.';
      return;
    }
    this.host.info = null;
    if (e.report?.recovered) this.recovery = e.report;
    else void this.loadRecovery();
    await this.host.list.refreshSessions();
    await this.host.reopenActive();
  }

  async loadRecovery(): Promise<void> {
    try {
      const r = await this.api.getRecoveryReport();
      this.recovery = r.recovered ? r : null;
    } catch (err) {
      console.warn('GetRecoveryReport failed', errorMessage(err));
    }
  }
}
