// Keyboard rules of the cards. Plain Enter never answers a card: only a click, or this
// explicit shortcut pressed while focus is inside the card, does.

/** Ctrl+Enter, Alt+Enter or Cmd+Enter, not held down (auto-repeat) and not mid-IME. */
export function isAnswerShortcut(e: KeyboardEvent): boolean {
  return e.key === 'Enter' && (e.ctrlKey || e.altKey || e.metaKey) && !e.shiftKey && !e.repeat && !e.isComposing;
}

/** How long a new card ignores clicks, so a double click on the card before it cannot answer it. */
export const ARM_DELAY_MS = 600;
