// DEV ONLY: a fake Go backend for `npm run dev` in a plain browser. main.ts loads it
// only when `import.meta.env.DEV && !window.go`, so it is never in a production build.
//
// URL parameters: ?provider=down (CheckProvider fails → first-run screen),
// ?turn=error (turns end with an apperror), ?turn=hang (turns stream then wait for
// Stop), ?sidecar=down, ?empty (no sessions), ?hold (the seeded busy session keeps
// streaming forever), ?scenario=agent (a turn with tools, a diff, todos, approvals, a
// clarify and a vault prompt runs at load, and every message sent runs it again; see
// dev/agent.ts for ?at=vault, ?keyring=off and ?saved).

import * as agent from './agent';
import type {
  Frame,
  MessageView,
  ProviderCheck,
  SessionInfo,
  Settings,
  SettingsInput,
  SidecarStatus,
  Status,
} from '../lib/protocol';

type Listener = { cb: (...data: unknown[]) => void; left: number };

const params = new URLSearchParams(location.search);
const listeners = new Map<string, Listener[]>();
const journals = new Map<string, Frame[]>();
const timers = new Map<string, number[]>();
let counter = 100;

function emit(name: string, ...data: unknown[]) {
  const list = listeners.get(name) ?? [];
  for (const l of [...list]) {
    l.cb(...data);
    if (l.left > 0 && --l.left === 0) list.splice(list.indexOf(l), 1);
  }
}

const now = Date.now();
const usage0 = () => ({ input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 });

function msg(sessionId: string, position: number, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  return { id: `${sessionId}-m${position}`, position, role, content, reasoning: '', kind: '', stream_id: '', created_at: now, ...extra };
}

const SAMPLE_ANSWER = `Here is a small **Go** program that reads a file line by line:

\`\`\`go
package main

import (
\t"bufio"
\t"fmt"
\t"os"
)

func main() {
\tf, err := os.Open("notes.txt")
\tif err != nil {
\t\tfmt.Println("open:", err)
\t\treturn
\t}
\tdefer f.Close()
\tsc := bufio.NewScanner(f)
\tfor sc.Scan() {
\t\tfmt.Println(sc.Text())
\t}
}
\`\`\`

1. \`bufio.Scanner\` splits on newlines by default.
2. Lines longer than 64 KiB need \`sc.Buffer(...)\`.

See the [bufio docs](https://pkg.go.dev/bufio) for more. <img src=x onerror=alert(1)> stays text.`;

const sessions: SessionInfo[] = params.has('empty')
  ? []
  : [
      {
        id: 's1', title: 'Reading files in Go', title_manual: false, model: 'llama3.2', workspace: '/home/me/src',
        created_at: now - 3_600_000, updated_at: now - 600_000, active_stream_id: '', message_count: 2,
        usage: { input_tokens: 1840, output_tokens: 512, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 },
        pinned: false, archived_at: 0, forked_from: '',
      },
      {
        id: 's2', title: 'Summarise the release notes', title_manual: false, model: 'llama3.2', workspace: '/home/me',
        created_at: now - 86_400_000 * 3, updated_at: now - 86_400_000 * 2, active_stream_id: '', message_count: 3,
        usage: usage0(), pinned: false, archived_at: 0, forked_from: '',
      },
      {
        id: 's3', title: 'Fix the flaky CI test', title_manual: true, model: 'llama3.2', workspace: '/home/me/ci',
        created_at: now - 120_000, updated_at: now - 60_000, active_stream_id: '', message_count: 1,
        usage: usage0(), pinned: false, archived_at: 0, forked_from: '',
      },
    ];

const messages = new Map<string, MessageView[]>([
  ['s1', [
    msg('s1', 1, 'user', 'How do I read a file line by line in Go?'),
    msg('s1', 2, 'assistant', SAMPLE_ANSWER, { reasoning: 'The user wants bufio.Scanner; mention the buffer limit.' }),
  ]],
  ['s2', [
    msg('s2', 1, 'user', 'Summarise the release notes in three bullets.'),
    msg('s2', 2, 'assistant', '- Faster startup\n- New settings dialog\n- Fewer', { kind: 'cancelled' }),
    msg('s2', 3, 'assistant', '', { kind: 'error' }),
  ]],
  ['s3', [msg('s3', 1, 'user', 'The CI test `TestSupervisor` fails one run in ten. Why?')]],
]);

