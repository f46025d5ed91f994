// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';
import { comboLabel, isMac, isTypingTarget, matchShortcut, SHORTCUTS, shortcutLabel } from './shortcuts';

function key(k: string, mods: Partial<Pick<KeyboardEvent, 'ctrlKey' | 'metaKey' | 'shiftKey' | 'altKey' | 'repeat'>> = {}): KeyboardEvent {
  return new KeyboardEvent('keydown', { key: k, ...mods });
}

describe('shortcuts', () => {
  it('use Ctrl on Linux and Windows, Cmd on macOS', () => {
    expect(matchShortcut(key('k', { ctrlKey: true }), { typing: false }, false)).toBe('search');
    expect(matchShortcut(key('k', { metaKey: true }), { typing: false }, false)).toBeNull();
    expect(matchShortcut(key('k', { metaKey: true }), { typing: false }, true)).toBe('search');
    expect(matchShortcut(key('k', { ctrlKey: true }), { typing: false }, true)).toBeNull();
    expect(matchShortcut(key('N', { ctrlKey: true }), { typing: true }, false)).toBe('new_chat');
    expect(matchShortcut(key(',', { ctrlKey: true }), { typing: false }, false)).toBe('settings');
    expect(matchShortcut(key('S', { ctrlKey: true, shiftKey: true }), { typing: false }, false)).toBe('chat_settings');
    expect(matchShortcut(key('s', { ctrlKey: true }), { typing: false }, false)).toBeNull();
  });

  it('switch chats with Ctrl+Tab on every platform', () => {
    expect(matchShortcut(key('Tab', { ctrlKey: true }), { typing: true }, true)).toBe('next_chat');
    expect(matchShortcut(key('Tab', { ctrlKey: true, shiftKey: true }), { typing: false }, false)).toBe('prev_chat');
    expect(matchShortcut(key('ArrowDown', { altKey: true }), { typing: false }, false)).toBe('next_chat');
    expect(matchShortcut(key('Tab'), { typing: false }, false)).toBeNull();
  });

  it('keep printable keys for typing', () => {
    expect(matchShortcut(key('?', { shiftKey: true }), { typing: false }, false)).toBe('shortcuts');
    expect(matchShortcut(key('?', { shiftKey: true }), { typing: true }, false)).toBeNull();
    expect(matchShortcut(key('/', { ctrlKey: true }), { typing: true }, false)).toBe('shortcuts');
    expect(matchShortcut(key('ArrowUp'), { typing: true, emptyComposer: true }, false)).toBe('edit_last');
    expect(matchShortcut(key('ArrowUp'), { typing: true, emptyComposer: false }, false)).toBeNull();
    expect(matchShortcut(key('k', { ctrlKey: true, repeat: true }), { typing: false }, false)).toBeNull();
  });

  it('are written in the platform\'s way', () => {
    expect(comboLabel({ key: 'k', mod: true }, false)).toBe('Ctrl+K');
    expect(comboLabel({ key: 'k', mod: true }, true)).toBe('⌘K');
    expect(comboLabel({ key: 'c', mod: true, shift: true }, true)).toBe('⇧⌘C');
    expect(comboLabel({ key: 'Tab', ctrl: true, shift: true }, false)).toBe('Ctrl+Shift+Tab');
    expect(shortcutLabel('stop', false)).toBe('Esc');
    expect(isMac('MacIntel')).toBe(true);
    expect(isMac('Linux x86_64')).toBe(false);
    // Every shortcut has a unique id and at least one way to press it.
    expect(new Set(SHORTCUTS.map((s) => s.id)).size).toBe(SHORTCUTS.length);
    expect(SHORTCUTS.every((s) => s.combos.length > 0)).toBe(true);
  });

  it('know a text field', () => {
    const ta = document.createElement('textarea');
    const btn = document.createElement('input');
    btn.type = 'checkbox';
    expect(isTypingTarget(ta)).toBe(true);
    expect(isTypingTarget(btn)).toBe(false);
    expect(isTypingTarget(document.body)).toBe(false);
  });
});
