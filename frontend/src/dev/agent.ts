// DEV ONLY: the agent scenario of the fake backend (`?scenario=agent`). A scripted turn
// that uses every card: tool calls (one failing), a file edit with a diff, a todo list,
// two dangerous commands waiting for approval, a clarify form and a vault prompt; then
// the saved rows (tool calls, tool results, the "Secret … provided" event) it leaves.
//
// `?at=vault` lets the approvals and the clarify through by themselves so the turn waits
// at the vault prompt (for screenshots); `?keyring=off` shows a machine without a system
// keychain; `?saved` offers a saved value. Secrets typed here are never logged or kept.

import { fail } from './fail';
import type {
  AllowlistEntry,
  ApprovalData,
  ClarifyData,
  MessageView,
  PendingView,
  SessionInfo,
  ToolCall,
} from '../lib/protocol';

export interface AgentHost {
  push(sessionId: string, streamId: string, event: string, data: unknown): void;
  finish(session: SessionInfo, streamId: string, rows: MessageView[]): void;
  row(sessionId: string, role: MessageView['role'], content: string, extra?: Partial<MessageView>): MessageView;
}

type Answer = { choice?: string; answers?: unknown; vault?: { kept: string } };

interface Queues {
  approvals: ApprovalData[];
  clarifies: ClarifyData[];
  yolo: boolean;
}

const params = new URLSearchParams(location.search);
const queues = new Map<string, Queues>();
const waiters = new Map<string, (a: Answer) => void>();
const controls = new Map<string, { stopped: boolean; sessionId: string }>();
export const allowlist: AllowlistEntry[] = [
  { pattern: 'git_reset_hard', description: 'git reset --hard discards local changes', added_at: Date.now() - 86_400_000 * 5 },
];
let seq = 0;

