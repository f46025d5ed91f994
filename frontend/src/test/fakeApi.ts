// A fake backend for store and component tests: sessions and messages in memory,
// journals per stream, pending cards per session, event hooks. Test code only.

import { vi } from 'vitest';
import type { Api } from '../lib/api';
import type {
  AllowlistEntry,
  ApprovalChoice,
  ClarifyAnswer,
  Frame,
  MessageView,
  PendingView,
  SessionInfo,
  SessionView,
  VaultAnswer,
  VaultResult,
} from '../lib/protocol';

export function emptyPending(): PendingView {
  return { approval: null, clarify: null, approval_count: 0, clarify_count: 0, yolo: false };
}

export const usage0 = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 };

export function session(id: string, updated: number, extra: Partial<SessionInfo> = {}): SessionInfo {
  return {
    id, title: `t-${id}`, title_manual: false, model: 'm', workspace: '/w', created_at: updated, updated_at: updated,
    active_stream_id: '', message_count: 0, usage: usage0, ...extra,
  };
}

export function message(id: string, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  return { id, position: 1, role, content, reasoning: '', kind: '', stream_id: '', created_at: 0, ...extra };
}

/** A fake backend: sessions and messages in memory, journals per stream, event hooks. */
export function fakeApi() {
  const sessions = new Map<string, SessionInfo>();
  const transcripts = new Map<string, MessageView[]>();
  const journals = new Map<string, Frame[]>();
  const pending = new Map<string, PendingView>();
  const allowlist: AllowlistEntry[] = [];
  const hooks = { frame: (_f: Frame) => {}, changed: () => {}, sidecar: (_s: unknown) => {}, open: (_id: string) => {} };
  const emit = (f: Frame) => {
    journals.set(f.stream_id, [...(journals.get(f.stream_id) ?? []), f]);
    hooks.frame(f);
  };
  const api = {
    newSession: vi.fn(async () => {
      const s = session(`n${sessions.size + 1}`, 10_000);
      sessions.set(s.id, s);
      return s;
    }),
    listSessions: vi.fn(async () => [...sessions.values()].map((s) => ({ ...s }))),
    getSession: vi.fn(async (id: string): Promise<SessionView> => ({
      session: { ...sessions.get(id)! }, messages: [...(transcripts.get(id) ?? [])],
    })),
    startTurn: vi.fn(async (sid: string, text: string) => {
      const user = message(`u-${text}`, 'user', text, { stream_id: 'st1' });
      sessions.get(sid)!.active_stream_id = 'st1';
      transcripts.set(sid, [...(transcripts.get(sid) ?? []), user]);
      return { stream_id: 'st1', user_message: user };
    }),
    cancel: vi.fn(async () => {}),
    streamSince: vi.fn(async (id: string, seq: number) => (journals.get(id) ?? []).filter((f) => f.seq > seq)),
    getSettings: vi.fn(async () => ({
      provider_name: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: 'm', has_api_key: false,
      keyring_available: true, keyring_error: '', data_dir: '/d', log_dir: '/l',
    })),
    saveSettings: vi.fn(),
    checkProvider: vi.fn(async () => ({ ok: true, message: '', hint: '', models: ['m'] })),
    getStatus: vi.fn(async () => ({
      sidecar: { state: 'ready' as const, runtime: 'builtin', agent_version: '1', sidecar_version: '1', attempt: 0, next_retry_s: 0, error: '', hint: '' },
      data_dir: '/d', log_dir: '/l', db_path: '/d/db', version: 'v',
    })),
    openURL: vi.fn(),
    onFrame: vi.fn((cb: (f: Frame) => void) => ((hooks.frame = cb), () => {})),
    onSessionsChanged: vi.fn((cb: () => void) => ((hooks.changed = cb), () => {})),
    onSidecarStatus: vi.fn((cb: (s: unknown) => void) => ((hooks.sidecar = cb), () => {})),
    onOpenSession: vi.fn((cb: (id: string) => void) => ((hooks.open = cb), () => {})),
    // approvals, clarify, vault, allowlist
    respondApproval: vi.fn(async (_sid: string, _id: string, _choice: ApprovalChoice) => {}),
    setYolo: vi.fn(async (sid: string, on: boolean, _from: string) => {
      pending.set(sid, { ...(pending.get(sid) ?? emptyPending()), yolo: on });
    }),
    respondClarify: vi.fn(async (_sid: string, _id: string, _answers: ClarifyAnswer[]) => {}),
    respondVault: vi.fn(async (_sid: string, _id: string, answer: VaultAnswer, remember: boolean): Promise<VaultResult> => ({
      ok: true, kept: answer.decline ? 'declined' : remember ? 'keychain' : 'session',
    })),
    getPending: vi.fn(async (sid: string): Promise<PendingView> => ({ ...(pending.get(sid) ?? emptyPending()) })),
    getAllowlist: vi.fn(async (): Promise<AllowlistEntry[]> => [...allowlist]),
    removeAllowlist: vi.fn(async (pattern: string) => {
      const i = allowlist.findIndex((e) => e.pattern === pattern);
      if (i >= 0) allowlist.splice(i, 1);
    }),
  };
  return { api: api as unknown as Api & typeof api, sessions, transcripts, journals, emit, hooks, pending, allowlist };
}

export const flush = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};

export function frame(sid: string, st: string, seq: number, event: string, data: unknown = {}): Frame {
  return { session_id: sid, stream_id: st, seq, event, data };
}

