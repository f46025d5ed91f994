// Remote hosts: the user's other machines whose agents run there through their own ssh
// (backend/remote; docs/remote.md). The only module that calls app.Remotes' bindings.
// A host's runtimes ("Built-in on <host>", "Hermes Agent on <host>", ACP agents found
// there) reach the runtime pickers through ListRuntimes.

import * as bound from './bindings.gen';
import { ApiError } from './api';
import type { RemoteHost, RemoteHostRecord, RemoteProbe } from './protocol';

export type { RemoteHost, RemoteHostRecord, RemoteProbe };

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw ApiError.from(err);
  }
}

function normalise(r: RemoteHostRecord): RemoteHostRecord {
  const p = r.probe;
  return { ...r, probe: p ? { ...p, agents: p.agents ?? {}, notes: p.notes ?? [] } : null };
}

/** app.Remotes' calls. */
export const remotesApi = {
  async hosts(): Promise<RemoteHostRecord[]> {
    return (await call(() => bound.Remotes.ListRemoteHosts())).map(normalise);
  },
  /** Adds h (previous: '') or replaces, and renames, the host named previous. */
  async save(h: RemoteHost, previous = ''): Promise<RemoteHostRecord> {
    return normalise(await call<RemoteHostRecord>(() => bound.Remotes.SaveRemoteHost(h, previous)));
  },
  async remove(name: string): Promise<void> {
    await call<void>(() => bound.Remotes.DeleteRemoteHost(name));
  },
  async test(name: string): Promise<RemoteHostRecord> {
    return normalise(await call<RemoteHostRecord>(() => bound.Remotes.TestRemoteHost(name)));
  },
};

export type RemotesApi = typeof remotesApi;

/** What a host's last Test found, in one line ("Linux x86_64 · Hermes Agent 0.19.0 · OpenCode"). */
export function describeProbe(p: RemoteProbe | null | undefined, agentNames: Record<string, string> = {}): string {
  if (!p) return 'Not tested yet.';
  const parts = [`${p.os} ${p.arch}`];
  if (p.hermes_version) parts.push(`Hermes Agent ${p.hermes_version}`);
  for (const id of Object.keys(p.agents ?? {}).sort()) parts.push(agentNames[id] ?? id);
  parts.push(p.bubblewrap ? 'bubblewrap (sandbox)' : 'no bubblewrap (no sandbox)');
  return parts.join(' · ');
}
