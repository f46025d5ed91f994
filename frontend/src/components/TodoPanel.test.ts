// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import type { TodoItem } from '../lib/protocol';
import TodoPanel from './TodoPanel.svelte';

const todos: TodoItem[] = [
  { id: '1', content: 'Read the failing test', status: 'completed' },
  { id: '2', content: 'Fix the race', status: 'in_progress' },
  { id: '3', content: 'Run the suite', status: 'pending' },
  { id: '3', content: 'Rewrite it in Rust', status: 'cancelled' },
];

describe('TodoPanel', () => {
  it('lists the todos with their status, and collapses', async () => {
    const { container } = render(TodoPanel, { todos });
    expect(screen.getByText('1 of 4 done')).toBeTruthy();
    const items = [...container.querySelectorAll('li')];
    expect(items.map((li) => li.className.split(' ')[0])).toEqual(['completed', 'in_progress', 'pending', 'cancelled']);
    expect(items[1].textContent).toMatch(/in progress:\s*Fix the race/);
    const head = screen.getByRole('button');
    expect(head.getAttribute('aria-expanded')).toBe('true');
    await fireEvent.click(head);
    expect(container.querySelector('li')).toBeNull();
    expect(head.getAttribute('aria-expanded')).toBe('false');
    expect(screen.getByText('Fix the race')).toBeTruthy(); // the current step stays visible
  });
});
