// DEV ONLY: a fake Go backend for `npm run dev` in a plain browser. main.ts loads it
// only when `import.meta.env.DEV && !window.go`, so it is never in a production build.
//
// URL parameters: ?provider=down (CheckProvider fails → first-run screen),
// ?turn=error (turns end with an apperror), ?turn=hang (turns stream then wait for
// Stop), ?sidecar=down, ?empty (no sessions), ?hold (the seeded busy session keeps
// streaming forever), ?scenario=agent (a turn with tools, a diff, todos, approvals, a
// clarify and a vault prompt runs at load, and every message sent runs it again; see
// dev/agent.ts for ?at=vault, ?keyring=off and ?saved), ?scenario=steer (a turn steered
// twice at load, then waiting on a rate limit with two messages queued; dev/steer.ts),
// ?scenario=search (more conversations to search, one pinned, one archived;
// dev/sessions.ts), ?recovered (the start-up check repaired the database),
// ?sidecar=restarting, ?scenario=tasks (a conversation with four background tasks: one
// running, one waiting for an approval, one queued, one completed; dev/tasks.ts).
// `/background <prompt>` runs a task in any scenario, `/btw <question>` streams a side
// answer.
//
// Every turn can be steered (Enter while it runs): the queue, Edit/Cancel/Send now and
// the follow-up turn for leftovers work as on the host (dev/steer.ts). The session
// actions (rename, pin, archive, delete, fork, duplicate, drafts, export, import) and
// the Diagnostics view work on the in-memory data.

