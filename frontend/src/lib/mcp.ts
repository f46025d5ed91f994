// MCP servers in the window: the shapes of Settings' server list (backend/mcp.go), a
// chat's MCP menu, the reports of "Test" and of a chat's servers (protocol
// MCPServerReport), and what tool, tool_complete and approval frames carry for an MCP
// tool (docs/protocol.md, "MCP servers"). Everything read from the host goes through the
// to* functions here, which never throw and never let a wrong type through.

// The shapes are generated from Go (protocol.gen.ts, backend/contract); these names
// are this module's.
import type {
  ChatMCP as ChatMcp,
  MCPAuthState as McpAuthStateWire,
  ChatMCPServer as ChatMcpServer,
  MCPAnnotations as McpAnnotations,
  MCPContent,
  MCPImportResult as McpImportResult,
  MCPPromptArgument as McpPromptArgument,
  MCPPromptInfo as McpPromptInfo,
  MCPPromptText as McpPromptText,
  MCPResourceInfo as McpResourceInfo,
  MCPServerConfig as McpServerConfig,
  MCPServerReport as McpReport,
  MCPToolInfo as McpToolInfo,
  MCPToolRef as McpToolRef,
  MCPToolResult,
  MCPVar as McpVar,
  McpSandbox,
  McpTransport,
} from './protocol';
export type {
  ChatMcp,
  ChatMcpServer,
  McpAnnotations,
  McpImportResult,
  McpPromptArgument,
  McpPromptInfo,
  McpPromptText,
  McpReport,
  McpResourceInfo,
  McpSandbox,
  McpServerConfig,
  McpToolInfo,
  McpToolRef,
  McpTransport,
  McpVar,
};

/** A content block as toContent returns it: every member present. */
export type McpContent = Required<MCPContent>;

/** tool_complete's mcp member as toToolResult returns it: `structured` pretty-printed ('' when none). */
export type McpToolResult = Omit<MCPToolResult, 'content' | 'structured'> & { content: McpContent[]; structured: string };

/** What the bound methods of MCP do (lib/api.ts implements it; tests fake it). */
export interface McpApi {
  listMcpServers(): Promise<McpServerConfig[]>;
  saveMcpServer(server: McpServerConfig, previous: string): Promise<McpServerConfig>;
  deleteMcpServer(name: string): Promise<void>;
  setMcpServerEnabled(name: string, on: boolean): Promise<void>;
  importMcpServers(text: string): Promise<McpImportResult>;
  testMcpServer(server: McpServerConfig, previous: string): Promise<McpReport>;
  getChatMcp(sessionId: string): Promise<ChatMcp>;
  setChatMcpServer(sessionId: string, name: string, state: 'on' | 'off' | 'default'): Promise<ChatMcp>;
  listChatMcp(sessionId: string): Promise<McpReport[]>;
  getMcpPrompt(sessionId: string, server: string, name: string, args: Record<string, string>): Promise<McpPromptText>;
  readMcpResource(sessionId: string, server: string, uri: string): Promise<McpContent[]>;
  mcpServerAuth(name: string): Promise<McpAuthState>;
  signInMcpServer(name: string): Promise<McpAuthState>;
  signOutMcpServer(name: string): Promise<void>;
}

// ---- sign-in of remote servers (backend/mcp_oauth.go) --------------------------------

/** A remote server's sign-in: none (asks for none), signed in, needs a sign-in, or the last one failed. */
export type McpAuthKind = 'none' | 'signed_in' | 'needs_sign_in' | 'failed';

/** MCPAuthState with its state narrowed. */
export type McpAuthState = Omit<McpAuthStateWire, 'state'> & { state: McpAuthKind };

/** Reads a sign-in state from the host (an unknown state reads as none). */
export function toAuthState(v: unknown): McpAuthState {
  const r = rec(v);
  const st = s(r.state);
  return {
    server: s(r.server),
    state: st === 'signed_in' || st === 'needs_sign_in' || st === 'failed' ? st : 'none',
    reason: s(r.reason),
    expires: s(r.expires),
  };
}

// ---- readers --------------------------------------------------------------------------

