// The runtimes a chat can run on (built-in, Hermes profiles, ACP agents) as the
// pickers show them: the list from the host, the default for new chats, and moving a
// chat to another runtime. Kept apart from AppStore; App owns one instance.

import type { Api } from './api';
import { errorText } from './api';
import type { RuntimeOption, SessionInfo } from './protocol';

/**
 * The kind of agent runtime id runs, wherever it runs (Go's core.AgentKind): "builtin",
 * "hermes", "acp"; a remote runtime "ssh:<host>[:<id>]" runs the kind of <id> (none:
 * built-in) on its host.
 */
export function agentKind(id: string | null | undefined): string {
  const rid = id || 'builtin';
  if (rid.startsWith('ssh:')) {
    const rest = rid.slice('ssh:'.length);
    const i = rest.indexOf(':');
    return i < 0 ? 'builtin' : rest.slice(i + 1).split(':')[0];
  }
  return rid.split(':')[0];
}

/** The remote host a runtime id runs on ("ssh:<host>[:...]"), or null for this machine. */
export function remoteHost(id: string | null | undefined): string | null {
  if (!id?.startsWith('ssh:')) return null;
  return id.slice('ssh:'.length).split(':')[0] || null;
}

export class RuntimesStore {
  /** What the host offers, the built-in runtime first. */
  options = $state<RuntimeOption[]>([]);
  /** The last failure to list or change runtimes, for the picker to show. */
  error = $state<string | null>(null);
  /** A change is on its way to the host. */
  saving = $state(false);

  constructor(private readonly api: Api) {}

  /** The id new chats use. */
  get defaultId(): string {
    return this.options.find((o) => o.default)?.id ?? 'builtin';
  }

  /** The option of runtime id; a placeholder when the host no longer lists it. */
  option(id: string | undefined): RuntimeOption {
    const rid = id || 'builtin';
    return (
      this.options.find((o) => o.id === rid) ?? {
        id: rid, kind: rid.split(':')[0], label: rid, detail: '', available: false,
        problem: `This chat's runtime (${rid}) is not available.`, hint: 'Choose another runtime for it.', default: false,
      }
    );
  }

  async refresh(): Promise<void> {
    try {
      this.options = await this.api.listRuntimes();
      this.error = null;
    } catch (err) {
      this.error = errorText(err);
    }
  }

  /** Makes id the runtime of new chats; false (with error set) when the host refused. */
  async setDefault(id: string): Promise<boolean> {
    return this.change(() => this.api.setDefaultRuntime(id));
  }

  /** Moves an idle chat to runtime id; the updated session, or null (error set). */
  async setForSession(sessionId: string, id: string): Promise<SessionInfo | null> {
    let out: SessionInfo | null = null;
    const ok = await this.change(async () => {
      out = await this.api.setSessionRuntime(sessionId, id);
    });
    return ok ? out : null;
  }

  private async change(fn: () => Promise<unknown>): Promise<boolean> {
    this.saving = true;
    try {
      await fn();
      this.error = null;
      await this.refresh();
      return true;
    } catch (err) {
      this.error = errorText(err);
      return false;
    } finally {
      this.saving = false;
    }
  }
}
