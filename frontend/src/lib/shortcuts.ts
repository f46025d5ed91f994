// Keyboard shortcuts of the window, following each platform's convention: the command
// key is Ctrl on Linux and Windows and ⌘ (Cmd) on macOS, and macOS writes shortcuts
// with symbols (⌘⇧K) where the others write words (Ctrl+Shift+K). The list is also the
// shortcut sheet's content (ShortcutSheet.svelte), so what the sheet says is what the
// window does.

export type ShortcutId =
  | 'new_chat'
  | 'search'
  | 'settings'
  | 'stop'
  | 'next_chat'
  | 'prev_chat'
  | 'copy_last'
  | 'edit_last'
  | 'chat_settings'
  | 'shortcuts';

/** One way to press a shortcut. `mod` is Ctrl, or ⌘ on macOS; `ctrl` is Ctrl everywhere. */
export interface KeyCombo {
  /** KeyboardEvent.key, compared case-insensitively ("k", ",", "Tab", "ArrowUp", "Escape", "?"). */
  key: string;
  mod?: boolean;
  ctrl?: boolean;
  shift?: boolean;
  alt?: boolean;
}

export interface ShortcutDef {
  id: ShortcutId;
  label: string;
  combos: KeyCombo[];
  /**
   * `anywhere`: also while typing in a field; `outside_fields`: not while typing (a
   * printable key); `empty_composer`: only in the empty message field.
   */
  where: 'anywhere' | 'outside_fields' | 'empty_composer';
}

export const SHORTCUTS: readonly ShortcutDef[] = [
  { id: 'new_chat', label: 'New chat', combos: [{ key: 'n', mod: true }], where: 'anywhere' },
  { id: 'search', label: 'Search chats', combos: [{ key: 'k', mod: true }], where: 'anywhere' },
  { id: 'next_chat', label: 'Next chat', combos: [{ key: 'Tab', ctrl: true }, { key: 'ArrowDown', alt: true }], where: 'anywhere' },
  { id: 'prev_chat', label: 'Previous chat', combos: [{ key: 'Tab', ctrl: true, shift: true }, { key: 'ArrowUp', alt: true }], where: 'anywhere' },
  { id: 'stop', label: 'Stop the answer', combos: [{ key: 'Escape' }, { key: '.', mod: true }], where: 'anywhere' },
  { id: 'copy_last', label: 'Copy the last answer', combos: [{ key: 'c', mod: true, shift: true }], where: 'anywhere' },
  { id: 'edit_last', label: 'Edit your last message', combos: [{ key: 'ArrowUp' }], where: 'empty_composer' },
  { id: 'chat_settings', label: 'Chat settings', combos: [{ key: 's', mod: true, shift: true }], where: 'anywhere' },
  { id: 'settings', label: 'Settings', combos: [{ key: ',', mod: true }], where: 'anywhere' },
  { id: 'shortcuts', label: 'Keyboard shortcuts', combos: [{ key: '/', mod: true }, { key: '?' }], where: 'outside_fields' },
];

/** Whether this is macOS (⌘ instead of Ctrl). */
export function isMac(platform?: string): boolean {
  const p =
    platform ??
    (typeof navigator !== 'undefined'
      ? ((navigator as Navigator & { userAgentData?: { platform?: string } }).userAgentData?.platform ?? navigator.platform ?? '')
      : '');
  return /mac|iphone|ipad/i.test(p);
}

const MAC_KEYS: Record<string, string> = {
  ArrowUp: '↑',
  ArrowDown: '↓',
  Escape: 'Esc',
  Tab: '⇥',
  Enter: '↩',
};
const WORD_KEYS: Record<string, string> = {
  ArrowUp: '↑',
  ArrowDown: '↓',
  Escape: 'Esc',
  Tab: 'Tab',
  Enter: 'Enter',
};

/** How a combo is written on this platform: "Ctrl+Shift+K" or "⌃⇧K" style on macOS. */
export function comboLabel(c: KeyCombo, mac: boolean): string {
  const key = (mac ? MAC_KEYS : WORD_KEYS)[c.key] ?? (c.key.length === 1 ? c.key.toUpperCase() : c.key);
  if (mac) {
    return `${c.ctrl ? '⌃' : ''}${c.alt ? '⌥' : ''}${c.shift ? '⇧' : ''}${c.mod ? '⌘' : ''}${key}`;
  }
  const parts: string[] = [];
  if (c.mod || c.ctrl) parts.push('Ctrl');
  if (c.alt) parts.push('Alt');
  if (c.shift) parts.push('Shift');
  parts.push(key);
  return parts.join('+');
}

/** Every way to press a shortcut, for the sheet and tooltips ("Ctrl+K"). */
export function shortcutLabels(id: ShortcutId, mac = isMac()): string[] {
  return SHORTCUTS.find((s) => s.id === id)?.combos.map((c) => comboLabel(c, mac)) ?? [];
}

/** The first way to press a shortcut ("" when unknown), e.g. for a button's title. */
export function shortcutLabel(id: ShortcutId, mac = isMac()): string {
  return shortcutLabels(id, mac)[0] ?? '';
}

function comboMatches(c: KeyCombo, e: KeyboardEvent, mac: boolean): boolean {
  const mod = mac ? e.metaKey : e.ctrlKey;
  const wantCtrl = c.ctrl || (!mac && c.mod);
  const wantMeta = mac && c.mod;
  if (!!wantCtrl !== e.ctrlKey || !!wantMeta !== e.metaKey || !!c.alt !== e.altKey) return false;
  if (c.mod && !mod) return false;
  // "?" is typed with Shift on some layouts and without it on others: compare the
  // character only.
  if (c.key === '?') return e.key === '?';
  if (!!c.shift !== e.shiftKey) return false;
  return e.key.toLowerCase() === c.key.toLowerCase();
}

/** Where the key was pressed. */
export interface KeyContext {
  /** Focus is in a text field (input, textarea, contenteditable). */
  typing: boolean;
  /** Focus is in the message field and it is empty. */
  emptyComposer?: boolean;
}

/** The shortcut e presses in ctx, or null. Held-down (repeated) and IME keys never match. */
export function matchShortcut(e: KeyboardEvent, ctx: KeyContext, mac = isMac()): ShortcutId | null {
  if (e.isComposing || e.repeat) return null;
  for (const s of SHORTCUTS) {
    if (s.where === 'outside_fields' && ctx.typing && !s.combos.some((c) => c.mod && comboMatches(c, e, mac))) continue;
    if (s.where === 'empty_composer' && !ctx.emptyComposer) continue;
    if (s.combos.some((c) => comboMatches(c, e, mac))) return s.id;
  }
  return null;
}

/** Whether the element is a field the user types in. */
export function isTypingTarget(el: EventTarget | null): boolean {
  if (!(el instanceof HTMLElement)) return false;
  if (el.isContentEditable) return true;
  if (el instanceof HTMLTextAreaElement) return true;
  if (el instanceof HTMLInputElement) {
    return !['button', 'checkbox', 'radio', 'range', 'submit', 'reset', 'file', 'color'].includes(el.type);
  }
  return el instanceof HTMLSelectElement;
}