function q(sid: string): Queues {
  let x = queues.get(sid);
  if (!x) queues.set(sid, (x = { approvals: [], clarifies: [], yolo: false }));
  return x;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function getPending(sid: string): PendingView {
  const x = q(sid);
  return {
    approval: x.approvals[0] ?? null,
    clarify: x.clarifies[0] ?? null,
    approval_count: x.approvals.length,
    clarify_count: x.clarifies.length,
    yolo: x.yolo,
  };
}

function settleApproval(host: AgentHost, sid: string, streamId: string, id: string, reason: string, choice?: string) {
  const x = q(sid);
  x.approvals = x.approvals.filter((a) => a.approval_id !== id);
  host.push(sid, streamId, 'approval_resolved', { approval_id: id, reason, choice, pending_count: x.approvals.length });
  waiters.get(id)?.({ choice: reason === 'answered' ? choice : reason === 'yolo' ? 'once' : 'deny' });
  waiters.delete(id);
}

function settleClarify(host: AgentHost, sid: string, streamId: string, id: string, reason: string, a: Answer) {
  const x = q(sid);
  x.clarifies = x.clarifies.filter((c) => c.clarify_id !== id);
  host.push(sid, streamId, 'clarify_resolved', { clarify_id: id, reason, pending_count: x.clarifies.length });
  waiters.get(id)?.(a);
  waiters.delete(id);
}

const streamOf = new Map<string, string>(); // card id → stream id

export function respondApproval(host: AgentHost, sid: string, id: string, choice: string): void {
  const x = q(sid);
  if (!x.approvals.some((a) => a.approval_id === id)) throw fail('stale', `approval ${id} is not pending`);
  if (choice === 'always') {
    const a = x.approvals.find((y) => y.approval_id === id)!;
    if (!allowlist.some((e) => e.pattern === a.pattern)) allowlist.push({ pattern: a.pattern, description: a.description, added_at: Date.now() });
  }
  settleApproval(host, sid, streamOf.get(id)!, id, 'answered', choice);
}

export function setYolo(host: AgentHost, sid: string, on: boolean, from: string): void {
  const x = q(sid);
  if (from && x.approvals[0]?.approval_id !== from) throw fail('stale', `approval ${from} is not the one waiting first`);
  x.yolo = on;
  if (on) for (const a of [...x.approvals]) settleApproval(host, sid, streamOf.get(a.approval_id)!, a.approval_id, 'yolo');
}

export function respondClarify(host: AgentHost, sid: string, id: string, answers: unknown): void {
  const x = q(sid);
  if (!x.clarifies.some((c) => c.clarify_id === id && c.kind === 'clarify')) throw fail('stale', `clarify ${id} is not pending`);
  settleClarify(host, sid, streamOf.get(id)!, id, 'answered', { answers });
}

export function respondVault(
  host: AgentHost,
  sid: string,
  id: string,
  answer: { value?: string; use_saved?: boolean; decline?: boolean },
  remember: boolean,
): { ok: boolean; kept: 'keychain' | 'session' | 'declined' } {
  const x = q(sid);
  if (!x.clarifies.some((c) => c.clarify_id === id && c.kind === 'vault')) throw fail('stale', `vault prompt ${id} is not pending`);
  const kept = answer.decline ? 'declined' : remember && params.get('keyring') !== 'off' ? 'keychain' : 'session';
  // The value itself goes nowhere in this mock.
  settleClarify(host, sid, streamOf.get(id)!, id, 'answered', { vault: { kept } });
  return { ok: true, kept };
}

export function cancel(host: AgentHost, streamId: string): boolean {
  const ctl = controls.get(streamId);
  if (!ctl || ctl.stopped) return false;
  ctl.stopped = true;
  const x = q(ctl.sessionId);
  for (const a of [...x.approvals]) settleApproval(host, ctl.sessionId, streamId, a.approval_id, 'interrupted');
  for (const c of [...x.clarifies]) settleClarify(host, ctl.sessionId, streamId, c.clarify_id, 'interrupted', {});
  return true;
}

const BUILD_DIFF = `--- a/scripts/build.sh
+++ b/scripts/build.sh
@@ -1,9 +1,10 @@
 #!/bin/sh
-set -e
+set -eu
 
-OUT=build
-go build -o $OUT/talaria .
+OUT="\${OUT:-dist}"
+mkdir -p "$OUT"
+go build -trimpath -o "$OUT/talaria" .
 
 # frontend
 cd frontend
-npm install
+npm ci
 npm run build
`;

const LISTING = `total 24
drwxr-xr-x  2 me me 4096 Nov 29 14:02 .
drwxr-xr-x 12 me me 4096 Nov 29 14:02 ..
-rwxr-xr-x  1 me me  212 Nov 29 13:40 build.sh
-rwxr-xr-x  1 me me  188 Nov 29 13:40 release.sh`;

/** Runs the scripted turn; resolves when it ended (or was cancelled). */
export async function runAgentTurn(host: AgentHost, session: SessionInfo, streamId: string, user: MessageView): Promise<void> {
  const sid = session.id;
  const ctl = { stopped: false, sessionId: sid };
  controls.set(streamId, ctl);
  const autoAnswer = params.get('at') === 'vault';
  const push = (event: string, data: unknown) => {
    if (!ctl.stopped) host.push(sid, streamId, event, data);
  };
  // The saved rows, OpenAI-style: each step's text with the tools it called, then their
  // results, then the next step.
  const saved: MessageView[] = [];
  let step: { text: string; calls: ToolCall[]; results: MessageView[] } = { text: '', calls: [], results: [] };
  const flushStep = () => {
    if (!step.text && step.calls.length === 0) return;
    saved.push(host.row(sid, 'assistant', step.text, { tool_calls: step.calls.length ? step.calls : undefined, stream_id: streamId }), ...step.results);
    step = { text: '', calls: [], results: [] };
  };
  const say = async (s: string) => {
    if (step.calls.length) flushStep();
    for (const part of s.match(/[\s\S]{1,10}/g) ?? []) {
      if (ctl.stopped) return;
      push('token', { text: part });
      step.text += part;
      await sleep(25);
    }
  };
  const tool = async (name: string, args: Record<string, unknown>, keyArg: string, result: {
    preview: string; raw?: Record<string, unknown>; diff?: string; todos?: unknown; ms?: number; isError?: boolean;
  }, before?: (tid: string) => Promise<{ preview?: string; isError?: boolean } | void>) => {
    if (ctl.stopped) return;
    const tid = `call_${++seq}`;
    step.calls.push({ id: tid, type: 'function', function: { name, arguments: JSON.stringify(args) } });
    const mine = step;
    push('tool', { tid, name, args, key_arg: keyArg });
    const started = Date.now();
    const over = before ? await before(tid) : undefined;
    await sleep(result.ms ?? 350);
    if (ctl.stopped) return;
    const preview = over?.preview ?? result.preview;
    const isError = over?.isError ?? result.isError ?? false;
    const added = result.diff ? (result.diff.match(/^\+(?!\+\+)/gm) ?? []).length : 0;
    const removed = result.diff ? (result.diff.match(/^-(?!--)/gm) ?? []).length : 0;
    push('tool_complete', {
      tid, name, preview, raw_result: result.raw ?? {}, result_diff: result.diff ?? '', todo_result: result.todos,
      duration_s: (Date.now() - started) / 1000, is_error: isError, duration: (Date.now() - started) / 1000,
      edit_diff: result.diff ? { files: ['scripts/build.sh'], added, removed } : null,
    });
    if (result.todos) push('todo_state', result.todos);
    const content = result.diff
      ? JSON.stringify({ diff: result.diff, files_modified: ['scripts/build.sh'] })
      : result.todos
        ? JSON.stringify(result.todos)
        : name === 'terminal'
          ? JSON.stringify(isError && over?.isError ? { output: '', exit_code: -1, error: preview } : { output: preview, exit_code: result.raw?.exit_code ?? 0 })
          : preview;
    mine.results.push(host.row(sid, 'tool', content, { tool_call_id: tid, name, stream_id: streamId }));
  };
  const ask = (card: ApprovalData | ClarifyData): Promise<Answer> => {
    const id = 'approval_id' in card ? card.approval_id : card.clarify_id;
    streamOf.set(id, streamId);
    const x = q(sid);
    if ('approval_id' in card) {
      x.approvals.push(card);
      push('approval', { ...card, pending_count: x.approvals.length });
    } else {
      x.clarifies.push(card);
      push('clarify', { ...card, pending_count: x.clarifies.length });
    }
    return new Promise((resolve) => waiters.set(id, resolve));
  };
  const todos = (states: string[]) => ({
    todos: [
      { id: '1', content: 'Look at the build scripts', status: states[0] },
      { id: '2', content: 'Make build.sh strict and reproducible', status: states[1] },
      { id: '3', content: 'Remove the stale build output', status: states[2] },
      { id: '4', content: 'Push the branch for review', status: states[3] },
    ],
  });

  push('user_message', { message: user });
  push('run_status', { status: 'working' });
  await sleep(200);
  await say("I'll tidy the build scripts. First a look around.");
  await tool('todo', todos(['in_progress', 'pending', 'pending', 'pending']), '4 items', { preview: 'Todo list updated (4 items).', todos: todos(['in_progress', 'pending', 'pending', 'pending']), ms: 80 });
  await tool('terminal', { command: 'ls -la scripts/' }, 'ls -la scripts/', { preview: LISTING, raw: { output: LISTING, exit_code: 0 } });
  await tool('terminal', { command: 'shellcheck scripts/build.sh' }, 'shellcheck scripts/build.sh', {
    preview: "In scripts/build.sh line 5:\ngo build -o $OUT/talaria .\n            ^--^ SC2086: Double quote to prevent globbing and word splitting.",
    raw: { exit_code: 1 }, isError: true, ms: 500,
  });
  await tool('patch', { path: 'scripts/build.sh', old_string: 'set -e', new_string: 'set -eu' }, 'scripts/build.sh', { preview: 'Patched scripts/build.sh (+5 −4).', diff: BUILD_DIFF, ms: 120 });
  await tool('todo', todos(['completed', 'completed', 'in_progress', 'pending']), '4 items', { preview: 'Todo list updated (4 items).', todos: todos(['completed', 'completed', 'in_progress', 'pending']), ms: 60 });
  await say('\n\nNow the old build output has to go, and the branch needs a force push after the rebase.');

  // Two dangerous commands from one step (parallel tool calls): two approvals wait.
  const gate = (command: string, pattern: string, description: string) => async (tid: string) => {
    const a: ApprovalData = { approval_id: `appr_${tid}`, command, description, pattern, timeout_s: 300, expires_at: 0, pending_count: 1 };
    if (autoAnswer) setTimeout(() => settleApproval(host, sid, streamId, a.approval_id, 'answered', 'once'), 300);
    const r = await ask(a);
    return r.choice === 'deny' ? { preview: 'The user denied this command.', isError: true } : undefined;
  };
  await Promise.all([
    tool('terminal', { command: 'rm -rf build/ dist/ frontend/dist/assets' }, 'rm -rf build/ dist/ frontend/dist/assets', { preview: '', raw: { output: '', exit_code: 0 } },
      gate('rm -rf build/ dist/ frontend/dist/assets', 'recursive_delete', 'Recursive delete: removes directories and everything in them.')),
    (async () => {
      await sleep(120);
      await tool('terminal', { command: 'git push --force origin tidy-build' }, 'git push --force origin tidy-build', { preview: 'To github.com:me/talaria.git\n + 1a2b3c4...5d6e7f8 tidy-build -> tidy-build (forced update)', raw: { exit_code: 0 } },
        gate('git push --force origin tidy-build', 'git_force_push', 'Force push: rewrites the history of the remote branch.'));
    })(),
  ]);
  if (ctl.stopped) return;

  await say('\n\nBefore I tag a release, two questions.');
  await tool('clarify', { question: 'Release channel?' }, 'Release channel?', { preview: '', ms: 50 }, async (tid) => {
    const c: ClarifyData = {
      clarify_id: `clar_${tid}`, kind: 'clarify', question: 'Which release channel?', choices: ['stable', 'beta', 'nightly'], multi_select: false,
      questions: [
        { question: 'Which release channel?', choices: ['stable', 'beta', 'nightly'], multi_select: false },
        { question: 'Build for which platforms?', choices: ['Linux', 'macOS', 'Windows'], multi_select: true },
        { question: 'Anything to mention in the release notes?', choices: [], multi_select: false },
      ],
      timeout_s: 3600, expires_at: 0, pending_count: 1, saved_available: false, keyring_available: true, keyring_error: '',
    };
    if (autoAnswer) setTimeout(() => settleClarify(host, sid, streamId, c.clarify_id, 'answered', { answers: ['beta', ['Linux'], ''] }), 300);
    const r = await ask(c);
    return { preview: `The user answered: ${JSON.stringify(r.answers ?? null)}` };
  });
  if (ctl.stopped) return;

  let secretNote = '';
  await tool('request_secret', { name: 'GITHUB_TOKEN', reason: 'to open the pull request with the GitHub API' }, 'GITHUB_TOKEN', { preview: '', ms: 50 }, async (tid) => {
    const v: ClarifyData = {
      clarify_id: `vault_${tid}`, kind: 'vault', question: '', choices: [], multi_select: false, questions: [], timeout_s: 3600, expires_at: 0, pending_count: 1,
      name: 'GITHUB_TOKEN', reason: 'To open the pull request for tidy-build with the GitHub API.', saved_hint: 'vault:GITHUB_TOKEN',
      saved_available: params.has('saved'), keyring_available: params.get('keyring') !== 'off',
      keyring_error: params.get('keyring') === 'off' ? 'The name org.freedesktop.secrets was not provided by any .service files' : '',
    };
    const r = await ask(v);
    const kept = r.vault?.kept ?? 'declined';
    secretNote = kept === 'declined' ? 'Secret GITHUB_TOKEN declined' : 'Secret GITHUB_TOKEN provided';
    return kept === 'declined'
      ? { preview: 'The user declined to provide GITHUB_TOKEN.', isError: true }
      : { preview: 'GITHUB_TOKEN is set for the commands of this session.' };
  });
  if (ctl.stopped) return;
  await tool('terminal', { command: 'gh pr create --fill --head tidy-build' }, 'gh pr create --fill --head tidy-build', { preview: 'https://github.com/me/talaria/pull/42', raw: { exit_code: 0 } });
  await tool('todo', todos(['completed', 'completed', 'completed', 'completed']), '4 items', { preview: 'Todo list updated (4 items).', todos: todos(['completed', 'completed', 'completed', 'completed']), ms: 60 });
  await say('\n\nDone: `build.sh` is strict and reproducible, the stale output is gone, and the pull request is open.');
  if (ctl.stopped) return;
  push('done', { usage: { input_tokens: 5120, output_tokens: 610, cache_read_tokens: 2048, cache_write_tokens: 0, estimated_cost: 0 }, duration_seconds: 12.4, tps: 28.2, terminal_state: 'completed' });
  flushStep();
  const rows = saved;
  if (secretNote) rows.push(host.row(sid, 'system', secretNote, { kind: 'event', stream_id: streamId }));
  controls.delete(streamId);
  host.finish(session, streamId, rows);
}

/** A saved conversation that shows tool cards, a diff and an event row without a live turn. */
export function savedAgentRows(sessionId: string, row: AgentHost['row']): MessageView[] {
  const calls: ToolCall[] = [
    { id: 'c1', type: 'function', function: { name: 'terminal', arguments: JSON.stringify({ command: 'go test ./...' }) } },
    { id: 'c2', type: 'function', function: { name: 'patch', arguments: JSON.stringify({ path: 'scripts/build.sh' }) } },
  ];
  return [
    row(sessionId, 'user', 'Make the build script strict, then run the tests.'),
    row(sessionId, 'assistant', 'Running the tests first, then the edit.', { tool_calls: calls }),
    row(sessionId, 'tool', JSON.stringify({ output: 'ok  \ttalaria/backend\t1.2s\nFAIL\ttalaria/app [build failed]', exit_code: 1 }), { tool_call_id: 'c1', name: 'terminal' }),
    row(sessionId, 'tool', JSON.stringify({ diff: BUILD_DIFF, files_modified: ['scripts/build.sh'] }), { tool_call_id: 'c2', name: 'patch' }),
    row(sessionId, 'tool', JSON.stringify({ todos: [{ id: '1', content: 'Fix app build', status: 'in_progress' }, { id: '2', content: 'Strict build.sh', status: 'completed' }] }), { tool_call_id: 'c3', name: 'todo' }),
    row(sessionId, 'system', 'Secret GITHUB_TOKEN provided', { kind: 'event' }),
    row(sessionId, 'assistant', 'The script is strict now; `talaria/app` still fails to build, see the output above.'),
  ];
}
