// @vitest-environment jsdom
// The Markdown renderer is loaded apart from the start-up bundle (lib/markdownview):
// until it is here a message shows its text, escaped, and it is drawn formatted once it is.
import { render, waitFor } from '@testing-library/svelte';
import type { Component } from 'svelte';
import { describe, expect, it, vi } from 'vitest';
import MarkdownView from './MarkdownView.svelte';
import type { MarkdownProps } from '../lib/markdownview';

// A renderer that arrives when the test says so.
const arrival = vi.hoisted(() => {
  let release: (v: unknown) => void = () => {};
  const promise = new Promise((r) => (release = r));
  return { promise, release: (v: unknown) => release(v) };
});
vi.mock('../lib/markdownview', () => ({
  markdownView: () => null,
  loadMarkdown: () => arrival.promise,
}));

import Markdown from './Markdown.svelte';

describe('Markdown before its renderer is loaded', () => {
  it('shows the text as text, then the formatted message', async () => {
    const source = 'Hello **world** <img src=x onerror="window.__pwned=1">';
    const { container } = render(Markdown, { source });
    const plain = container.querySelector('.md-plain');
    expect(plain?.textContent).toBe(source);
    expect(container.querySelector('img')).toBeNull();
    arrival.release(MarkdownView as Component<MarkdownProps>);
    await waitFor(() => expect(container.querySelector('strong')?.textContent).toBe('world'));
    expect(container.querySelector('.md-plain')).toBeNull();
    expect(container.querySelector('img[onerror]')).toBeNull();
    expect((window as unknown as { __pwned?: number }).__pwned).toBeUndefined();
  });
});
