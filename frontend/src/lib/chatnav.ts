// Moving between chats and answers from the keyboard (App's shortcuts): pure helpers
// over what the window already holds.

import type { MessageView, SessionInfo } from './protocol';

/**
 * The chat `step` places from the open one in the sidebar's order, wrapping at either
 * end (the first when none is open); null when the sidebar is empty.
 */
export function chatAt(list: readonly SessionInfo[], activeId: string | null, step: number): SessionInfo | null {
  if (list.length === 0) return null;
  const i = list.findIndex((s) => s.id === activeId);
  return list[(((i + step) % list.length) + list.length) % list.length] ?? null;
}

/** The text of the open chat's newest answer (never a marker row); null when none. */
export function lastAnswer(messages: readonly MessageView[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role === 'assistant' && m.content && !m.kind) return m.content;
  }
  return null;
}