import { fail } from './fail';
import * as agent from './agent';
import { SEARCH_SEED, search } from './sessions';
import * as steering from './steer';
import * as bgtasks from './tasks';
import { mcpMethods } from './mcp';
import type {
  Diagnostics,
  Frame,
  MessageView,
  ProviderCheck,
  RecoveryReport,
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

/** Row ids are the store's: numbers, never reused. */
let messageIds = 0;
const nextMessageId = () => ++messageIds;

function msg(sessionId: string, position: number, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  return { id: nextMessageId(), session_id: sessionId, position, role, content, reasoning: '', kind: '', stream_id: '', created_at: now, ...extra };
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
        pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
      },
      {
        id: 's2', title: 'Summarise the release notes', title_manual: false, model: 'llama3.2', workspace: '/home/me',
        created_at: now - 86_400_000 * 3, updated_at: now - 86_400_000 * 2, active_stream_id: '', message_count: 3,
        usage: usage0(), pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
      },
      {
        id: 's3', title: 'Fix the flaky CI test', title_manual: true, model: 'llama3.2', workspace: '/home/me/ci',
        created_at: now - 120_000, updated_at: now - 60_000, active_stream_id: '', message_count: 1,
        usage: usage0(), pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
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

// The tasks scenario: the conversation whose tasks are seeded at load.
if (params.get('scenario') === 'tasks') {
  sessions.unshift({
    id: 's7', title: 'Release prep for v0.4', title_manual: true, model: 'qwen2.5-coder:7b', workspace: '/home/me/src/talaria',
    created_at: now - 3_600_000, updated_at: now, active_stream_id: '', message_count: 2, usage: usage0(),
    pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
  });
  messages.set('s7', [
    msg('s7', 0, 'user', 'We ship v0.4 on Friday. What is left before the release?'),
    msg('s7', 1, 'assistant', 'Four things: the changelog, the docs site, a link check of `docs/`, and a look at the open bugs. They are independent, so they can run as **background tasks** while we keep talking here.'),
  ]);
}

let rowCounter = 0;
for (const list of messages.values()) list.forEach((m, i) => (m.position = i));

// The search scenario: more conversations with text to find.
if (params.get('scenario') === 'search') {
  for (const seed of SEARCH_SEED) {
    const t = now - seed.daysAgo * 86_400_000;
    sessions.push({
      id: seed.id, title: seed.title, title_manual: false, model: 'llama3.2', workspace: '/home/me/src',
      created_at: t, updated_at: t, active_stream_id: '', message_count: seed.rows.length, usage: usage0(),
      pinned: !!seed.pinned, archived_at: seed.archived ? t + 60_000 : 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
    });
    messages.set(seed.id, seed.rows.map(([role, content], i) => msg(seed.id, i, role, content)));
  }
}

/** Positions are 0-based and dense, as in the store. */
function renumber(list: MessageView[]): MessageView[] {
  list.forEach((m, i) => (m.position = i));
  return list;
}

const drafts = new Map<string, string>();
const deleted = new Set<string>();
const forkKeys = new Map<string, string>(); // request key → the copy's id
let recovery: RecoveryReport = params.has('recovered')
  ? {
      recovered: true, backup_path: '/home/me/.local/share/talaria/talaria.db.damaged-20261129-1502', sessions: 41, messages: 3120,
      message: 'The database was damaged (2 unreadable pages). 41 conversations and 3,120 messages were recovered into a fresh file.',
      problems: ['*** in database main ***', 'Page 812: btreeInitPage() returns error code 11'], at: now - 5_000,
    }
  : { recovered: false, backup_path: '', sessions: 0, messages: 0, message: '', problems: [], at: 0 };
const started = Date.now();
let restarts = params.get('sidecar') === 'restarting' ? 2 : 0;
let defaultRuntime = 'builtin';

// A saved conversation with tool calls, a diff and an event row.
if (!params.has('empty')) {
  sessions.push({
    id: 's4', title: 'Strict build script', title_manual: false, model: 'llama3.2', workspace: '/home/me/src/talaria',
    created_at: now - 86_400_000 * 4, updated_at: now - 86_400_000 * 4 + 60_000, active_stream_id: '', message_count: 7,
    usage: usage0(), pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
  });
  messages.set('s4', agent.savedAgentRows('s4', (sid, role, content, extra) => row(sid, role, content, extra)));
}

function row(sessionId: string, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  const n = ++rowCounter;
  return msg(sessionId, (messages.get(sessionId)?.length ?? 0) + n, role, content, { id: nextMessageId(), ...extra });
}
const agentHost: agent.AgentHost = {
  push: (sessionId, streamId, event, data) => pushFrame(sessionId, streamId, event, data),
  row,
  finish(session, streamId, rows) {
    const list = messages.get(session.id)!;
    list.push(...rows);
    renumber(list);
    session.active_stream_id = '';
    session.message_count = list.length;
    session.updated_at = Date.now();
    pushFrame(session.id, streamId, 'stream_end', {});
    emit('sessions_changed');
    followUp(session, streamId);
  },
};

/** Steers a finished turn never read go out once, as one new turn (as on the host). */
function followUp(session: SessionInfo, streamId: string) {
  const left = steering.leftovers(streamId);
  if (left.length === 0 || deleted.has(session.id)) return;
  setTimeout(() => void startTurn(session, left.join('\n\n')), 300);
}

function startTurn(s: SessionInfo, text: string) {
  const streamId = `st${++counter}`;
  const list = messages.get(s.id)!;
  const user = msg(s.id, list.length, 'user', text, { id: nextMessageId(), stream_id: streamId });
  list.push(user);
  renumber(list);
  s.active_stream_id = streamId;
  s.updated_at = Date.now();
  journals.set(streamId, []);
  if (params.get('scenario') === 'agent') setTimeout(() => startAgentTurn(s, streamId, user), 0);
  else setTimeout(() => runTurn(s, streamId, user), 0);
  emit('sessions_changed');
  return { stream_id: streamId, user_message: user };
}

function startAgentTurn(s: SessionInfo, streamId: string, user: MessageView) {
  if (!s.title) {
    s.title = 'Ship the tidy-build branch';
    setTimeout(() => pushFrame(s.id, streamId, 'title', { title: s.title }), 1500);
  }
  void agent.runAgentTurn(agentHost, s, streamId, user);
}

let sidecar: SidecarStatus = {
  state: params.get('sidecar') === 'down' ? 'down' : params.get('sidecar') === 'restarting' ? 'restarting' : 'ready',
  runtime: 'builtin', agent_version: '0.1.0', sidecar_version: '0.1.0',
  attempt: params.get('sidecar') === 'restarting' ? 3 : 0, next_retry_s: params.get('sidecar') === 'restarting' ? 30 : 0,
  error: params.get('sidecar') === 'down' ? 'sidecar exited: signal: killed' : params.get('sidecar') === 'restarting' ? 'sidecar exited with status 1' : '',
  hint: params.get('sidecar') === 'down' ? 'Restart the agent from the tray menu.' : '',
  pid: 31337, restarts: 0, protocol: 1, started_at: Date.now() - 125_000, python: '', runtime_id: 'builtin', sandbox: null, capabilities: [],
};

function setSidecar(next: Partial<SidecarStatus>) {
  sidecar = { ...sidecar, ...next };
  emit('sidecar_status', { ...sidecar });
}

let settings: Settings = {
  provider_name: 'ollama', base_url: 'http://127.0.0.1:11434/v1', model: 'llama3.2', workspace: '/home/me/src', has_api_key: false,
  keyring_available: true, keyring_error: '', data_dir: '/home/me/.local/share/talaria', log_dir: '/home/me/.local/state/talaria/logs',
};

function pushFrame(sessionId: string, streamId: string, event: string, data: unknown) {
  const j = journals.get(streamId)!;
  const f: Frame = { session_id: sessionId, stream_id: streamId, seq: j.length + 1, event, data };
  j.push(f);
  emit('frames', [f]);
}

function later(streamId: string, ms: number, fn: () => void) {
  const t = window.setTimeout(fn, ms);
  timers.set(streamId, [...(timers.get(streamId) ?? []), t]);
}

const tasksHost: bgtasks.TasksHost = {
  emit: (name, data) => emit(name, data),
  openStream: (streamId) => journals.set(streamId, []),
  frame: (sessionId, streamId, event, data) => pushFrame(sessionId, streamId, event, data),
};

const answers = new Map<string, steering.SteeredAnswer>(); // stream id → its answer so far

function finish(session: SessionInfo, streamId: string, kind: MessageView['kind'], reasoning: string) {
  const answer = answers.get(streamId);
  answers.delete(streamId);
  const rows = answer ? answer.close() : [];
  const firstAssistant = rows.find((r) => r.role === 'assistant');
  if (firstAssistant && reasoning) firstAssistant.reasoning = reasoning;
  if (kind) rows.push(row(session.id, 'assistant', '', { kind, stream_id: streamId }));
  agentHost.finish(session, streamId, rows);
}

function runTurn(session: SessionInfo, streamId: string, user: MessageView, opts: { hold?: boolean } = {}) {
  const mode = params.get('turn');
  const saved = new steering.SteeredAnswer(agentHost, session.id, streamId);
  answers.set(streamId, saved);
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
      // The agent's next step: it reads what was queued meanwhile.
      if (i > 0 && i % 30 === 0) steering.takeAll(agentHost, session.id, streamId);
      sent += c;
      saved.addText(c);
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
      finish(session, streamId, 'error', reasoning);
      return;
    }
    const u = { input_tokens: 1240, output_tokens: 420, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0 };
    session.usage = u;
    pushFrame(session.id, streamId, 'done', { usage: u, duration_seconds: 4.2, tps: 33.1, terminal_state: 'completed', tool_limit_reached: false });
    finish(session, streamId, '', reasoning);
  });
}

