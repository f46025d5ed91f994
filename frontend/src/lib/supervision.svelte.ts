// Supervision as the window shows it: each runtime's sidecar status (the status bar),
// the Diagnostics view (each runtime's sidecar, the database, the logs) and restarting
// the agent of the open chat. One area of the window's state (issue 25); the main store
// hosts it as `store.supervision` and hands it the sidecar status events; `restarting`
// ends when a sidecar status says the agent is back.

import type { Api } from './api';
import { errorText } from './api';
import type { Diagnostics, SidecarStatus, Status } from './protocol';

/** What Supervision needs of the main store. */
export interface SupervisionHost {
  /** The open chat's runtime id ("builtin" when none is open). */
  activeRuntime(): string;
  /** Shows a failed action under the open chat (or above the window when none is open). */
  actionError(label: string, err: unknown): void;
}

export class Supervision {
  /** Every runtime's sidecar status, by runtime id ("builtin", "hermes:work", ...). */
  sidecars = $state<Record<string, SidecarStatus>>({});
  status = $state<Status | null>(null);
  /** When the sidecar status arrived (epoch ms): its restart countdown starts there. */
  sidecarAt = $state(Date.now());
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

  /** The status bar's sidecar: the active chat's runtime's, else the built-in one. */
  get sidecar(): SidecarStatus | null {
    const id = this.host.activeRuntime();
    return this.sidecars[id] ?? (id === 'builtin' ? null : (this.sidecars['builtin'] ?? null));
  }

  /** GetStatus's answer; the sidecars not heard of yet are taken from it. */
  setStatus(status: Status): void {
    this.status = status;
    for (const st of [status.sidecar, ...(status.runtimes ?? [])]) {
      if (st && !this.sidecars[st.runtime_id || 'builtin']) this.setSidecar(st);
    }
  }

  setSidecar(s: SidecarStatus): void {
    const id = s.runtime_id || 'builtin';
    this.sidecars = { ...this.sidecars, [id]: s };
    this.sidecarAt = Date.now();
    if (this.status && id === 'builtin') this.status = { ...this.status, sidecar: s };
    if (s.state !== 'restarting' && s.state !== 'down') this.restarting = false;
  }

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
