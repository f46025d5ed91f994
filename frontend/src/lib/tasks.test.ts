import { describe, expect, it } from 'vitest';
import { task } from '../test/fakeApi';
import {
  BACKGROUND_HINT,
  formatElapsed,
  mergeDraft,
  parseCommand,
  sortTasks,
  taskElapsedS,
  taskStatusLabel,
  toTask,
  toTasksUpdate,
} from './tasks';

describe('parseCommand', () => {
  it('reads /background and /btw with their text', () => {
    expect(parseCommand('/background update the changelog')).toEqual({ kind: 'background', prompt: 'update the changelog' });
    expect(parseCommand('  /btw what is a rune?  ')).toEqual({ kind: 'btw', question: 'what is a rune?' });
    expect(parseCommand('/btw\nmulti\nline')).toEqual({ kind: 'btw', question: 'multi\nline' });
    expect(parseCommand('/BTW shout')).toEqual({ kind: 'btw', question: 'shout' });
  });

  it('/btw with no text does nothing; /background alone is a hint', () => {
    expect(parseCommand('/btw')).toEqual({ kind: 'none' });
    expect(parseCommand('/btw    ')).toEqual({ kind: 'none' });
    expect(parseCommand('/background')).toEqual({ kind: 'hint', hint: BACKGROUND_HINT });
    expect(parseCommand('/background \n ')).toEqual({ kind: 'hint', hint: BACKGROUND_HINT });
  });

  it('anything else is a message', () => {
    expect(parseCommand('/btwx hello')).toEqual({ kind: 'message', text: '/btwx hello' });
    expect(parseCommand('/backgrounds')).toEqual({ kind: 'message', text: '/backgrounds' });
    expect(parseCommand('please /btw later')).toEqual({ kind: 'message', text: 'please /btw later' });
    expect(parseCommand('  hi ')).toEqual({ kind: 'message', text: 'hi' });
    expect(parseCommand('   ')).toEqual({ kind: 'none' });
  });
});

describe('mergeDraft (unsent steers the host kept in the draft)', () => {
  it('takes the host draft when it extends what is on screen', () => {
    expect(mergeDraft('draft', 'draft\n\na\n\nb', ['a', 'b'])).toBe('draft\n\na\n\nb');
    expect(mergeDraft('', 'a\n\nb', ['a', 'b'])).toBe('a\n\nb');
  });

  it('keeps typing since the last save and adds the steers once', () => {
    expect(mergeDraft('draft and more', 'draft\n\na', ['a'])).toBe('draft and more\n\na');
  });

  it('never doubles: a replay or a window that already has them adds nothing', () => {
    expect(mergeDraft('draft\n\na\n\nb', 'draft\n\na\n\nb', ['a', 'b'])).toBe('draft\n\na\n\nb');
    expect(mergeDraft('x\n\na\n\nb\n\nmore', 'x\n\na\n\nb', ['a', 'b'])).toBe('x\n\na\n\nb\n\nmore');
  });

  it('loses nothing when the host did not keep them (older host, or a save overwrote them)', () => {
    expect(mergeDraft('draft', '', ['a', 'b'])).toBe('draft\n\na\n\nb');
    expect(mergeDraft('draft', 'draft', ['a'])).toBe('draft\n\na');
    // "a" inside a word is not the steer "a".
    expect(mergeDraft('a draft', 'a draft', ['a'])).toBe('a draft\n\na');
  });
});

describe('task readers and labels', () => {
  it('normalises a task and the event; nulls become empty', () => {
    const t = toTask({ id: 't1', parent_session_id: 'p', session_id: 'h', status: 'queued', queue_position: 2, pending: null });
    expect(t).toMatchObject({ id: 't1', stream_id: '', prompt: '', result_preview: '', error: '', queue_position: 2 });
    expect(t!.pending).toEqual({ approval: null, clarify: null, approval_count: 0, clarify_count: 0 });
    expect(toTask({ status: 'running' })).toBeNull();
    expect(toTasksUpdate({ parent_session_id: 'p', tasks: null })).toEqual({ parent_session_id: 'p', tasks: [] });
    expect(toTasksUpdate({ tasks: [] })).toBeNull();
    const u = toTasksUpdate({ parent_session_id: 'p', tasks: [{ id: 'a', pending: { approval: { approval_id: 'x', command: 'rm' }, approval_count: 2 } }] });
    expect(u!.tasks[0].pending.approval?.approval_id).toBe('x');
    expect(u!.tasks[0].pending.approval_count).toBe(2);
  });

  it('labels queue positions and sorts running, queued by position, then ended', () => {
    const list = [
      task('done', 'p', { status: 'completed', ended_at: 50 }),
      task('q2', 'p', { status: 'queued', queue_position: 2, started_at: 0 }),
      task('run', 'p', { status: 'running' }),
      task('q1', 'p', { status: 'queued', queue_position: 1, started_at: 0 }),
    ];
    expect(sortTasks(list).map((t) => t.id)).toEqual(['run', 'q1', 'q2', 'done']);
    expect(taskStatusLabel(list[1])).toBe('Queued (#2)');
    expect(taskStatusLabel(list[2])).toBe('Running');
    expect(taskStatusLabel(task('w', 'p', { pending: { approval: { approval_id: 'a', command: 'x', description: '', pattern: '', timeout_s: 1, expires_at: 0, pending_count: 1 }, clarify: null, approval_count: 1, clarify_count: 0 } }))).toBe('Waiting for you');
  });

  it('elapsed time runs until now while running, and stops at the end', () => {
    expect(taskElapsedS(task('r', 'p', { started_at: 1000 }), 6500)).toBe(5.5);
    expect(taskElapsedS(task('c', 'p', { status: 'completed', started_at: 1000, ended_at: 3000 }), 99_000)).toBe(2);
    expect(taskElapsedS(task('q', 'p', { status: 'queued', started_at: 0 }))).toBeNull();
    expect(formatElapsed(7)).toBe('0:07');
    expect(formatElapsed(125)).toBe('2:05');
    expect(formatElapsed(3723)).toBe('1:02:03');
  });
});
