// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import { buildTranscript } from '../lib/cards';
import type { MessageView } from '../lib/protocol';
import TruncatedNote from './TruncatedNote.svelte';

function row(id: number, role: string, content: string, kind = ''): MessageView {
  return { id, position: id, role, content, kind, stream_id: 'st1' } as unknown as MessageView;
}

describe('a truncated answer', () => {
  it('is a truncated item after the answer, never an assistant bubble', () => {
    const items = buildTranscript([row(1, 'user', 'write a long essay'), row(2, 'assistant', 'The first half'), row(3, 'assistant', 'length', 'truncated')]);
    expect(items.map((i) => i.kind)).toEqual(['message', 'message', 'truncated']);
    const last = items[2];
    expect(last.kind === 'truncated' && last.reason).toBe('length');
  });

  it('says why and offers Continue', async () => {
    const oncontinue = vi.fn();
    render(TruncatedNote, { reason: 'length', oncontinue });
    expect(screen.getByRole('note').textContent).toMatch(/output limit/);
    await fireEvent.click(screen.getByRole('button', { name: 'Continue' }));
    expect(oncontinue).toHaveBeenCalledOnce();
  });

  it('names the content filter, and shows no Continue without a handler', () => {
    render(TruncatedNote, { reason: 'content_filter' });
    expect(screen.getByRole('note').textContent).toMatch(/content filter/);
    expect(screen.queryByRole('button')).toBeNull();
  });
});