let rowCounter = 0;

// A saved conversation with tool calls, a diff and an event row.
if (!params.has('empty')) {
  sessions.push({
    id: 's4', title: 'Strict build script', title_manual: false, model: 'llama3.2', workspace: '/home/me/src/talaria',
    created_at: now - 86_400_000 * 4, updated_at: now - 86_400_000 * 4 + 60_000, active_stream_id: '', message_count: 7,
    usage: usage0(), pinned: false, archived_at: 0, forked_from: '',
  });
  messages.set('s4', agent.savedAgentRows('s4', (sid, role, content, extra) => row(sid, role, content, extra)));
}

function row(sessionId: string, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  const n = ++rowCounter;
  return msg(sessionId, (messages.get(sessionId)?.length ?? 0) + n, role, content, { id: `${sessionId}-r${n}`, ...extra });
}
const agentHost: agent.AgentHost = {
  push: (sessionId, streamId, event, data) => pushFrame(sessionId, streamId, event, data),
  row,
  finish(session, streamId, rows) {
    const list = messages.get(session.id)!;
    list.push(...rows);
    session.active_stream_id = '';
    session.message_count = list.length;
    session.updated_at = Date.now();
    pushFrame(session.id, streamId, 'stream_end', {});
    emit('sessions_changed');
  },
};

function startAgentTurn(s: SessionInfo, streamId: string, user: MessageView) {
  if (!s.title) {
    s.title = 'Ship the tidy-build branch';
    setTimeout(() => pushFrame(s.id, streamId, 'title', { title: s.title }), 1500);
  }
  void agent.runAgentTurn(agentHost, s, streamId, user);
}

let sidecar: SidecarStatus = {
  state: params.get('sidecar') === 'down' ? 'down' : 'ready',
  runtime: 'builtin', agent_version: '0.1.0', sidecar_version: '0.1.0', attempt: 0, next_retry_s: 0,
  error: params.get('sidecar') === 'down' ? 'sidecar exited: signal: killed' : '',
  hint: params.get('sidecar') === 'down' ? 'Restart the agent from the tray menu.' : '',
};

let settings: Settings = {
  provider_name: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: 'llama3.2', has_api_key: false,
  keyring_available: true, keyring_error: '', data_dir: '/home/me/.local/share/talaria', log_dir: '/home/me/.local/state/talaria/logs',
};

function pushFrame(sessionId: string, streamId: string, event: string, data: unknown) {
  const j = journals.get(streamId)!;
  const f: Frame = { session_id: sessionId, stream_id: streamId, seq: j.length + 1, event, data };
  j.push(f);
  emit('frame', f);
}

function later(streamId: string, ms: number, fn: () => void) {
  const t = window.setTimeout(fn, ms);
  timers.set(streamId, [...(timers.get(streamId) ?? []), t]);
}

function finish(session: SessionInfo, streamId: string, kind: MessageView['kind'], text: string, reasoning: string) {
  const list = messages.get(session.id)!;
  list.push(msg(session.id, list.length + 1, 'assistant', text, { kind, reasoning, stream_id: streamId }));
  session.active_stream_id = '';
  session.message_count = list.length;
  session.updated_at = Date.now();
  pushFrame(session.id, streamId, 'stream_end', {});
  emit('sessions_changed');
}

function runTurn(session: SessionInfo, streamId: string, user: MessageView, opts: { hold?: boolean } = {}) {
  const mode = params.get('turn');
  pushFrame(session.id, streamId, 'user_message', { message: user });
  pushFrame(session.id, streamId, 'run_status', { status: 'working' });
  const reasoning = 'Let me think about what the user is asking for. ';
  const answer = SAMPLE_ANSWER;
  let t = 150;
  for (const part of reasoning.match(/.{1,12}/g) ?? []) {
    later(streamId, (t += 40), () => pushFrame(session.id, streamId, 'reasoning', { text: part }));
  }
  const chunks = answer.match(/[\s\S]{1,14}/g) ?? [];
  const stopAt = mode === 'hang' || opts.hold ? Math.floor(chunks.length / 2) : chunks.length;
  let sent = '';
  chunks.slice(0, stopAt).forEach((c, i) => {
    later(streamId, (t += 30), () => {
      sent += c;
      pushFrame(session.id, streamId, 'token', { text: c });
      if (i % 20 === 0) {
        pushFrame(session.id, streamId, 'metering', {
          usage: { ...usage0(), input_tokens: 1200, output_tokens: i * 4 }, tps: 31.5,
        });
      }
    });
  });
  if (mode === 'hang' || opts.hold) return;
  later(streamId, (t += 60), () => {
    session.title = session.title || 'Reading a file line by line';
    pushFrame(session.id, streamId, 'title', { title: session.title });
    if (mode === 'error') {
      pushFrame(session.id, streamId, 'apperror', {
        type: 'model_not_found', label: 'Model not found',
        message: 'The endpoint has no model named "llama3.2".', hint: 'Run `ollama pull llama3.2` or pick another model in Settings.',
      });
      finish(session, streamId, 'error', sent, reasoning);
      return;
    }
    const u = { input_tokens: 1240, output_tokens: 420, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 };
    session.usage = u;
    pushFrame(session.id, streamId, 'done', { usage: u, duration_seconds: 4.2, tps: 33.1, terminal_state: 'completed' });
    finish(session, streamId, '', answer, reasoning);
  });
}

