import { describe, expect, it } from 'vitest';
import type { Frame, PendingView } from './protocol';
import {
  initialStreamState,
  mergePending,
  reduce,
  reduceAll,
  waiting,
  withdrawApproval,
  withdrawClarify,
  type StreamState,
} from './reducer';

const SID = 'sess-1';
const ST = 'stream-1';

function frames(...items: Array<[string, unknown]>): Frame[] {
  return items.map(([event, data], i) => ({ session_id: SID, stream_id: ST, seq: i + 1, event, data }));
}

const fresh = () => initialStreamState(ST, SID);

const DIFF = `--- a/main.go
+++ b/main.go
@@ -1,3 +1,4 @@
 package main
-import "fmt"
+import (
+\t"fmt"
+)
`;

const approval = (id: string, pending: number, command = 'rm -rf build/') => ({
  approval_id: id, command, description: 'recursive delete', pattern: 'recursive_delete', timeout_s: 300, expires_at: 0, pending_count: pending,
});
const clarify = (id: string, pending: number) => ({
  clarify_id: id, kind: 'clarify', question: 'Which?', choices: ['a', 'b'], multi_select: false,
  questions: [{ question: 'Which?', choices: ['a', 'b'], multi_select: false }], timeout_s: 3600, expires_at: 0, pending_count: pending,
});
const vault = (id: string, pending: number) => ({
  clarify_id: id, kind: 'vault', question: '', choices: [], multi_select: false, questions: [], timeout_s: 3600, expires_at: 0,
  pending_count: pending, name: 'GITHUB_TOKEN', reason: 'push the branch', saved_hint: 'vault:GITHUB_TOKEN',
  saved_available: true, keyring_available: true, keyring_error: '',
});

// A turn that uses every card: tools (one an edit), a todo list, two approvals, a clarify
// and a vault prompt, answered in an interleaved order.
const agentTurn = frames(
  ['run_status', { status: 'working' }],
  ['token', { text: 'Let me look. ' }],
  ['tool', { tid: 't1', name: 'terminal', args: { command: 'ls -la' }, key_arg: 'ls -la' }],
  ['tool_complete', { tid: 't1', name: 'terminal', preview: 'main.go\n', raw_result: { exit_code: 0 }, result_diff: '', duration_s: 0.2, is_error: false, duration: 0.21, edit_diff: null }],
  ['tool', { tid: 't2', name: 'patch', args: { path: 'main.go' }, key_arg: 'main.go' }],
  ['tool_complete', { tid: 't2', name: 'patch', preview: 'patched', result_diff: DIFF, duration: 0.05, is_error: false, edit_diff: { files: ['main.go'], added: 3, removed: 1 } }],
  ['tool', { tid: 't3', name: 'todo', args: { todos: [] }, key_arg: '2 items' }],
  ['tool_complete', { tid: 't3', name: 'todo', preview: 'ok', todo_result: { todos: [{ id: '1', content: 'Build', status: 'in_progress' }, { id: '2', content: 'Test', status: 'pending' }] }, duration: 0.01, is_error: false, edit_diff: null }],
  ['todo_state', { todos: [{ id: '1', content: 'Build', status: 'completed' }, { id: '2', content: 'Test', status: 'in_progress' }] }],
  ['tool', { tid: 't4', name: 'terminal', args: { command: 'rm -rf build/' }, key_arg: 'rm -rf build/' }],
  ['approval', approval('a1', 1)],
  ['clarify', clarify('c1', 1)],
  ['approval', approval('a2', 2, 'git push --force')],
  ['approval_resolved', { approval_id: 'a1', reason: 'answered', choice: 'once', pending_count: 1 }],
  ['clarify_resolved', { clarify_id: 'c1', reason: 'answered', pending_count: 0 }],
  ['clarify', vault('v1', 1)],
  ['approval_resolved', { approval_id: 'a2', reason: 'timeout', pending_count: 0 }],
  ['tool_complete', { tid: 't4', name: 'terminal', preview: 'denied', is_error: true, duration: 300 }],
  ['token', { text: 'Done.' }],
);

