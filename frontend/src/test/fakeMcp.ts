// A fake of the MCP bound methods for component tests: servers in memory, a Test that
// reports what `reports` holds (or a connected server with one tool), a chat's menu.
// Test code only.

import { vi } from 'vitest';
import type { ChatMcp, McpAuthState, McpImportResult, McpPromptText, McpReport, McpServerConfig } from '../lib/mcp';

export function report(name: string, extra: Partial<McpReport> = {}): McpReport {
  return {
    name, ok: true, error: '', hint: '', stderr: '', server_name: `${name}-server`, server_version: '1.0.0', protocol: '2025-11-25',
    tools: [{ name: 'read_file', title: 'Read File', description: 'Reads a file', annotations: { read_only: true, destructive: false, idempotent: false, open_world: false } }],
    prompts: [{ name: 'summarise', title: 'Summarise', description: 'Summarise a text', arguments: [{ name: 'style', title: '', description: 'How', required: false }] }],
    resources: [{ uri: 'file:///notes.txt', name: 'notes.txt', title: '', description: '', mime_type: 'text/plain', size: 12, template: false }],
    took_ms: 120, ...extra,
  };
}

export function fakeMcp() {
  const servers: McpServerConfig[] = [];
  const reports = new Map<string, McpReport>();
  const auth = new Map<string, McpAuthState>();
  const chats = new Map<string, Record<string, boolean>>();
  const menu = (sid: string): ChatMcp => {
    const own = chats.get(sid) ?? {};
    return {
      servers: servers.map((s) => ({ name: s.name, transport: s.transport, on: own[s.name] ?? s.enabled, global: s.enabled, override: s.name in own })),
      note: '', used: true,
    };
  };
  const api = {
    listMcpServers: vi.fn(async () => servers.map((s) => ({ ...s, env: s.env.map((v) => ({ ...v, value: v.secret ? '' : v.value, has_value: v.secret ? !!v.value : v.has_value })) }))),
    saveMcpServer: vi.fn(async (s: McpServerConfig, previous: string) => {
      const i = servers.findIndex((x) => x.name === (previous || s.name));
      if (i >= 0) servers[i] = { ...s };
      else servers.push({ ...s });
      return { ...s };
    }),
    deleteMcpServer: vi.fn(async (name: string) => {
      const i = servers.findIndex((x) => x.name === name);
      if (i >= 0) servers.splice(i, 1);
    }),
    setMcpServerEnabled: vi.fn(async (name: string, on: boolean) => {
      const s = servers.find((x) => x.name === name);
      if (s) s.enabled = on;
    }),
    importMcpServers: vi.fn(async (text: string): Promise<McpImportResult> => {
      const parsed = JSON.parse(text) as { mcpServers: Record<string, { command?: string; args?: string[]; url?: string }> };
      const added: string[] = [];
      for (const [name, e] of Object.entries(parsed.mcpServers)) {
        servers.push({
          name, transport: e.url ? 'http' : 'stdio', command: e.command ?? '', args: e.args ?? [], env: [], cwd: '', url: e.url ?? '',
          headers: [], enabled: true, allow_read_only: false, sandbox: '', disabled_tools: [], writable_paths: [],
        });
        added.push(name);
      }
      return { added, replaced: [], skipped: [], servers: [...servers] };
    }),
    testMcpServer: vi.fn(async (s: McpServerConfig) => reports.get(s.name) ?? report(s.name)),
    mcpServerAuth: vi.fn(async (name: string): Promise<McpAuthState> => auth.get(name) ?? { server: name, state: 'none', reason: '', expires: '' }),
    signInMcpServer: vi.fn(async (name: string): Promise<McpAuthState> => {
      const st: McpAuthState = { server: name, state: 'signed_in', reason: '', expires: '' };
      auth.set(name, st);
      return st;
    }),
    signOutMcpServer: vi.fn(async (name: string) => {
      auth.set(name, { server: name, state: 'needs_sign_in', reason: 'the server asks for a sign-in', expires: '' });
    }),
    getChatMcp: vi.fn(async (sid: string) => menu(sid)),
    setChatMcpServer: vi.fn(async (sid: string, name: string, state: 'on' | 'off' | 'default') => {
      const own = { ...(chats.get(sid) ?? {}) };
      if (state === 'default') delete own[name];
      else own[name] = state === 'on';
      chats.set(sid, own);
      return menu(sid);
    }),
    listChatMcp: vi.fn(async (sid: string) => menu(sid).servers.filter((s) => s.on).map((s) => reports.get(s.name) ?? report(s.name))),
    getMcpPrompt: vi.fn(async (_sid: string, server: string, name: string, args: Record<string, string>): Promise<McpPromptText> => ({
      server, name, description: '', text: `Prompt ${name} of ${server}${args.style ? ` in ${args.style} style` : ''}.`,
    })),
    readMcpResource: vi.fn(async (_sid: string, _server: string, uri: string) => [
      { type: 'resource', text: `contents of ${uri}`, mime_type: 'text/plain', data: '', size: 12, omitted: '', uri, name: '', title: '', description: '' },
    ]),
  };
  return { api, servers, reports, chats, auth };
}
