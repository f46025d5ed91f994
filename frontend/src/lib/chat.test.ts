// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { actionTargets, chatCostText, codeOf, copyText, turnCostText, usd } from './chat';
import type { MessageView } from './protocol';

const m = (id: number, role: MessageView['role'], content: string, kind = ''): MessageView =>
  ({ id, session_id: 's', position: id, role, content, reasoning: '', kind, stream_id: '', created_at: 0 }) as MessageView;

describe('chat helpers', () => {
  it('usd keeps a small cost readable and never rounds it to nothing', () => {
    expect(usd(0.0123)).toBe('$0.0123');
    expect(usd(0.5)).toBe('$0.50');
    expect(usd(0.0004)).toBe('$0.0004');
    expect(usd(0)).toBe('$0.00');
    expect(usd(2.349)).toBe('$2.35');
    expect(usd(Number.NaN)).toBe('$0');
  });

  it('turn and chat costs say where they come from and when some are unknown', () => {
    const usage = { input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, estimated_cost: 0.0123 };
    expect(turnCostText({ usage, cost_source: 'provider' })).toBe('$0.0123');
    expect(turnCostText({ usage, cost_source: 'price' })).toBe('$0.0123 (your price)');
    expect(turnCostText({ usage, cost_source: '' })).toBe('');
    expect(turnCostText(null)).toBe('');
    expect(chatCostText({ cost: 0.0246, cost_known: 2, cost_unknown: 1 })).toBe('≥ $0.0246');
    expect(chatCostText({ cost: 0, cost_known: 0, cost_unknown: 3 })).toBe('');
  });

  it('actionTargets: Retry on the last answer after the last message of yours, never a summary', () => {
    expect(actionTargets([m(1, 'user', 'a'), m(2, 'assistant', 'b'), m(3, 'user', 'c'), m(4, 'assistant', 'd'), m(5, 'system', 'sum', 'summary')])).toEqual({
      lastUser: '3', lastAnswer: '4',
    });
    // A steer row (kind) is not the message Edit acts on; an unanswered question has no answer to retry.
    expect(actionTargets([m(1, 'user', 'a'), m(2, 'assistant', 'b'), m(3, 'user', 'steer', 'steer'), m(4, 'user', 'q')])).toEqual({ lastUser: '4', lastAnswer: null });
  });

  it('copyText names the files; codeOf takes the text of the code, not its markup', () => {
    expect(copyText({ ...m(1, 'user', 'see'), attachments: [{ name: 'a.png' }, { name: 'b.txt' }] } as never)).toBe('see\n[a.png]\n[b.txt]');
    const pre = document.createElement('pre');
    pre.innerHTML = '<code><span class="hl">ls</span> -t &lt;dir&gt;\n</code>';
    expect(codeOf(pre)).toBe('ls -t <dir>\n');
    expect(codeOf(null)).toBe('');
  });
});