async function runSteerScenario(s: SessionInfo, streamId: string, user: MessageView) {
  const answer = new steering.SteeredAnswer(agentHost, s.id, streamId);
  answers.set(streamId, answer);
  if (await steering.runSteerTurn(agentHost, s, streamId, user, answer)) finish(s, streamId, '', '');
}

function find(id: string): SessionInfo {
  const s = sessions.find((x) => x.id === id);
  if (!s) throw fail('not_found', 'that session no longer exists');
  return s;
}

/** Pinned first, newest first; archived sessions apart. */
function listed(archived: boolean): SessionInfo[] {
  return sessions
    .filter((s) => !!s.archived_at === archived)
    .sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updated_at - a.updated_at);
}

function copySession(s: SessionInfo, title: string, rows: MessageView[], key: string): SessionInfo {
  const existing = forkKeys.get(key);
  if (existing) return find(existing);
  const c: SessionInfo = {
    ...s, id: `s${++counter}`, title, title_manual: false, created_at: Date.now(), updated_at: Date.now(), active_stream_id: '',
    message_count: rows.length, usage: usage0(), pinned: false, archived_at: 0, forked_from: s.id, revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
  };
  sessions.push(c);
  messages.set(c.id, renumber(rows.map((m) => ({ ...m, id: nextMessageId(), session_id: c.id }))));
  forkKeys.set(key, c.id);
  emit('sessions_changed');
  return c;
}

