import { describe, expect, it } from 'vitest';
import { chatAt, lastAnswer } from './chatnav';
import { message, session } from '../test/fakeApi';

describe('chatAt', () => {
  const list = [session('a', 3), session('b', 2), session('c', 1)];
  it('steps through the sidebar, wrapping at both ends', () => {
    expect(chatAt(list, 'a', 1)?.id).toBe('b');
    expect(chatAt(list, 'c', 1)?.id).toBe('a');
    expect(chatAt(list, 'a', -1)?.id).toBe('c');
  });
  it('starts from the top when no chat is open, and has nothing in an empty sidebar', () => {
    expect(chatAt(list, null, 1)?.id).toBe('a');
    expect(chatAt([], 'a', 1)).toBeNull();
  });
});

describe('lastAnswer', () => {
  it('is the newest answer, skipping marker rows and the user', () => {
    const rows = [
      message('1', 'assistant', 'first'),
      message('2', 'assistant', 'the answer'),
      message('3', 'assistant', 'summary', { kind: 'summary' }),
      message('4', 'user', 'thanks'),
    ];
    expect(lastAnswer(rows)).toBe('the answer');
    expect(lastAnswer([message('1', 'user', 'hi')])).toBeNull();
  });
});
