// DEV ONLY: MCP servers for the dev mock (src/dev/mock.ts): a list in memory, a Test
// that reports a few tools, prompts and resources, a chat's on/off, prompts rendered
// from their arguments and resources read as text. No server runs.

interface Server {
  name: string;
  transport: string;
  command: string;
  args: string[];
  env: { name: string; value: string; secret: boolean; has_value: boolean }[];
  cwd: string;
  url: string;
  headers: { name: string; value: string; secret: boolean; has_value: boolean }[];
  enabled: boolean;
  allow_read_only: boolean;
  sandbox: string;
  disabled_tools: string[];
  writable_paths: string[];
}

const servers: Server[] = [
  {
    name: 'files', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/Documents'],
    env: [], cwd: '', url: '', headers: [], enabled: true, allow_read_only: false, sandbox: '', disabled_tools: [], writable_paths: [],
  },
];
const chats = new Map<string, Record<string, boolean>>();

function report(name: string) {
  return {
    name, ok: true, error: '', hint: '', stderr: '', server_name: `${name} (mock)`, server_version: '0.0.0', protocol: '2025-11-25',
    tools: [
      { name: 'read_text_file', title: 'Read Text File', description: 'Read a file as text.', annotations: { read_only: true, destructive: false, idempotent: false, open_world: false } },
      { name: 'write_file', title: 'Write File', description: 'Create or overwrite a file.', annotations: { read_only: false, destructive: true, idempotent: true, open_world: false } },
    ],
    prompts: [{ name: 'review', title: 'Review', description: 'Review a file', arguments: [{ name: 'path', title: '', description: 'The file', required: true }] }],
    resources: [{ uri: 'file:///home/me/Documents/notes.md', name: 'notes.md', title: '', description: '', mime_type: 'text/markdown', size: 42, template: false }],
    took_ms: 240,
  };
}

function menu(sid: string) {
  const own = chats.get(sid) ?? {};
  return {
    servers: servers.map((s) => ({ name: s.name, transport: s.transport, on: own[s.name] ?? s.enabled, global: s.enabled, override: s.name in own })),
    note: '', used: true,
  };
}

const clone = (s: Server): Server => ({ ...s, env: s.env.map((v) => ({ ...v, value: v.secret ? '' : v.value, has_value: v.secret || !!v.value })) });

/** The bound MCP methods of the mock's App. */
export const mcpMethods = {
  async ListMCPServers() {
    return servers.map(clone);
  },
  async SaveMCPServer(s: Server, previous: string) {
    const i = servers.findIndex((x) => x.name === (previous || s.name));
    if (i >= 0) servers[i] = { ...s };
    else servers.push({ ...s });
    return clone(s);
  },
  async DeleteMCPServer(name: string) {
    const i = servers.findIndex((x) => x.name === name);
    if (i >= 0) servers.splice(i, 1);
  },
  async SetMCPServerEnabled(name: string, on: boolean) {
    const s = servers.find((x) => x.name === name);
    if (s) s.enabled = on;
  },
  async ImportMCPServers(text: string) {
    const parsed = JSON.parse(text) as { mcpServers?: Record<string, { command?: string; args?: string[]; url?: string }> };
    const added: string[] = [];
    for (const [name, e] of Object.entries(parsed.mcpServers ?? {})) {
      servers.push({
        name, transport: e.url ? 'http' : 'stdio', command: e.command ?? '', args: e.args ?? [], env: [], cwd: '', url: e.url ?? '',
        headers: [], enabled: true, allow_read_only: false, sandbox: '', disabled_tools: [], writable_paths: [],
      });
      added.push(name);
    }
    return { added, replaced: [], skipped: [], servers: servers.map(clone) };
  },
  async TestMCPServer(s: Server) {
    return report(s.name || 'server');
  },
  async GetChatMCP(sid: string) {
    return menu(sid);
  },
  async SetChatMCPServer(sid: string, name: string, state: string) {
    const own = { ...(chats.get(sid) ?? {}) };
    if (state === 'default') delete own[name];
    else own[name] = state === 'on';
    chats.set(sid, own);
    return menu(sid);
  },
  async ListChatMCP(sid: string) {
    return menu(sid).servers.filter((s) => s.on).map((s) => report(s.name));
  },
  async GetMCPPrompt(_sid: string, server: string, name: string, args: Record<string, string>) {
    return { server, name, description: '', text: `Please ${name} ${args.path ?? 'the file'} and list what to improve.` };
  },
  async ReadMCPResource(_sid: string, _server: string, uri: string) {
    return { contents: [{ type: 'resource', uri, mime_type: 'text/markdown', text: '# Notes\n\n- ship the MCP support\n', size: 34 }] };
  },
};
