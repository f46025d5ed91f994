import { describe, expect, it } from 'vitest';
import {
  buildTranscript,
  forkPositions,
  keyArgOf,
  readToolContent,
  resultIsError,
  todosFromMessages,
  toApproval,
  toClarify,
  toPending,
} from './cards';
import type { MessageView } from './protocol';

function row(id: string, role: MessageView['role'], content: string, extra: Partial<MessageView> = {}): MessageView {
  return { id: id as unknown as number, session_id: '', position: 0, role, content, reasoning: '', kind: '', stream_id: '', created_at: 0, ...extra };
}

describe('keyArgOf', () => {
  it('prefers the command, then the path, then the pattern', () => {
    expect(keyArgOf({ command: 'ls -la', path: '/x' })).toBe('ls -la');
    expect(keyArgOf({ path: 'src/main.go', content: 'x' })).toBe('src/main.go');
    expect(keyArgOf({ pattern: 'TODO', path: '' })).toBe('TODO');
  });

  it('counts todos, falls back to any string, collapses white space and caps', () => {
    expect(keyArgOf({ todos: [{}, {}] })).toBe('2 items');
    expect(keyArgOf({ limit: 3, other: 'x y' })).toBe('x y');
    expect(keyArgOf({ command: 'echo a\n  b' })).toBe('echo a b');
    expect(keyArgOf({ command: 'x'.repeat(300) })).toHaveLength(200);
    expect(keyArgOf({})).toBe('');
  });

  it("takes a saved clarify's first question, as the live card's title had it", () => {
    expect(keyArgOf({ questions: [{ question: 'Which language should I use?', choices: ['Go'] }, { question: 'x' }] })).toBe('Which language should I use?');
    expect(keyArgOf({ questions: ['Plain?'] })).toBe('Plain?');
    expect(keyArgOf({ questions: [] })).toBe('');
  });
});

describe('tool results', () => {
  it('reads an error the way the host decides it', () => {
    expect(resultIsError({ exit_code: 1 })).toBe(true);
    expect(resultIsError({ exit_code: 0, error: '' })).toBe(false);
    expect(resultIsError({ error: 'no such file' })).toBe(true);
    expect(resultIsError({ success: false })).toBe(true);
    expect(resultIsError({ success: true, output: 'x' })).toBe(false);
  });

  it('finds a diff and an error in a saved JSON result; plain text is neither', () => {
    expect(readToolContent('{"diff":"--- a\\n+++ b\\n","files_modified":["a"]}')).toEqual({ isError: false, diff: '--- a\n+++ b\n' });
    expect(readToolContent('{"output":"","exit_code":2}')).toEqual({ isError: true, diff: '' });
    expect(readToolContent('plain output')).toEqual({ isError: false, diff: '' });
    expect(readToolContent('{broken')).toEqual({ isError: false, diff: '' });
  });
});

describe('buildTranscript', () => {
  const messages: MessageView[] = [
    row('1', 'user', 'clean up'),
    row('2', 'assistant', 'Looking.', {
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'terminal', arguments: '{"command":"ls"}' } },
        { id: 'call_2', type: 'function', function: { name: 'patch', arguments: '{"path":"a.go"}' } },
        { id: 'call_3', type: 'function', function: { name: 'terminal', arguments: 'not json' } },
      ],
    }),
    row('3', 'tool', '{"output":"a.go","exit_code":0}', { tool_call_id: 'call_1', name: 'terminal' }),
    row('4', 'tool', '{"diff":"--- a/a.go\\n+++ b/a.go\\n@@ -1 +1 @@\\n-x\\n+y\\n"}', { tool_call_id: 'call_2', name: 'patch' }),
    row('5', 'system', 'Secret GITHUB_TOKEN provided', { kind: 'event' }),
    row('6', 'system', 'a hidden system prompt'),
    row('7', 'tool', 'orphan output', { tool_call_id: 'nobody', name: 'read_file' }),
    row('8', 'assistant', 'Done.'),
  ];
  const items = buildTranscript(messages);

  it('puts each tool result on the card of the call it answers', () => {
    expect(items.map((i) => i.kind)).toEqual(['message', 'message', 'event', 'tool', 'message']);
    const a = items[1];
    if (a.kind !== 'message') throw new Error('expected a message');
    expect(a.tools.map((t) => [t.id, t.name, t.keyArg, t.status])).toEqual([
      ['call_1', 'terminal', 'ls', 'done'],
      ['call_2', 'patch', 'a.go', 'done'],
      ['call_3', 'terminal', '', 'interrupted'],
    ]);
    expect(a.tools[0].output).toBe('{"output":"a.go","exit_code":0}');
    expect(a.tools[1].diff).toContain('+y');
  });

  it('shows event rows as notices, hides other system rows, keeps orphan tool rows', () => {
    expect(items[2]).toEqual({ kind: 'event', key: '5', text: 'Secret GITHUB_TOKEN provided' });
    expect(items[3]).toMatchObject({ kind: 'tool', tool: { name: 'read_file', output: 'orphan output' } });
  });
});

