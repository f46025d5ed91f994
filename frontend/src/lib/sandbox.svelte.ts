// The sandbox in the window: the active chat's policy and workspace (its header), the
// defaults for new chats (Settings) and the approval audit log (its panel). Kept apart
// from AppStore; App owns one instance.

import type { Api } from './api';
import { errorText } from './api';
import type { AgentState, AuditEntry, AuditFilter, SandboxStatus, SessionInfo, SessionSandbox } from './protocol';

/** The policy's words in the header, e.g. "Workspace write · no network". */
export function policyLabel(v: SessionSandbox): string {
  switch (v.mode) {
    case 'full-access':
      return 'Full access';
    case 'read-only':
      return v.network ? 'Read-only · network' : 'Read-only · no network';
  }
  return v.network ? 'Workspace write · network' : 'Workspace write · no network';
}

/** What a policy lets commands do, for its tooltip and the picker. */
export function policyHelp(v: SessionSandbox): string {
  switch (v.mode) {
    case 'full-access':
      return 'Commands run outside the sandbox: they can read and change any of your files, secret stores included, and use the network. Only the app’s own data folder stays hidden.';
    case 'read-only':
      return 'Commands can read files but change nothing (a private /tmp aside); file edits ask first.' + (v.network ? ' Network allowed.' : ' No network.');
  }
  return 'Commands can change files in the workspace only; ~/.ssh, keyrings and browser profiles are hidden.' + (v.network ? ' Network allowed.' : ' No network.');
}

/** What the header says of a chat whose agent runs its own tools (the ACP runtime). */
export interface AgentSafety {
  /** The badge's words, e.g. "OpenCode is not sandboxed · acts without asking". */
  label: string;
  /** What holds, in full: what the agent runs on its own, what Talaria confines and approves. */
  help: string;
  /** The agent is known to act without asking in its current mode. */
  selfApproves: boolean;
}

/**
 * What actually holds for a chat on an ACP agent (rpc.hello's sandbox has mechanism
 * "acp"), else null. Such an agent runs its own tools itself and asks only what its own
 * permissions say (state.self_approves: why it is known not to ask in its current mode);
 * Talaria confines and approves only what the agent asks of it: fs/* inside the workspace
 * under the chat's policy, terminal/* checked for dangerous commands and confined by
 * terminal_mechanism (without one, each command asks).
 */
export function agentSafety(status: SandboxStatus | null, state: AgentState | null, policy: SessionSandbox | null): AgentSafety | null {
  if (status?.mechanism !== 'acp') return null;
  const agent = status.agent || 'The agent';
  const why = state?.self_approves ?? '';
  const full = policy?.mode === 'full-access';
  // The agent's own tools are never confined: the badge says so first (a badge saying
  // Talaria guards files read as if the agent's own file reads were guarded too).
  const label = `${agent} is not sandboxed · ${why ? 'acts without asking' : 'asks by its own rules'}${full ? ' · Full access' : ''}`;
  const own =
    `${agent} runs its own tools (its file edits, its shell commands) itself, outside Talaria’s sandbox, and asks only when its own permissions say so` +
    (why ? `. In this mode it acts without asking (${why}): those actions show no approval card.` : '; only what it asks shows an approval card.');
  const terminal = status.terminal_mechanism
    ? `confined by ${status.terminal_mechanism}`
    : 'each asks before it runs (no sandbox here)';
  const talaria =
    ` Talaria confines and approves only what ${agent} asks of it: its file reads and writes (fs/*) stay inside the workspace` +
    (policy ? ` (${policyLabel(policy)})` : '') +
    `, and the commands it runs in Talaria’s terminal (terminal/*) are checked for dangerous ones and ${terminal}.`;
  return { label, help: own + talaria, selfApproves: why !== '' };
}

/** A folder shown in the header: whole up to 36 characters, else its last two parts ("…/projects/app"). */
export function shortPath(p: string): string {
  if (!p) return '(default folder)';
  if (p.length <= 36) return p;
  const parts = p.split(/[\\/]+/).filter(Boolean);
  return parts.length <= 2 ? p : '…/' + parts.slice(-2).join('/');
}