function find(id: string): SessionInfo {
  const s = sessions.find((x) => x.id === id);
  if (!s) throw `session ${id} not found`;
  return s;
}

function copy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

const App = {
  async NewSession(): Promise<SessionInfo> {
    const s: SessionInfo = {
      id: `s${++counter}`, title: '', title_manual: false, model: settings.model, workspace: '/home/me',
      created_at: Date.now(), updated_at: Date.now(), active_stream_id: '', message_count: 0, usage: usage0(),
      pinned: false, archived_at: 0, forked_from: '',
    };
    sessions.push(s);
    messages.set(s.id, []);
    setTimeout(() => emit('sessions_changed'), 0);
    return copy(s);
  },
  async ListSessions(): Promise<SessionInfo[]> {
    return copy(sessions);
  },
  async GetSession(id: string) {
    const s = find(id);
    return copy({ session: s, messages: messages.get(id) ?? [] });
  },
  async StartTurn(sessionId: string, text: string) {
    const s = find(sessionId);
    if (s.active_stream_id) throw `session is busy (stream ${s.active_stream_id})`;
    if (sidecar.state !== 'ready') throw 'the agent is not running';
    const streamId = `st${++counter}`;
    const list = messages.get(sessionId)!;
    const user = msg(sessionId, list.length + 1, 'user', text, { stream_id: streamId });
    list.push(user);
    s.active_stream_id = streamId;
    s.updated_at = Date.now();
    journals.set(streamId, []);
    if (params.get('scenario') === 'agent') setTimeout(() => startAgentTurn(s, streamId, user), 0);
    else setTimeout(() => runTurn(s, streamId, user), 0);
    return copy({ stream_id: streamId, user_message: user });
  },
  async Cancel(streamId: string) {
    const s = sessions.find((x) => x.active_stream_id === streamId);
    if (!s) return;
    if (agent.cancel(agentHost, streamId)) {
      pushFrame(s.id, streamId, 'cancel', { partial: true });
      agentHost.finish(s, streamId, [row(s.id, 'assistant', '', { kind: 'cancelled', stream_id: streamId })]);
      return;
    }
    for (const t of timers.get(streamId) ?? []) clearTimeout(t);
    const sent = (journals.get(streamId) ?? []).filter((f) => f.event === 'token').map((f) => (f.data as { text: string }).text).join('');
    pushFrame(s.id, streamId, 'cancel', { partial: sent.length > 0 });
    finish(s, streamId, 'cancelled', sent, '');
  },
  async StreamSince(streamId: string, seq: number): Promise<Frame[]> {
    return copy((journals.get(streamId) ?? []).filter((f) => f.seq > seq));
  },
  async GetSettings(): Promise<Settings> {
    return copy(settings);
  },
  async SaveSettings(input: SettingsInput): Promise<Settings> {
    settings = {
      ...settings, provider_name: input.provider_name, base_url: input.base_url, model: input.model,
      has_api_key: input.clear_api_key ? false : settings.has_api_key || input.api_key !== '',
    };
    return copy(settings);
  },
  async CheckProvider(): Promise<ProviderCheck> {
    await new Promise((r) => setTimeout(r, 300));
    if (params.get('provider') === 'down') {
      return { ok: false, message: 'Nothing answers at http://127.0.0.1:11434/v1 (connection refused).', hint: 'Start Ollama, or choose another provider in Settings.', models: [] };
    }
    return { ok: true, message: 'Ollama answered with 3 models.', hint: '', models: ['llama3.2', 'qwen2.5-coder:7b', 'mistral'] };
  },
  async RespondApproval(sessionId: string, approvalId: string, choice: string): Promise<void> {
    await new Promise((r) => setTimeout(r, 120));
    agent.respondApproval(agentHost, sessionId, approvalId, choice);
  },
  async SetYolo(sessionId: string, on: boolean, fromApprovalId: string): Promise<void> {
    agent.setYolo(agentHost, sessionId, on, fromApprovalId);
  },
  async RespondClarify(sessionId: string, clarifyId: string, answers: unknown[]): Promise<void> {
    agent.respondClarify(agentHost, sessionId, clarifyId, answers);
  },
  async RespondVault(sessionId: string, clarifyId: string, answer: { value?: string; use_saved?: boolean; decline?: boolean }, remember: boolean) {
    return agent.respondVault(agentHost, sessionId, clarifyId, answer, remember);
  },
  async GetPending(sessionId: string) {
    return copy(agent.getPending(sessionId));
  },
  async GetAllowlist() {
    return copy(agent.allowlist);
  },
  async RemoveAllowlist(pattern: string): Promise<void> {
    const i = agent.allowlist.findIndex((e) => e.pattern === pattern);
    if (i >= 0) agent.allowlist.splice(i, 1);
  },
  async GetStatus(): Promise<Status> {
    return copy({ sidecar, data_dir: settings.data_dir, log_dir: settings.log_dir, db_path: `${settings.data_dir}/talaria.db`, version: 'dev' });
  },
};