describe('reduce: tools', () => {
  const s = reduceAll(fresh(), agentTurn);

  it('keys tools by tid in the order they started', () => {
    expect(s.tools.map((t) => t.id)).toEqual(['t1', 't2', 't3', 't4']);
    expect(s.tools[0]).toMatchObject({ name: 'terminal', keyArg: 'ls -la', status: 'done', isError: false, duration: 0.21, output: 'main.go\n' });
  });

  it('shows a tool as running until its tool_complete', () => {
    const mid = reduceAll(fresh(), agentTurn.slice(0, 3));
    expect(mid.tools).toEqual([
      { id: 't1', name: 'terminal', args: { command: 'ls -la' }, keyArg: 'ls -la', status: 'running', isError: false, duration: null, output: '', diff: '', editDiff: null },
    ]);
  });

  it('keeps the diff, the host counts and the error flag', () => {
    expect(s.tools[1]).toMatchObject({ diff: DIFF, editDiff: { files: ['main.go'], added: 3, removed: 1 } });
    expect(s.tools[3]).toMatchObject({ status: 'done', isError: true, duration: 300 });
  });

  it('falls back to duration_s and accepts a result whose start it missed', () => {
    const t = reduceAll(fresh(), frames(['tool_complete', { tid: 'x', name: 'read_file', preview: 'hi', duration_s: 1.5 }]));
    expect(t.tools).toHaveLength(1);
    expect(t.tools[0]).toMatchObject({ id: 'x', name: 'read_file', status: 'done', duration: 1.5, isError: false });
    expect(t.items).toEqual([{ kind: 'tool', tid: 'x' }]);
  });

  it('interleaves text runs and tool cards in arrival order', () => {
    expect(s.items).toEqual([
      { kind: 'text', text: 'Let me look. ' },
      { kind: 'tool', tid: 't1' },
      { kind: 'tool', tid: 't2' },
      { kind: 'tool', tid: 't3' },
      { kind: 'tool', tid: 't4' },
      { kind: 'text', text: 'Done.' },
    ]);
    expect(s.text).toBe('Let me look. Done.');
  });

  it('a repeated tool frame does not add a second card', () => {
    const t = reduceAll(fresh(), frames(
      ['tool', { tid: 'x', name: 'terminal', args: {}, key_arg: 'ls' }],
      ['tool', { tid: 'x', name: 'terminal', args: { command: 'ls -l' }, key_arg: 'ls -l' }],
    ));
    expect(t.tools).toHaveLength(1);
    expect(t.tools[0].keyArg).toBe('ls -l');
    expect(t.items).toHaveLength(1);
  });

  it('marks tools still running as interrupted when the turn ends', () => {
    for (const end of ['cancel', 'apperror', 'stream_end']) {
      const t = reduceAll(fresh(), frames(['tool', { tid: 'x', name: 'terminal', args: {}, key_arg: 'sleep 9' }], [end, {}]));
      expect(t.tools[0].status).toBe('interrupted');
    }
  });
});

describe('reduce: todos', () => {
  it('takes the latest list (todo_result, then todo_state)', () => {
    const afterResult = reduceAll(fresh(), agentTurn.slice(0, 8));
    expect(afterResult.todos?.map((t) => t.status)).toEqual(['in_progress', 'pending']);
    const s = reduceAll(fresh(), agentTurn);
    expect(s.todos).toEqual([
      { id: '1', content: 'Build', status: 'completed' },
      { id: '2', content: 'Test', status: 'in_progress' },
    ]);
  });

  it('an empty list clears it; a malformed frame keeps it', () => {
    let s = reduceAll(fresh(), frames(['todo_state', { todos: [{ id: '1', content: 'x', status: 'pending' }] }], ['todo_state', { todos: 'no' }]));
    expect(s.todos).toHaveLength(1);
    s = reduce(s, { session_id: SID, stream_id: ST, seq: 3, event: 'todo_state', data: { todos: [] } });
    expect(s.todos).toEqual([]);
  });
});