export class SandboxStore {
  /** The active chat's policy, once loaded. */
  policy = $state<SessionSandbox | null>(null);
  sessionId = $state<string | null>(null);
  error = $state<string | null>(null);
  workspaceError = $state<string | null>(null);
  saving = $state(false);
  /** The policy new chats start with (Settings). */
  defaults = $state<SessionSandbox | null>(null);

  /** The audit panel. */
  auditOpen = $state(false);
  audit = $state<AuditEntry[]>([]);
  auditFilter = $state<AuditFilter>({});
  auditError = $state<string | null>(null);
  auditNote = $state<string | null>(null);
  loadingAudit = $state(false);

  constructor(private readonly api: Api) {}

  /** Loads the policy of a chat (when it changes). */
  async load(sessionId: string): Promise<void> {
    this.sessionId = sessionId;
    this.error = null;
    this.workspaceError = null;
    try {
      const p = await this.api.getSessionSandbox(sessionId);
      if (this.sessionId === sessionId) this.policy = p;
    } catch (err) {
      if (this.sessionId === sessionId) this.error = errorText(err);
    }
  }

  /** Sets the active chat's policy; true when the host took it. */
  async setPolicy(v: SessionSandbox): Promise<boolean> {
    const id = this.sessionId;
    if (!id) return false;
    this.saving = true;
    try {
      await this.api.setSessionSandbox(id, v);
      if (this.sessionId === id) {
        this.policy = { mode: v.mode, network: v.mode === 'full-access' || v.network };
        this.error = null;
      }
      return true;
    } catch (err) {
      this.error = errorText(err);
      return false;
    } finally {
      this.saving = false;
    }
  }

  /** Asks for a folder and makes it the chat's workspace; the updated session, null when cancelled or refused. */
  async chooseWorkspace(session: SessionInfo): Promise<SessionInfo | null> {
    this.workspaceError = null;
    try {
      const path = await this.api.chooseFolder('Workspace of this chat', session.workspace);
      if (!path) return null;
      return await this.api.setSessionWorkspace(session.id, path);
    } catch (err) {
      this.workspaceError = errorText(err);
      return null;
    }
  }

  async loadDefaults(): Promise<void> {
    try {
      this.defaults = await this.api.getDefaultSandbox();
    } catch (err) {
      this.error = errorText(err);
    }
  }

  async setDefaults(v: SessionSandbox): Promise<boolean> {
    try {
      await this.api.setDefaultSandbox(v);
      this.defaults = v;
      return true;
    } catch (err) {
      this.error = errorText(err);
      return false;
    }
  }

  /** Asks for a folder and makes it Settings' default workspace; the folder, null when cancelled or refused. */
  async chooseDefaultWorkspace(current: string): Promise<string | null> {
    this.workspaceError = null;
    try {
      const path = await this.api.chooseFolder('Default workspace for new chats', current);
      if (!path) return null;
      return await this.api.setDefaultWorkspace(path);
    } catch (err) {
      this.workspaceError = errorText(err);
      return null;
    }
  }

  async openAudit(): Promise<void> {
    this.auditOpen = true;
    await this.loadAudit();
  }

  async loadAudit(): Promise<void> {
    this.loadingAudit = true;
    try {
      this.audit = await this.api.listAudit({ ...this.auditFilter, limit: 500 });
      this.auditError = null;
    } catch (err) {
      this.auditError = errorText(err);
    } finally {
      this.loadingAudit = false;
    }
  }

  async clearAudit(): Promise<void> {
    try {
      const n = await this.api.clearAudit();
      this.audit = [];
      this.auditNote = `Cleared ${n} ${n === 1 ? 'entry' : 'entries'}.`;
    } catch (err) {
      this.auditError = errorText(err);
    }
  }

  async exportAudit(): Promise<void> {
    try {
      const path = await this.api.exportAudit(this.auditFilter);
      this.auditNote = path ? `Saved to ${path}` : null;
    } catch (err) {
      this.auditError = errorText(err);
    }
  }
}
