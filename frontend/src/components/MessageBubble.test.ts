// @vitest-environment jsdom
import { render } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import type { MessageView } from '../lib/protocol';
import MessageBubble from './MessageBubble.svelte';

function row(p: Partial<MessageView>): MessageView {
  return { id: 1, session_id: 's', position: 1, role: 'assistant', content: '', created_at: 1, ...p };
}

describe('MessageBubble', () => {
  it('shows a saved error row with its label, message and hint after the chat is reopened', () => {
    const { container } = render(MessageBubble, {
      message: row({
        kind: 'error',
        content: 'Conversation too long for the model: n_ctx exceeded',
        error: { type: 'context_too_large', label: 'Conversation too long for the model', message: 'n_ctx exceeded', hint: 'Use Summarise and continue.' },
      }),
    });
    const box = container.querySelector('.saved-error');
    expect(box?.getAttribute('data-error-type')).toBe('context_too_large');
    expect(box?.querySelector('strong')?.textContent).toBe('Conversation too long for the model');
    expect(box?.querySelector('.message')?.textContent).toBe('n_ctx exceeded');
    expect(box?.querySelector('.hint')?.textContent).toBe('Use Summarise and continue.');
    expect(container.textContent).toContain('Ended with an error');
  });

  it('shows an error row saved before hints were kept as its text', () => {
    const { container } = render(MessageBubble, { message: row({ kind: 'error', content: 'Rate limited: slow down' }) });
    expect(container.querySelector('.saved-error')).toBeNull();
    expect(container.textContent).toContain('Rate limited: slow down');
  });
});