describe('reduce: approval and clarify queues', () => {
  it('shows the oldest approval first with the host count', () => {
    const s = reduceAll(fresh(), agentTurn.slice(0, 13));
    expect(s.approvals.map((a) => a.approval_id)).toEqual(['a1', 'a2']);
    expect(s.approvalCount).toBe(2);
    expect(s.clarifies.map((c) => c.clarify_id)).toEqual(['c1']);
    expect(s.clarifyCount).toBe(1);
  });

  it('approval_resolved withdraws exactly that card, whatever the reason', () => {
    const s = reduceAll(fresh(), agentTurn.slice(0, 14));
    expect(s.approvals.map((a) => a.approval_id)).toEqual(['a2']);
    expect(s.approvalCount).toBe(1);
    for (const reason of ['answered', 'timeout', 'interrupted', 'yolo']) {
      const t = reduce(s, { session_id: SID, stream_id: ST, seq: 99, event: 'approval_resolved', data: { approval_id: 'a2', reason, pending_count: 0 } });
      expect(t.approvals).toEqual([]);
      expect(t.approvalCount).toBe(0);
    }
  });

  it('clarify_resolved withdraws a clarify; a vault prompt queues like one', () => {
    const s = reduceAll(fresh(), agentTurn.slice(0, 16));
    expect(s.clarifies.map((c) => [c.clarify_id, c.kind])).toEqual([['v1', 'vault']]);
    expect(s.clarifies[0]).toMatchObject({ name: 'GITHUB_TOKEN', saved_available: true, keyring_available: true });
  });

  it('a resolve for an unknown id only records it; a settled id never comes back', () => {
    let s = reduceAll(fresh(), frames(['approval_resolved', { approval_id: 'zz', reason: 'timeout', pending_count: 0 }]));
    expect(s.approvals).toEqual([]);
    s = reduce(s, { session_id: SID, stream_id: ST, seq: 2, event: 'approval', data: approval('zz', 1) });
    expect(s.approvals).toEqual([]);
  });

  it('an approval sent again updates its card in place', () => {
    const s = reduceAll(fresh(), frames(['approval', approval('a1', 1)], ['approval', approval('a2', 2)], ['approval', { ...approval('a1', 2), description: 'newer' }]));
    expect(s.approvals.map((a) => [a.approval_id, a.description])).toEqual([['a1', 'newer'], ['a2', 'recursive delete']]);
  });

  it('the clarify questions fall back to the simple fields', () => {
    const s = reduceAll(fresh(), frames(['clarify', { clarify_id: 'c', question: 'Name?', choices: null, multi_select: false, questions: null, timeout_s: 60, expires_at: 0, pending_count: 1 }]));
    expect(s.clarifies[0].questions).toEqual([{ question: 'Name?', choices: [], multi_select: false }]);
    expect(s.clarifies[0].kind).toBe('clarify');
  });

  it('nothing waits after stream_end', () => {
    const s = reduceAll(fresh(), [...agentTurn.slice(0, 13), { session_id: SID, stream_id: ST, seq: 14, event: 'stream_end', data: {} }]);
    expect(s.approvals).toEqual([]);
    expect(s.clarifies).toEqual([]);
    expect(s.approvalCount).toBe(0);
  });

  it('waiting is the host count, at least the known cards', () => {
    expect(waiting(1, 3)).toBe(3);
    expect(waiting(2, 1)).toBe(2);
    expect(waiting(0, 0)).toBe(0);
  });
});

describe('reduce: replay equals live with tool, approval and clarify frames', () => {
  const whole = reduceAll(fresh(), agentTurn);

  it('all at once == one by one, and every prefix too', () => {
    let inc: StreamState = fresh();
    agentTurn.forEach((f, i) => {
      inc = reduce(inc, f);
      expect(inc).toEqual(reduceAll(fresh(), agentTurn.slice(0, i + 1)));
    });
    expect(inc).toEqual(whole);
  });

  it('an overlapping replay at any cut changes nothing', () => {
    for (let cut = 0; cut <= agentTurn.length; cut++) {
      const live = reduceAll(fresh(), agentTurn.slice(0, cut));
      expect(reduceAll(live, agentTurn.slice(0, cut))).toEqual(live);
      expect(reduceAll(reduceAll(live, agentTurn), agentTurn.slice(cut))).toEqual(whole);
    }
  });

  it('duplicates and old frames mixed in are ignored', () => {
    const noisy: Frame[] = [];
    agentTurn.forEach((f, i) => {
      noisy.push(f);
      if (i % 3 === 0) noisy.push(f); // duplicate
      if (i > 4 && i % 4 === 0) noisy.push(agentTurn[i - 4]); // old seq
    });
    expect(reduceAll(fresh(), noisy)).toEqual(whole);
  });

  it('a duplicated approval_resolved does not drop a later card', () => {
    const s = reduceAll(fresh(), agentTurn.slice(0, 14));
    const dup = reduce(s, agentTurn[13]);
    expect(dup).toBe(s);
    expect(dup.approvals.map((a) => a.approval_id)).toEqual(['a2']);
  });

  it('never mutates the state it is given', () => {
    const before = reduceAll(fresh(), agentTurn.slice(0, 12));
    const snapshot = structuredClone(before);
    reduceAll(before, agentTurn.slice(12));
    mergePending(before, pending({ approval: approval('p', 1) as never, approval_count: 1 }));
    withdrawApproval(before, 'a1', true);
    withdrawClarify(before, 'c1', true);
    expect(before).toEqual(snapshot);
  });
});

