// The window's calls of one area: MCP servers (shapes in lib/mcp.ts).
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { BrowserOpenURL } from '../../../wailsjs/runtime/runtime';
import {
  toAuthState,
  toChatMcp,
  toContent,
  toImportResult,
  toReport,
  toServerConfig,
  type ChatMcp,
  type McpAuthState,
  type McpContent,
  type McpImportResult,
  type McpPromptText,
  type McpReport,
  type McpServerConfig,
} from '../mcp';
import { call, list } from './core';

export const mcpCalls = {
  async listMcpServers(): Promise<McpServerConfig[]> {
    return (await call(() => bound.MCP.ListMCPServers())).map(toServerConfig);
  },

  /** Adds a server (previous "") or replaces the one named previous. */
  async saveMcpServer(server: McpServerConfig, previous: string): Promise<McpServerConfig> {
    return toServerConfig(await call<unknown>(() => bound.MCP.SaveMCPServer(server, previous)));
  },

  deleteMcpServer(name: string): Promise<void> {
    return call<void>(() => bound.MCP.DeleteMCPServer(name));
  },

  setMcpServerEnabled(name: string, on: boolean): Promise<void> {
    return call<void>(() => bound.MCP.SetMCPServerEnabled(name, on));
  },

  /** Adds the servers of a pasted {"mcpServers": {...}} configuration. */
  async importMcpServers(text: string): Promise<McpImportResult> {
    return toImportResult(await call<unknown>(() => bound.MCP.ImportMCPServers(text)));
  },

  /** Connects to a server as given and lists what it offers (a failure is a report). */
  async testMcpServer(server: McpServerConfig, previous: string): Promise<McpReport> {
    return toReport(await call<unknown>(() => bound.MCP.TestMCPServer(server, previous)));
  },

  async getChatMcp(sessionId: string): Promise<ChatMcp> {
    return toChatMcp(await call<unknown>(() => bound.MCP.GetChatMCP(sessionId)));
  },

  async setChatMcpServer(sessionId: string, name: string, state: 'on' | 'off' | 'default'): Promise<ChatMcp> {
    return toChatMcp(await call<unknown>(() => bound.MCP.SetChatMCPServer(sessionId, name, state)));
  },

  /** Starts a chat's servers when needed; their prompts and resources. */
  async listChatMcp(sessionId: string): Promise<McpReport[]> {
    return (await call(() => bound.MCP.ListChatMCP(sessionId))).map(toReport);
  },

  async getMcpPrompt(sessionId: string, server: string, name: string, args: Record<string, string>): Promise<McpPromptText> {
    const r = await call<Partial<McpPromptText> | null>(() => bound.MCP.GetMCPPrompt(sessionId, server, name, args));
    return { server, name, description: r?.description ?? '', text: r?.text ?? '' };
  },

  async readMcpResource(sessionId: string, server: string, uri: string): Promise<McpContent[]> {
    const r = await call<{ contents?: unknown[] | null } | null>(() => bound.MCP.ReadMCPResource(sessionId, server, uri));
    return list(r?.contents ?? null).map(toContent);
  },

  /** A remote server's sign-in state (it asks the server). */
  async mcpServerAuth(name: string): Promise<McpAuthState> {
    return toAuthState(await call<unknown>(() => bound.MCP.MCPServerAuth(name)));
  },

  /** Signs in to a remote server in the user's browser; a failure comes back as the state failed. */
  async signInMcpServer(name: string): Promise<McpAuthState> {
    return toAuthState(await call<unknown>(() => bound.MCP.SignInMCPServer(name)));
  },

  /** Forgets a remote server's sign-in. */
  signOutMcpServer(name: string): Promise<void> {
    return call<void>(() => bound.MCP.SignOutMCPServer(name));
  },

  /** Opens a URL in the system browser (never in the webview). */
  openURL(url: string): void {
    BrowserOpenURL(url);
  },
};