function exportText(id: string, format: string) {
  const s = find(id);
  const rows = messages.get(id) ?? [];
  if (format === 'json') {
    return { name: `${s.title || 'conversation'}.talaria.json`, mime_type: 'application/json', content: JSON.stringify({ version: 1, session: s, messages: rows }, null, 2) };
  }
  if (format !== 'markdown') throw fail('invalid', 'unknown export format: choose Markdown or JSON');
  const md = [`# ${s.title || 'Conversation'}`, ...rows.filter((m) => m.content).map((m) => `## ${m.role}\n\n${m.content}`)].join('\n\n');
  return { name: `${s.title || 'conversation'}.md`, mime_type: 'text/markdown', content: md };
}

const STDERR = [
  'time=2026-11-29T15:02:11.041+01:00 level=INFO msg="sidecar starting" version=0.1.0 runtime=builtin protocol=1',
  'time=2026-11-29T15:02:11.043+01:00 level=INFO msg="hello" host_version=dev capabilities="[aux.complete chat.start chat.steer chat.steer_now chat.steer_withdraw rpc.hello rpc.ping rpc.shutdown]"',
  ...Array.from({ length: 46 }, (_, i) => {
    const sec = String(12 + Math.floor(i / 2)).padStart(2, '0');
    return i % 7 === 3
      ? `time=2026-11-29T15:02:${sec}.${String(100 + i * 13).slice(0, 3)}+01:00 level=WARN msg="provider retry" status=503 attempt=${(i % 3) + 1} wait=1.5s`
      : `time=2026-11-29T15:02:${sec}.${String(100 + i * 13).slice(0, 3)}+01:00 level=INFO msg="chat.start" stream=st${100 + i} model=llama3.2 tools=6 history=${4 + i}`;
  }),
  'time=2026-11-29T15:03:40.512+01:00 level=INFO msg="steer taken" stream=st146 steers=1',
  'time=2026-11-29T15:03:41.007+01:00 level=ERROR msg="tool failed" tool=terminal exit_code=1 command="shellcheck scripts/build.sh"',
];

function copy<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}

let acpAgents: { id: string; name: string }[] = [];

