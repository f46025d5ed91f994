// @vitest-environment jsdom
// The rendered-block cache when highlight.js arrives. The test setup loads it for every
// file: this test takes a fresh copy of the module, whose highlighter is not loaded yet.
import { describe, expect, it, vi } from 'vitest';

describe('loadHighlighter', () => {
  it('drops the plain code blocks from the cache and counts what they held', async () => {
    vi.resetModules();
    const md = await import('./markdown');
    expect(md.codeColoured()).toBe(false);
    md.renderBlocks('A paragraph that stays cached.');
    const prose = md.markdownCacheUse();
    const [plain] = md.renderBlocks('```go\nfunc main() {}\n```');
    expect(plain.html).not.toContain('hljs-keyword');
    expect(md.markdownCacheUse().blocks).toBe(prose.blocks + 1);
    await md.loadHighlighter();
    expect(md.codeColoured()).toBe(true);
    // The code block's source and HTML both leave the count: it is the prose's again.
    expect(md.markdownCacheUse()).toEqual(prose);
    const [coloured] = md.renderBlocks('```go\nfunc main() {}\n```');
    expect(coloured.html).toContain('hljs-keyword');
  });
});
