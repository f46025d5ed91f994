// The Markdown renderer (MarkdownView: marked, highlight.js, DOMPurify, about a third of
// the app's code) is loaded apart from the start-up bundle, once the window has painted
// its first screen (issue 16: parsing it cost the cold start ~15 ms); a message drawn
// before that shows its text until it arrives. Chats opened at start-up wait for it, so
// they are drawn once, formatted.
import type { Component } from 'svelte';

/** What MarkdownView takes: the Markdown source, and whether it still grows. */
export type MarkdownProps = { source: string; live?: boolean };

let view: Component<MarkdownProps> | null = null;
let loading: Promise<Component<MarkdownProps>> | null = null;

/** The renderer when it has been loaded, else null. */
export function markdownView(): Component<MarkdownProps> | null {
  return view;
}

/** Loads the renderer (once); resolves with it. */
export function loadMarkdown(): Promise<Component<MarkdownProps>> {
  loading ??= import('../components/MarkdownView.svelte').then((m) => (view = m.default));
  return loading;
}