describe('todosFromMessages', () => {
  it('reads the last todo result of a saved transcript', () => {
    const m = [
      row('1', 'tool', '{"todos":[{"id":"1","content":"old","status":"pending"}]}', { name: 'todo' }),
      row('2', 'tool', '{"todos":[{"id":"1","content":"new","status":"completed"}]}', { name: 'todo' }),
      row('3', 'tool', 'not json', { name: 'todo' }),
      row('4', 'tool', '{"output":"x"}', { name: 'terminal' }),
    ];
    expect(todosFromMessages(m)).toEqual([{ id: '1', content: 'new', status: 'completed' }]);
    expect(todosFromMessages([])).toBeNull();
  });
});

describe('host shapes', () => {
  it('toPending fills what Go omits', () => {
    expect(toPending(null)).toEqual({ approval: null, clarify: null, approval_count: 0, clarify_count: 0, yolo: false });
    const p = toPending({ approval: { approval_id: 'a', command: 'sudo x', timeout_s: 300 }, approval_count: 0, yolo: true });
    expect(p.approval).toMatchObject({ approval_id: 'a', command: 'sudo x', description: '', pattern: '', pending_count: 1 });
    expect(p.approval_count).toBe(1);
    expect(p.yolo).toBe(true);
  });

  it('toClarify caps choices at 4 and reads the vault fields', () => {
    const c = toClarify({ clarify_id: 'c', kind: 'clarify', questions: [{ question: 'q', choices: ['1', '2', '3', '4', '5'], multi_select: true }] });
    expect(c?.questions[0].choices).toEqual(['1', '2', '3', '4']);
    const v = toClarify({ clarify_id: 'v', kind: 'vault', name: 'TOKEN', keyring_available: false, keyring_error: 'no secret service' });
    expect(v).toMatchObject({ kind: 'vault', name: 'TOKEN', saved_available: false, keyring_available: false, keyring_error: 'no secret service', questions: [] });
    expect(toClarify({ kind: 'vault' })).toBeNull();
  });

});

describe('forkPositions', () => {
  it('ends a fork after the tool results and events that follow a row', () => {
    const at = (position: number, r: MessageView): MessageView => ({ ...r, position });
    const m = [
      at(0, row('u0', 'user', '')),
      at(1, row('a1', 'assistant', '', { tool_calls: [{ id: 'c1', type: 'function', function: { name: 'terminal', arguments: '{}' } }] })),
      at(2, row('t2', 'tool', '', { tool_call_id: 'c1' })),
      at(3, row('e3', 'system', 'Secret X provided', { kind: 'event' })),
      at(4, row('a4', 'assistant', '')),
      at(5, row('u5', 'user', '')),
    ];
    expect([...forkPositions(m)]).toEqual([['u0', 0], ['a1', 3], ['a4', 4], ['u5', 5]]);
  });
});

describe('toApproval', () => {
  it('keeps the matched span, where it runs and why the agent asks', () => {
    const a = toApproval({ approval_id: 'a', command: 'ls; git push -f', span_start: 4, span_end: 15, sandbox: 'outside the sandbox',
      justification: 'publish', choices: ['once', 'deny'] });
    expect(a).toMatchObject({ span_start: 4, span_end: 15, sandbox: 'outside the sandbox', justification: 'publish', choices: ['once', 'deny'] });
    const bad = toApproval({ approval_id: 'b', command: 'x', span_start: 5, span_end: 2 });
    expect(bad?.span_start).toBeUndefined();
  });
});
