// Supervision as the window shows it: the Diagnostics view (each runtime's sidecar,
// the database, the logs) and restarting the agent of the open chat. One area of the
// window's state (issue 25); the main store hosts it as `store.supervision` and ends
// `restarting` when a sidecar status says the agent is back.

import type { Api } from './api';
import { errorText } from './api';
import type { Diagnostics } from './protocol';

/** What Supervision needs of the main store. */
export interface SupervisionHost {
  /** The open chat's runtime id ("builtin" when none is open). */
  activeRuntime(): string;
  /** Shows a failed action under the open chat (or above the window when none is open). */
  actionError(label: string, err: unknown): void;
}

export class Supervision {
  /** The Diagnostics view is open. */
  diagnosticsOpen = $state(false);
  /** GetDiagnostics's last answer; null until read. */
  diagnostics = $state<Diagnostics | null>(null);
  diagnosticsLoading = $state(false);
  /** Why the last read, restart or "Open logs folder" failed (shown in Diagnostics). */
  diagnosticsError = $state<string | null>(null);
  /** A restart was asked for and the sidecar has not said it is back. */
  restarting = $state(false);

  constructor(
    private readonly api: Pick<Api, 'restartAgent' | 'restartRuntime' | 'getDiagnostics' | 'openLogsFolder'>,
    private readonly host: SupervisionHost,
  ) {}

  /** Restarts the open chat's runtime (the built-in agent when none is open). */
  async restartAgent(): Promise<void> {
    this.restarting = true;
    this.diagnosticsError = null;
    try {
      const id = this.host.activeRuntime();
      if (id === 'builtin') await this.api.restartAgent();
      else await this.api.restartRuntime(id);
    } catch (err) {
      this.restarting = false;
      if (this.diagnosticsOpen) this.diagnosticsError = errorText(err);
      else this.host.actionError('Could not restart the agent', err);
    }
    if (this.diagnosticsOpen) void this.loadDiagnostics();
  }

  openDiagnostics(): void {
    this.diagnosticsOpen = true;
    void this.loadDiagnostics();
  }

  async loadDiagnostics(): Promise<void> {
    this.diagnosticsLoading = true;
    try {
      this.diagnostics = await this.api.getDiagnostics();
      this.diagnosticsError = null;
    } catch (err) {
      this.diagnosticsError = errorText(err);
    } finally {
      this.diagnosticsLoading = false;
    }
  }

  async openLogsFolder(): Promise<void> {
    try {
      await this.api.openLogsFolder();
    } catch (err) {
      this.diagnosticsError = errorText(err);
    }
  }
}