const App = {
  ...mcpMethods,
  async NewSession(): Promise<SessionInfo> {
    const s: SessionInfo = {
      id: `s${++counter}`, title: '', title_manual: false, model: settings.model, workspace: '/home/me',
      created_at: Date.now(), updated_at: Date.now(), active_stream_id: '', message_count: 0, usage: usage0(),
      pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
    };
    sessions.push(s);
    messages.set(s.id, []);
    setTimeout(() => emit('sessions_changed'), 0);
    return copy(s);
  },
  async ListSessions(): Promise<SessionInfo[]> {
    return copy(listed(false));
  },
  async GetSession(id: string) {
    const s = find(id);
    return copy({ session: s, messages: messages.get(id) ?? [] });
  },
  async StartTurn(sessionId: string, text: string) {
    const s = find(sessionId);
    if (s.active_stream_id) throw fail('busy', `session is busy (stream ${s.active_stream_id})`, 'Wait for it to finish or press Stop.');
    if (sidecar.state !== 'ready') throw fail('agent_unavailable', 'the agent is not running');
    return copy(startTurn(s, text));
  },
  async Cancel(streamId: string) {
    const s = sessions.find((x) => x.active_stream_id === streamId);
    if (!s) return;
    if (agent.cancel(agentHost, streamId)) {
      pushFrame(s.id, streamId, 'cancel', { partial: true, unsent_steers: steering.leftovers(streamId) });
      agentHost.finish(s, streamId, [row(s.id, 'assistant', '', { kind: 'cancelled', stream_id: streamId })]);
      return;
    }
    for (const t of timers.get(streamId) ?? []) clearTimeout(t);
    steering.cancelSteerTurn(streamId);
    const sent = (journals.get(streamId) ?? []).filter((f) => f.event === 'token').map((f) => (f.data as { text: string }).text).join('');
    pushFrame(s.id, streamId, 'cancel', { partial: sent.length > 0, duration_seconds: 2, unsent_steers: steering.leftovers(streamId) });
    pushFrame(s.id, streamId, 'run_status', { status: null });
    finish(s, streamId, 'cancelled', '');
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
    if (bgtasks.respondApproval(tasksHost, sessionId, approvalId, choice)) return;
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
  // ---- steering --------------------------------------------------------------------
  async Steer(sessionId: string, text: string) {
    const s = find(sessionId);
    const body = text.trim();
    if (!body) throw fail('invalid', 'the message is empty');
    if (!s.active_stream_id) {
      const t = startTurn(s, body);
      return { steer_id: '', stream_id: t.stream_id, delivery: 'turn' };
    }
    return steering.steer(agentHost, s.id, s.active_stream_id, body);
  },
  async WithdrawSteer(sessionId: string, steerId: string): Promise<string> {
    const s = find(sessionId);
    if (!s.active_stream_id) throw fail('steer_gone', 'this queued message is no longer pending');
    await new Promise((r) => setTimeout(r, 80));
    return steering.withdraw(agentHost, s.id, s.active_stream_id, steerId);
  },
  async SteerNow(sessionId: string, steerId: string) {
    const s = find(sessionId);
    if (!s.active_stream_id) throw fail('steer_gone', 'this queued message is no longer pending');
    return steering.steerNow(agentHost, s.id, s.active_stream_id, steerId);
  },
  async PendingSteers(sessionId: string) {
    const s = find(sessionId);
    return s.active_stream_id ? steering.pending(s.active_stream_id) : [];
  },

  // ---- background tasks and side questions ------------------------------------------
  async StartBackgroundTask(parentSessionId: string, prompt: string) {
    find(parentSessionId);
    return bgtasks.start(tasksHost, parentSessionId, prompt);
  },
  async ListBackgroundTasks(parentSessionId: string) {
    return bgtasks.list(parentSessionId);
  },
  async GetBackgroundTaskResult(taskId: string) {
    return bgtasks.result(taskId);
  },
  async StopBackgroundTask(taskId: string) {
    bgtasks.stop(tasksHost, taskId);
  },
  async DismissBackgroundTask(taskId: string) {
    bgtasks.dismiss(tasksHost, taskId);
  },
  async GetMaxBackgroundTasks() {
    return bgtasks.getMax();
  },
  async SetMaxBackgroundTasks(n: number) {
    bgtasks.setMax(tasksHost, n);
  },
  async AskSideQuestion(sessionId: string, question: string) {
    find(sessionId);
    if (sidecar.state !== 'ready') throw fail('agent_unavailable', 'the agent is not running');
    return bgtasks.ask(tasksHost, sessionId, question);
  },
  async CancelSideQuestion(id: string) {
    bgtasks.cancelSide(tasksHost, id);
  },

  // ---- session actions -------------------------------------------------------------
  async RenameSession(id: string, title: string) {
    const t = title.trim();
    if (!t) throw fail('invalid', 'the title is empty: type a name for the conversation');
    const s = find(id);
    s.title = t.slice(0, 200);
    s.title_manual = true;
    emit('sessions_changed');
    return copy(s);
  },
  async PinSession(id: string, pinned: boolean) {
    const s = find(id);
    s.pinned = pinned;
    emit('sessions_changed');
    return copy(s);
  },
  async ArchiveSession(id: string, archived: boolean) {
    const s = find(id);
    s.archived_at = archived ? Date.now() : 0;
    emit('sessions_changed');
    return copy(s);
  },
  async ListArchivedSessions() {
    return copy(listed(true));
  },
  async DeleteSession(id: string) {
    const s = find(id);
    if (s.active_stream_id) await App.Cancel(s.active_stream_id);
    sessions.splice(sessions.indexOf(s), 1);
    messages.delete(id);
    drafts.delete(id);
    deleted.add(id);
    emit('sessions_changed');
  },
  async DiscardIfEmpty(id: string) {
    const s = find(id);
    if (s.active_stream_id || (messages.get(id) ?? []).length > 0 || (drafts.get(id) ?? '').trim()) return false;
    sessions.splice(sessions.indexOf(s), 1);
    deleted.add(id);
    emit('sessions_changed');
    return true;
  },
  async ForkSession(id: string, position: number, requestKey: string) {
    const s = find(id);
    const rows = (messages.get(id) ?? []).filter((m) => m.position <= position);
    if (rows.length === 0) throw fail('conflict', 'that message is not in this conversation any more: reload it and try again');
    return copy(copySession(s, `${s.title || 'New chat'} (fork)`, rows, requestKey));
  },
  async DuplicateSession(id: string, requestKey: string) {
    const s = find(id);
    return copy(copySession(s, `${s.title || 'New chat'} (copy)`, [...(messages.get(id) ?? [])], requestKey));
  },
  async SaveDraft(id: string, text: string) {
    find(id);
    if (text) drafts.set(id, text);
    else drafts.delete(id);
  },
  async GetDraft(id: string) {
    return { session_id: id, text: drafts.get(id) ?? '', updated_at: drafts.has(id) ? Date.now() : 0 };
  },
  async SearchSessions(query: string, limit: number) {
    await new Promise((r) => setTimeout(r, 40));
    return search(sessions, messages, query, limit > 0 ? limit : 20);
  },
  async ExportSession(id: string, format: string) {
    const f = exportText(id, format);
    console.info('[mock] export', f.name, f.content.length, 'bytes');
    return `/home/me/Documents/${f.name}`;
  },
  async ExportSessionText(id: string, format: string) {
    return exportText(id, format);
  },
  async ImportSession() {
    const s: SessionInfo = {
      id: `s${++counter}`, title: 'Imported: reading files in Go', title_manual: true, model: settings.model, workspace: '/home/me',
      created_at: Date.now(), updated_at: Date.now(), active_stream_id: '', message_count: 2, usage: usage0(), pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
    };
    sessions.push(s);
    messages.set(s.id, renumber([
      msg(s.id, 0, 'user', 'How do I read a file line by line in Go?', { id: nextMessageId() }),
      msg(s.id, 1, 'assistant', 'Use `bufio.Scanner`.', { id: nextMessageId() }),
    ]));
    emit('sessions_changed');
    return copy(s);
  },
  async ImportSessionData(_data: string) {
    return App.ImportSession();
  },
  async GetRecoveryReport() {
    return copy(recovery);
  },
  async DismissRecoveryReport() {
    recovery = { ...recovery, recovered: false };
  },

  // ---- ACP agents (the list is in memory; Test describes an agent that is not run) ---
  async ACPAgents() {
    return copy(acpAgents);
  },
  async ACPPresets() {
    return copy([
      { id: 'opencode', name: 'OpenCode', command: 'opencode', args: ['acp'], install: 'npm install -g opencode-ai' },
      { id: 'hermes', name: 'Hermes Agent', command: 'hermes', args: ['acp'], install: "pip install 'hermes-agent[acp]'" },
    ]);
  },
  async SaveACPAgent(a: { id: string; name: string; env?: { name: string; value: string; secret: boolean }[] }) {
    const saved = { ...a, id: a.id || a.name.toLowerCase().replace(/[^a-z0-9]+/g, '-'), env: (a.env ?? []).map((e) => (e.secret ? { ...e, value: '', has_value: true } : e)) };
    acpAgents = [...acpAgents.filter((x) => x.id !== saved.id), saved];
    return copy(saved);
  },
  async DeleteACPAgent(id: string) {
    acpAgents = acpAgents.filter((x) => x.id !== id);
  },
  async TestACPAgent(a: { name: string; command: string }) {
    return copy({
      ok: true, took_s: 0.4, output: [],
      info: { name: a.name, version: '1.0.0', protocol_version: 1, pid: 4242, command: [a.command], auth_methods: [],
        capabilities: { load_session: true, resume_session: true, close_session: false, list_sessions: true, logout: false, images: true, audio: false, embedded_context: true, mcp_http: true, mcp_sse: false } },
    });
  },
  async ACPState(_sessionId: string) {
    throw fail('unsupported', 'this chat does not run on an ACP agent');
  },
  async SetACPChoice() {
    throw fail('unsupported', 'this chat does not run on an ACP agent');
  },
  async RespondApprovalOption() {
    throw fail('stale', 'no such approval');
  },

  // ---- runtimes --------------------------------------------------------------------
  async ListRuntimes() {
    return copy([
      { id: 'builtin', kind: 'builtin', label: 'Built-in', detail: "Talaria's own agent, for any OpenAI-compatible endpoint", available: true, problem: '', hint: '', default: defaultRuntime === 'builtin' },
      { id: 'hermes', kind: 'hermes', label: 'Hermes Agent', detail: '', available: false, problem: 'Hermes Agent is not installed.', hint: 'Install it with `pip install hermes-agent`, then reopen Settings.', default: defaultRuntime === 'hermes' },
    ]);
  },
  async SetDefaultRuntime(id: string) {
    if (id !== 'builtin') throw fail('agent_unavailable', 'Hermes Agent is not installed.', 'Install it with `pip install hermes-agent`, then reopen Settings.');
    defaultRuntime = id;
  },
  async SetSessionRuntime(sessionId: string, id: string) {
    const s = find(sessionId);
    if (id !== 'builtin') throw fail('agent_unavailable', 'Hermes Agent is not installed.', 'Install it with `pip install hermes-agent`, then reopen Settings.');
    s.runtime = id;
    emit('sessions_changed');
    return copy(s);
  },
  async RestartRuntime(_id: string) {
    await App.RestartAgent();
  },
  async GetHermesSettings() {
    return copy({ path: '', home: '', model: '', install: { python: '', version: '', python_version: '', source: '', home: '~/.hermes', profiles: [],
      problem: 'Hermes Agent was not found on this computer.', hint: 'Install Hermes Agent, or set the path of its Python in Settings.' } });
  },
  async SaveHermesSettings(s: { path: string; home: string; model: string }) {
    return copy({ ...s, install: { python: '', version: '', python_version: '', source: '', home: s.home || '~/.hermes', profiles: [],
      problem: 'Hermes Agent was not found on this computer.', hint: 'Install Hermes Agent, or set the path of its Python in Settings.' } });
  },
  async HermesSessions(_runtimeId: string) {
    throw fail('agent_unavailable', 'Hermes Agent is not installed.', 'Install it with `pip install hermes-agent`, then reopen Settings.');
  },
  async HermesHistory(_runtimeId: string, _id: string) {
    throw fail('agent_unavailable', 'Hermes Agent is not installed.', 'Install it with `pip install hermes-agent`, then reopen Settings.');
  },
  async ContinueHermesSession(_runtimeId: string, _id: string) {
    throw fail('agent_unavailable', 'Hermes Agent is not installed.', 'Install it with `pip install hermes-agent`, then reopen Settings.');
  },
  async HermesModels(_runtimeId: string) {
    throw fail('agent_unavailable', 'Hermes Agent is not installed.', 'Install it with `pip install hermes-agent`, then reopen Settings.');
  },

  // ---- supervision ---------------------------------------------------------------
  async RestartAgent() {
    restarts++;
    setSidecar({ state: 'restarting', attempt: 1, next_retry_s: 3, error: 'restart requested', hint: '', pid: 0 });
    setTimeout(() => setSidecar({ state: 'starting', next_retry_s: 0 }), 3000);
    setTimeout(() => setSidecar({ state: 'ready', attempt: 0, error: '', pid: 31337 + restarts, restarts, started_at: Date.now() }), 4000);
  },
  async GetDiagnostics(): Promise<Diagnostics> {
    return copy({
      app_version: 'v0.4.0-dev', host_protocol: 1, state: sidecar.state, runtime: sidecar.runtime, sidecar_version: sidecar.sidecar_version,
      agent_version: sidecar.agent_version, protocol: 1, python_path: '', python_version: '', pid: sidecar.pid ?? 0,
      sidecar_uptime_s: sidecar.started_at ? (Date.now() - sidecar.started_at) / 1000 : 0, uptime_s: (Date.now() - started) / 1000 + 3600,
      restarts, attempt: sidecar.attempt, next_retry_s: sidecar.next_retry_s, error: sidecar.error, hint: sidecar.hint, stderr_tail: STDERR,
      paths: {
        data_dir: settings.data_dir, db_path: `${settings.data_dir}/talaria.db`, log_dir: `${settings.data_dir}/logs`,
        app_log: `${settings.data_dir}/logs/talaria.log`, sidecar_log: `${settings.data_dir}/logs/sidecar.log`, cache_dir: `${settings.data_dir}/cache`,
      },
      dialect: '', features: [], go_version: 'go1.24.4', platform: 'linux/amd64', runtimes: [],
      last_crash: { path: '', at: 0, summary: '', text: '' },
    });
  },
  async OpenLogsFolder() {
    console.info('[mock] OpenLogsFolder');
  },
  async WindowPainted() {},
  async SetWindowFocused(focused: boolean) {
    console.debug('[mock] SetWindowFocused', focused);
  },
  async GetActivity() {
    const running = sessions.filter((s) => s.active_stream_id).map((s) => ({
      session_id: s.id, parent_session_id: '', task_id: '', title: s.title, stream_id: s.active_stream_id, started_at: s.updated_at,
      approvals: agent.getPending(s.id).approval_count, clarifies: agent.getPending(s.id).clarify_count,
    }));
    const waiting = running.reduce((n, r) => n + r.approvals + r.clarifies, 0);
    return { state: waiting ? 'needs_you' : running.length ? 'working' : 'idle', running, waiting, sidecar: copy(sidecar) };
  },

  async GetStatus(): Promise<Status> {
    return copy({
      sidecar, runtimes: [sidecar], version: 'dev', uptime_s: (Date.now() - started) / 1000, stderr_tail: STDERR,
      paths: {
        data_dir: settings.data_dir, db_path: `${settings.data_dir}/talaria.db`, log_dir: settings.log_dir,
        app_log: `${settings.log_dir}/talaria.log`, sidecar_log: `${settings.log_dir}/sidecar.log`, cache_dir: `${settings.data_dir}/cache`,
      },
    });
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
  // Every bound service (window.go.app.<Service>) is this one fake: method names are
  // unique across the services.
  w.go = { app: new Proxy({}, { get: () => App }) };
  w.runtime = runtime;
  for (const list of messages.values()) renumber(list);
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
      pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
    };
    sessions.push(s);
    const streamId = `st${++counter}`;
    const user = msg(s.id, 1, 'user', 'Tidy up the build scripts, clear out the old build output and open a PR.', { stream_id: streamId });
    messages.set(s.id, [user]);
    s.active_stream_id = streamId;
    journals.set(streamId, []);
    startAgentTurn(s, streamId, user);
  }
  // The steering scenario: a turn that is steered at load and then waits on a rate limit
  // with two messages queued.
  if (params.get('scenario') === 'steer') {
    const s: SessionInfo = {
      id: 's6', title: 'Refactor the config loader', title_manual: false, model: 'qwen2.5-coder:7b', workspace: '/home/me/src/talaria',
      created_at: Date.now() - 120_000, updated_at: Date.now(), active_stream_id: '', message_count: 1, usage: usage0(),
      pinned: false, archived_at: 0, forked_from: '', revision: 0, hidden: false, parent_id: '', runtime: 'builtin', agent_session_id: '', options: {},
    };
    sessions.push(s);
    const streamId = `st${++counter}`;
    const user = msg(s.id, 0, 'user', 'Refactor config/load.go so it also accepts the new keys, and run the tests.', { stream_id: streamId });
    messages.set(s.id, [user]);
    s.active_stream_id = streamId;
    journals.set(streamId, []);
    void runSteerScenario(s, streamId, user);
  }
  if (params.get('scenario') === 'tasks') bgtasks.seed(tasksHost, 's7');
  setInterval(() => {
    if (params.get('sidecar') === 'flap') {
      setSidecar({ state: sidecar.state === 'ready' ? 'restarting' : 'ready', attempt: sidecar.attempt + 1, next_retry_s: 2 });
    }
  }, 5000);
  console.info('[mock] fake Wails backend installed (dev only)');
}