const runtime = {
  EventsOnMultiple(name: string, cb: (...data: unknown[]) => void, max: number) {
    const l: Listener = { cb, left: max };
    listeners.set(name, [...(listeners.get(name) ?? []), l]);
    return () => {
      const list = listeners.get(name) ?? [];
      const i = list.indexOf(l);
      if (i >= 0) list.splice(i, 1);
    };
  },
  EventsOff(...names: string[]) {
    for (const n of names) listeners.delete(n);
  },
  EventsEmit(name: string, ...data: unknown[]) {
    emit(name, ...data);
  },
  BrowserOpenURL(url: string) {
    console.info('[mock] BrowserOpenURL', url);
    (window as unknown as { __opened?: string[] }).__opened = [...((window as unknown as { __opened?: string[] }).__opened ?? []), url];
  },
  LogPrint: console.log, LogTrace: console.debug, LogDebug: console.debug, LogInfo: console.info,
  LogWarning: console.warn, LogError: console.error, LogFatal: console.error,
};

export function installMock(): void {
  const w = window as unknown as Record<string, unknown>;
  w.go = { app: { App } };
  w.runtime = runtime;
  // A session that is busy when the window opens exercises the replay path.
  if (params.has('hold') && sessions[2]) {
    const s = sessions[2];
    const streamId = `st${++counter}`;
    s.active_stream_id = streamId;
    journals.set(streamId, []);
    runTurn(s, streamId, messages.get(s.id)![0], { hold: true });
  }
  // The agent scenario: a new conversation whose turn is running when the window opens.
  if (params.get('scenario') === 'agent') {
    const s: SessionInfo = {
      id: 's5', title: '', title_manual: false, model: 'qwen2.5-coder:7b', workspace: '/home/me/src/talaria',
      created_at: Date.now(), updated_at: Date.now(), active_stream_id: '', message_count: 1, usage: usage0(),
      pinned: false, archived_at: 0, forked_from: '',
    };
    sessions.push(s);
    const streamId = `st${++counter}`;
    const user = msg(s.id, 1, 'user', 'Tidy up the build scripts, clear out the old build output and open a PR.', { stream_id: streamId });
    messages.set(s.id, [user]);
    s.active_stream_id = streamId;
    journals.set(streamId, []);
    startAgentTurn(s, streamId, user);
  }
  setInterval(() => {
    if (params.get('sidecar') === 'flap') {
      sidecar = { ...sidecar, state: sidecar.state === 'ready' ? 'restarting' : 'ready', attempt: sidecar.attempt + 1, next_retry_s: 2 };
      emit('sidecar_status', sidecar);
    }
  }, 5000);
  console.info('[mock] fake Wails backend installed (dev only)');
}
