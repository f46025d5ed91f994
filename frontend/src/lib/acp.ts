// ACP agents: the shapes of the host's ACP calls (backend/acp.go, sidecar/protocol/
// acp.go; docs/protocol.md "The ACP runtime") and the only module that calls their
// bindings. Agents are the user's list in Settings; a chat on one of them has an agent
// state (modes, models, options, slash commands).

import * as bound from './bindings.gen';
import { ApiError } from './api';

// The shapes are generated from Go (protocol.gen.ts, backend/contract); these names
// are this module's.
export type {
  ACPEnvVar as AcpEnvVar,
  ACPAgent as AcpAgent,
  ACPPreset as AcpPreset,
  AgentCaps,
  AgentInfoResult as AgentInfo,
  ACPTestResult as AcpTestResult,
  PickerChoice,
  Picker,
  SlashCommand,
  AgentState,
  ApprovalOption,
  ACPSession as AcpSession,
  AuthMethod,
} from './protocol';
import type {
  ACPAgent as AcpAgent,
  ACPSession as AcpSession,
  AgentInfoResult,
  SessionInfo,
  ACPPreset as AcpPreset,
  ACPTestResult as AcpTestResult,
  AgentCaps,
  AgentState,
  Picker,
  SlashCommand,
} from './protocol';

export type AcpChoiceKind = 'mode' | 'model' | 'option';

async function call<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw ApiError.from(err);
  }
}

/** The host's answers with lists normalised ([] instead of null). */
export function normaliseAgent(a: AcpAgent): AcpAgent {
  return { ...a, args: a.args ?? [], env: (a.env ?? []).map((e) => ({ ...e, value: e.value ?? '' })), dir: a.dir ?? '' };
}

export function normaliseState(s: AgentState | null | undefined): AgentState | null {
  if (!s) return null;
  const picker = (p: Picker | null | undefined) => (p && p.choices?.length ? { ...p, choices: p.choices ?? [] } : null);
  return {
    agent_session_id: s.agent_session_id ?? '',
    modes: picker(s.modes),
    models: picker(s.models),
    options: (s.options ?? []).filter((o) => o.choices?.length),
    commands: s.commands ?? [],
    ...(s.self_approves ? { self_approves: s.self_approves } : {}),
  };
}

export const acpApi = {
  async agents(): Promise<AcpAgent[]> {
    return (await call(() => bound.ACP.ACPAgents())).map(normaliseAgent);
  },
  async presets(): Promise<AcpPreset[]> {
    return call(() => bound.ACP.ACPPresets());
  },
  async save(agent: AcpAgent): Promise<AcpAgent> {
    return normaliseAgent(await call<AcpAgent>(() => bound.ACP.SaveACPAgent(agent)));
  },
  async remove(id: string): Promise<void> {
    await call<void>(() => bound.ACP.DeleteACPAgent(id));
  },
  async test(agent: AcpAgent): Promise<AcpTestResult> {
    const r = await call<AcpTestResult>(() => bound.ACP.TestACPAgent(agent));
    return { ...r, output: r.output ?? [], info: { ...r.info, auth_methods: r.info?.auth_methods ?? [], command: r.info?.command ?? [] } };
  },
  async state(sessionId: string): Promise<AgentState | null> {
    return normaliseState(await call<AgentState>(() => bound.ACP.ACPState(sessionId)));
  },
  async choose(sessionId: string, which: AcpChoiceKind, optionId: string, value: string): Promise<AgentState | null> {
    return normaliseState(await call<AgentState>(() => bound.ACP.SetACPChoice(sessionId, which, optionId, value)));
  },
  async respondOption(sessionId: string, approvalId: string, optionId: string): Promise<void> {
    await call<void>(() => bound.Approvals.RespondApprovalOption(sessionId, approvalId, optionId));
  },
  /** What runtime id's ("acp:<agent>") agent said about itself: sign-in methods, capabilities. */
  async info(runtimeId: string): Promise<AgentInfoResult> {
    return call(() => bound.ACP.ACPAgentInfo(runtimeId));
  },
  /** Signs in to the agent with one of its sign-in methods (ACP authenticate). */
  async authenticate(runtimeId: string, methodId: string): Promise<void> {
    await call<void>(() => bound.ACP.ACPAuthenticate(runtimeId, methodId));
  },
  /** Signs out of the agent (ACP logout), when it offers it. */
  async logout(runtimeId: string): Promise<void> {
    await call<void>(() => bound.ACP.ACPLogout(runtimeId));
  },
  /** The agent's own earlier sessions (ACP session/list). */
  async sessions(runtimeId: string): Promise<AcpSession[]> {
    return call(() => bound.ACP.ACPSessions(runtimeId));
  },
  /** Makes (or finds) the chat bound to one of the agent's sessions. */
  async continueSession(runtimeId: string, agentSessionId: string): Promise<SessionInfo> {
    return call(() => bound.ACP.ContinueACPSession(runtimeId, agentSessionId));
  },
};

export type AcpApi = typeof acpApi;

/**
 * Splits an arguments line the way a shell would for plain words: spaces separate,
 * single or double quotes keep spaces, a backslash escapes the next character.
 */
export function splitArgs(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: '"' | "'" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote) {
      if (c === quote) quote = null;
      else if (c === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += c;
      continue;
    }
    if (c === '"' || c === "'") {
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
      has = true;
    }
  }
  if (has || cur) out.push(cur);
  return out;
}

/** joinArgs is splitArgs' inverse: words with spaces or quotes are quoted. */
export function joinArgs(args: string[]): string {
  return args.map((a) => (a === '' || /[\s"'\\]/.test(a) ? `'${a.replace(/'/g, `'"'"'`)}'` : a)).join(' ');
}

/** The commands matching what the composer holds: a "/" and a word, nothing after. */
export function matchCommands(draft: string, commands: SlashCommand[]): SlashCommand[] {
  const m = /^\/([\w.-]*)$/.exec(draft);
  if (!m) return [];
  const q = m[1].toLowerCase();
  return commands.filter((c) => c.name.toLowerCase().startsWith(q)).slice(0, 8);
}

/** What the capabilities say, for Test's result. */
export function describeCaps(c: AgentCaps): string[] {
  const out: string[] = [];
  if (c.resume_session) out.push('resumes sessions');
  else if (c.load_session) out.push('loads sessions');
  else out.push('no session resume');
  if (c.images) out.push('images');
  if (c.audio) out.push('audio');
  if (c.embedded_context) out.push('embedded files');
  const mcp = ['stdio', ...(c.mcp_http ? ['http'] : []), ...(c.mcp_sse ? ['sse'] : [])];
  out.push(`MCP servers (${mcp.join(', ')})`);
  return out;
}
