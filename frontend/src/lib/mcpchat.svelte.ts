// The MCP side of the open chat: its servers on or off (the header's menu), and the
// prompts and resources of the servers it has on (the composer's slash list and
// resource picker). Kept apart from AppStore; App owns one instance.

import { errorText } from './api';
import type { ChatMcp, McpApi, McpContent, McpPromptInfo, McpReport, McpResourceInfo } from './mcp';

/** A prompt of one of the chat's servers, as the slash list offers it: /server:name. */
export interface SlashPrompt {
  server: string;
  prompt: McpPromptInfo;
}

/** A resource picked to go with the next message. */
export interface PickedResource {
  server: string;
  uri: string;
  name: string;
  mime_type: string;
  text: string;
  size: number;
}

/** The most text one resource adds to a message, in characters. */
export const MAX_RESOURCE_TEXT = 200_000;

export class McpChatStore {
  sessionId = $state('');
  menu = $state<ChatMcp | null>(null);
  /** The chat's servers' reports (prompts, resources); null until asked for. */
  reports = $state<McpReport[] | null>(null);
  loading = $state(false);
  error = $state<string | null>(null);
  /** Resources picked for the next message of this chat. */
  picked = $state<PickedResource[]>([]);

  constructor(private readonly api: McpApi) {}

  /** Follows the open chat: its menu is read, its lists are dropped until asked for. */
  open(sessionId: string): void {
    if (sessionId === this.sessionId) return;
    this.sessionId = sessionId;
    this.menu = null;
    this.reports = null;
    this.error = null;
    this.picked = [];
    if (sessionId) void this.loadMenu();
  }

  async loadMenu(): Promise<void> {
    const sid = this.sessionId;
    try {
      const m = await this.api.getChatMcp(sid);
      if (sid === this.sessionId) this.menu = m;
    } catch (err) {
      if (sid === this.sessionId) this.error = errorText(err);
    }
  }

  /** Turns a server on or off in this chat, or back to the global setting. */
  async setServer(name: string, state: 'on' | 'off' | 'default'): Promise<void> {
    const sid = this.sessionId;
    try {
      const m = await this.api.setChatMcpServer(sid, name, state);
      if (sid === this.sessionId) {
        this.menu = m;
        this.reports = null; // other servers: other prompts and resources
        this.error = null;
      }
    } catch (err) {
      this.error = errorText(err);
    }
  }

  /** How many servers are on in this chat. */
  get onCount(): number {
    return this.menu?.servers.filter((s) => s.on).length ?? 0;
  }

  /** Starts the chat's servers when needed and reads their prompts and resources. */
  async loadLists(force = false): Promise<void> {
    if (!this.sessionId || (this.reports && !force) || this.loading) return;
    const sid = this.sessionId;
    this.loading = true;
    try {
      const r = await this.api.listChatMcp(sid);
      if (sid === this.sessionId) {
        this.reports = r;
        this.error = null;
      }
    } catch (err) {
      if (sid === this.sessionId) this.error = errorText(err);
    } finally {
      this.loading = false;
    }
  }

  get prompts(): SlashPrompt[] {
    return (this.reports ?? []).flatMap((r) => r.prompts.map((prompt) => ({ server: r.name, prompt })));
  }

  get resources(): { server: string; resource: McpResourceInfo }[] {
    return (this.reports ?? []).flatMap((r) => r.resources.filter((x) => !x.template).map((resource) => ({ server: r.name, resource })));
  }

  /** Servers that failed to start or list, with why. */
  get failures(): McpReport[] {
    return (this.reports ?? []).filter((r) => !r.ok);
  }

  /** The text of a prompt rendered with its arguments. */
  async renderPrompt(server: string, name: string, args: Record<string, string>): Promise<string> {
    return (await this.api.getMcpPrompt(this.sessionId, server, name, args)).text;
  }

  /** Reads a resource and keeps it for the next message. Text only: a binary one is refused. */
  async pickResource(server: string, r: McpResourceInfo): Promise<void> {
    const contents: McpContent[] = await this.api.readMcpResource(this.sessionId, server, r.uri);
    const text = contents
      .filter((c) => c.text)
      .map((c) => c.text)
      .join('\n\n');
    if (!text) throw new Error(`${r.name || r.uri} has no text to attach (${contents[0]?.mime_type || 'binary'} resources cannot be attached yet)`);
    if (this.picked.some((p) => p.server === server && p.uri === r.uri)) return;
    this.picked = [...this.picked, { server, uri: r.uri, name: r.title || r.name || r.uri, mime_type: r.mime_type ?? '', text, size: text.length }];
  }

  unpick(uri: string, server: string): void {
    this.picked = this.picked.filter((p) => !(p.uri === uri && p.server === server));
  }

  /** The message with the picked resources appended; picked is emptied by sent(). */
  withResources(text: string): string {
    if (!this.picked.length) return text;
    const parts = this.picked.map((p) => {
      const body = p.text.length > MAX_RESOURCE_TEXT ? `${p.text.slice(0, MAX_RESOURCE_TEXT)}\n[… cut: the resource has ${p.text.length} characters]` : p.text;
      const fence = body.includes('```') ? '~~~~' : '```';
      return `Resource ${p.uri} (MCP server ${p.server}):\n${fence}\n${body}\n${fence}`;
    });
    return [text.trimEnd(), ...parts].join('\n\n');
  }

  sent(): void {
    this.picked = [];
  }
}