type Rec = Record<string, unknown>;
const rec = (v: unknown): Rec => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Rec) : {});
const s = (v: unknown): string => (typeof v === 'string' ? v : '');
const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const b = (v: unknown): boolean => v === true;
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const strs = (v: unknown): string[] => arr(v).filter((x): x is string => typeof x === 'string');

function transport(v: unknown): McpTransport {
  return v === 'http' || v === 'sse' ? v : 'stdio';
}

function sandbox(v: unknown): McpSandbox {
  return v === 'network' || v === 'off' ? v : '';
}

export function toVar(v: unknown): McpVar {
  const d = rec(v);
  return { name: s(d.name), value: s(d.value), secret: b(d.secret), has_value: b(d.has_value) };
}

export function toServerConfig(v: unknown): McpServerConfig {
  const d = rec(v);
  return {
    name: s(d.name),
    transport: transport(d.transport),
    command: s(d.command),
    args: strs(d.args),
    env: arr(d.env).map(toVar),
    cwd: s(d.cwd),
    url: s(d.url),
    headers: arr(d.headers).map(toVar),
    enabled: b(d.enabled),
    allow_read_only: b(d.allow_read_only),
    sandbox: sandbox(d.sandbox),
    disabled_tools: strs(d.disabled_tools),
    writable_paths: strs(d.writable_paths),
  };
}

/** A tool's hints; absent hints take MCP's defaults (destructive, open world). */
export function toAnnotations(v: unknown): McpAnnotations {
  const d = rec(v);
  return {
    read_only: b(d.read_only),
    destructive: d.destructive === undefined ? !b(d.read_only) : b(d.destructive),
    idempotent: b(d.idempotent),
    open_world: d.open_world === undefined ? true : b(d.open_world),
  };
}

export function toReport(v: unknown): McpReport {
  const d = rec(v);
  return {
    name: s(d.name),
    ok: b(d.ok),
    error: s(d.error),
    hint: s(d.hint),
    stderr: s(d.stderr),
    server_name: s(d.server_name),
    server_version: s(d.server_version),
    protocol: s(d.protocol),
    writable: strs(d.writable),
    withheld: arr(d.withheld).map((w) => {
      const x = rec(w);
      return { path: s(x.path), reason: s(x.reason) };
    }),
    tools: arr(d.tools).map((t) => {
      const x = rec(t);
      return { name: s(x.name), title: s(x.title), description: s(x.description), annotations: toAnnotations(x.annotations) };
    }),
    prompts: arr(d.prompts).map((p) => {
      const x = rec(p);
      return {
        name: s(x.name),
        title: s(x.title),
        description: s(x.description),
        arguments: arr(x.arguments).map((a) => {
          const y = rec(a);
          return { name: s(y.name), title: s(y.title), description: s(y.description), required: b(y.required) };
        }),
      };
    }),
    resources: arr(d.resources).map((r) => {
      const x = rec(r);
      return {
        uri: s(x.uri),
        name: s(x.name),
        title: s(x.title),
        description: s(x.description),
        mime_type: s(x.mime_type),
        size: n(x.size),
        template: b(x.template),
      };
    }),
    took_ms: n(d.took_ms),
  };
}

export function toImportResult(v: unknown): McpImportResult {
  const d = rec(v);
  return {
    added: strs(d.added),
    replaced: strs(d.replaced),
    skipped: arr(d.skipped).map((x) => ({ name: s(rec(x).name), reason: s(rec(x).reason) })),
    servers: arr(d.servers).map(toServerConfig),
  };
}

export function toChatMcp(v: unknown): ChatMcp {
  const d = rec(v);
  return {
    servers: arr(d.servers).map((x) => {
      const y = rec(x);
      return { name: s(y.name), transport: transport(y.transport), on: b(y.on), global: b(y.global), override: b(y.override) };
    }),
    note: s(d.note),
    used: d.used !== false,
  };
}

export function toContent(v: unknown): McpContent {
  const d = rec(v);
  return {
    type: s(d.type),
    text: s(d.text),
    mime_type: s(d.mime_type),
    data: s(d.data),
    size: n(d.size),
    omitted: s(d.omitted),
    uri: s(d.uri),
    name: s(d.name),
    title: s(d.title),
    description: s(d.description),
  };
}