function pending(p: Partial<PendingView>): PendingView {
  return { approval: null, clarify: null, approval_count: 0, clarify_count: 0, yolo: false, ...p };
}

describe('GetPending and withdrawn cards', () => {
  it('a snapshot head the stream does not know goes first; merging twice is the same', () => {
    const s = reduceAll(fresh(), frames(['approval', approval('a2', 2)]));
    const once = mergePending(s, pending({ approval: approval('a1', 2), approval_count: 2 }));
    expect(once.approvals.map((a) => a.approval_id)).toEqual(['a1', 'a2']);
    expect(once.approvalCount).toBe(2);
    expect(mergePending(once, pending({ approval: approval('a1', 2), approval_count: 2 }))).toEqual(once);
  });

  it('a snapshot of a card the stream saw settled does not bring it back', () => {
    const s = reduceAll(fresh(), frames(['approval', approval('a1', 1)], ['approval_resolved', { approval_id: 'a1', reason: 'answered', pending_count: 0 }]));
    const m = mergePending(s, pending({ approval: approval('a1', 1), approval_count: 1, clarify: null }));
    expect(m.approvals).toEqual([]);
    expect(m.approvalCount).toBe(0);
  });

  it('a snapshot brings a clarify or vault card for a window that opened late', () => {
    const m = mergePending(fresh(), pending({ clarify: { ...vault('v1', 2), kind: 'vault' } as never, clarify_count: 2 }));
    expect(m.clarifies.map((c) => c.clarify_id)).toEqual(['v1']);
    expect(m.clarifyCount).toBe(2);
  });

  it('frames after a merge apply as usual (the resolve withdraws the merged card)', () => {
    let s = mergePending(fresh(), pending({ approval: approval('a1', 1), approval_count: 1 }));
    s = reduceAll(s, frames(['approval', approval('a1', 1)], ['approval_resolved', { approval_id: 'a1', reason: 'answered', pending_count: 0 }]));
    expect(s.approvals).toEqual([]);
    expect(s.lastSeq).toBe(2);
  });

  it('an answered card is withdrawn and stays away; a stale one may come back as head', () => {
    const s = reduceAll(fresh(), frames(['approval', approval('a1', 2)], ['approval', approval('a2', 2)]));
    const answered = withdrawApproval(s, 'a1', true);
    expect(answered.approvals.map((a) => a.approval_id)).toEqual(['a2']);
    expect(answered.approvalCount).toBe(1);
    expect(mergePending(answered, pending({ approval: approval('a1', 2), approval_count: 2 })).approvals.map((a) => a.approval_id)).toEqual(['a2']);

    const stale = withdrawApproval(s, 'a2', false);
    expect(stale.approvals.map((a) => a.approval_id)).toEqual(['a1']);
    expect(mergePending(stale, pending({ approval: approval('a2', 1), approval_count: 1 })).approvals.map((a) => a.approval_id)).toEqual(['a2', 'a1']);
  });

  it('withdrawing a clarify works the same and leaves approvals alone', () => {
    const s = reduceAll(fresh(), frames(['approval', approval('a1', 1)], ['clarify', clarify('c1', 1)]));
    const w = withdrawClarify(s, 'c1', true);
    expect(w.clarifies).toEqual([]);
    expect(w.clarifyCount).toBe(0);
    expect(w.approvals).toEqual(s.approvals);
    expect(reduce(w, { session_id: SID, stream_id: ST, seq: 3, event: 'clarify', data: clarify('c1', 1) }).clarifies).toEqual([]);
  });

  it('an ended stream takes no snapshot', () => {
    const s = reduceAll(fresh(), frames(['stream_end', {}]));
    expect(mergePending(s, pending({ approval: approval('a1', 1), approval_count: 1 }))).toBe(s);
  });
});