/** The mcp member of a tool or approval frame, or null. */
export function toToolRef(v: unknown): McpToolRef | null {
  const d = rec(v);
  if (!s(d.server) || !s(d.tool)) return null;
  return { server: s(d.server), tool: s(d.tool), title: s(d.title), annotations: toAnnotations(d.annotations) };
}

/** The mcp member of a tool_complete frame, or null. */
export function toToolResult(v: unknown): McpToolResult | null {
  const d = rec(v);
  if (!s(d.server)) return null;
  const structured = d.structured === undefined || d.structured === null ? '' : JSON.stringify(d.structured, null, 2);
  return { server: s(d.server), tool: s(d.tool), is_error: b(d.is_error), content: arr(d.content).map(toContent), structured };
}

// ---- helpers --------------------------------------------------------------------------

/**
 * A tool name as the runtime offers MCP tools, "<server>__<tool>", split; null for the
 * runtime's own tools (their names never hold "__").
 */
export function splitToolName(name: string): { server: string; tool: string } | null {
  const i = name.indexOf('__');
  if (i <= 0 || i + 2 >= name.length) return null;
  return { server: name.slice(0, i), tool: name.slice(i + 2) };
}

/** Image types a card shows inline (never SVG: it can carry script). */
const SHOWN_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/bmp', 'image/avif']);

/** A data: URL for an image block the card may show, or '' (another type, no data). */
export function imageURL(c: McpContent): string {
  if (c.type !== 'image' && c.type !== 'resource') return '';
  const mime = c.mime_type.toLowerCase();
  if (!SHOWN_IMAGES.has(mime) || !/^[A-Za-z0-9+/]+={0,2}$/.test(c.data)) return '';
  return `data:${mime};base64,${c.data}`;
}

/** Only http(s) links open (in the system browser); other URIs are shown as text. */
export function openableURI(uri: string): boolean {
  return /^https?:\/\//i.test(uri);
}

/** The badges of a tool's hints, most important first. */
export function annotationBadges(a: McpAnnotations): { label: string; tone: 'safe' | 'warn' | 'info'; title: string }[] {
  const out: { label: string; tone: 'safe' | 'warn' | 'info'; title: string }[] = [];
  if (a.read_only) out.push({ label: 'read-only', tone: 'safe', title: 'The server says this tool does not change anything (readOnlyHint)' });
  else if (a.destructive) out.push({ label: 'destructive', tone: 'warn', title: 'The server says this tool may delete or overwrite things (destructiveHint)' });
  else out.push({ label: 'changes things', tone: 'info', title: 'The server says this tool only adds, never destroys (destructiveHint false)' });
  if (a.open_world) out.push({ label: 'open world', tone: 'info', title: 'The tool may reach outside systems, e.g. the internet (openWorldHint)' });
  if (!a.read_only && a.idempotent) out.push({ label: 'idempotent', tone: 'info', title: 'Calling it again with the same arguments changes nothing more (idempotentHint)' });
  return out;
}

/** "1.2 KB"-style size. */
export function byteSize(bytes: number): string {
  if (bytes >= 1 << 20) return `${(bytes / (1 << 20)).toFixed(1)} MB`;
  if (bytes >= 1 << 10) return `${(bytes / (1 << 10)).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

/** A one-line summary of a server's settings for the list. */
export function serverSummary(c: McpServerConfig): string {
  if (c.transport === 'stdio') return [c.command, ...c.args].join(' ');
  return c.url;
}

/** An empty server of a transport, for "Add server". */
export function newServer(t: McpTransport = 'stdio'): McpServerConfig {
  return {
    name: '',
    transport: t,
    command: '',
    args: [],
    env: [],
    cwd: '',
    url: '',
    headers: [],
    enabled: true,
    allow_read_only: false,
    sandbox: '',
    disabled_tools: [],
    writable_paths: [],
  };
}

/** Splits a command line into the program and its arguments, honouring quotes. */
export function splitCommandLine(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: '"' | "'" | null = null;
  let has = false;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      has = true;
    } else if (c === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(c)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += c;
    }
  }
  if (has || cur) out.push(cur);
  return out;
}

/** Joins arguments back into one editable line (quoting those with spaces or quotes). */
export function joinCommandLine(args: string[]): string {
  return args.map((a) => (a === '' || /[\s"'\\]/.test(a) ? `'${a.replace(/'/g, `'\\''`)}'` : a)).join(' ');
}
