// Markdown for text written by a model or a tool: marked renders, highlight.js colours
// code blocks (once it is loaded: loadHighlighter), DOMPurify sanitises. Raw HTML in the source is shown as text, never
// parsed (HTML comments are dropped); only http(s) and mailto links survive, other
// links become plain text; images become plain links (the CSP blocks remote images
// anyway, and a remote image would leak that the chat was read). Single line breaks
// are kept (GitHub's comments and chat apps keep them); block elements get dir="auto"
// so right-to-left paragraphs read right to left.
//
// A message is rendered as a list of top-level blocks (renderBlocks), each parsed,
// highlighted and sanitised on its own and cached by its source, so a saved message is
// rendered once per revision and a streaming answer re-renders only its unfinished
// tail (StreamingMarkdown).

import { Lexer, Marked, Tokenizer, type Token, type Tokens, type TokensList } from 'marked';
import { markedHighlight } from 'marked-highlight';
import DOMPurify, { type Config } from 'dompurify';
import { createSubscriber } from 'svelte/reactivity';
import { markBidiControls } from './commandview';
import { isSafeExternalUrl } from './links';

// ---- code colours ------------------------------------------------------------------

/** highlight.js (lib/highlighter), once loaded; until then code blocks are plain text. */
let highlighter: ((code: string, lang: string) => string) | null = null;
let loading: Promise<void> | null = null;
/** Tells the views that drew plain code blocks that the colours arrived (whenColoured). */
let coloured: (() => void) | null = null;

/**
 * Makes a derived or an effect run again once code can be coloured: a view that drew a
 * code block before loadHighlighter settled reads it, and draws the block again then.
 */
export const whenColoured = createSubscriber((update) => {
  coloured = update;
  return () => {
    if (coloured === update) coloured = null;
  };
});

/** Whether code blocks are coloured now (highlight.js is loaded). */
export function codeColoured(): boolean {
  return highlighter !== null;
}

/**
 * Loads highlight.js (its own chunk, lib/highlighter) and colours code blocks from then
 * on: blocks already drawn plain are dropped from the cache and their views draw them
 * again (whenColoured). The window calls it after its first paint (main.ts), so the
 * first screen never waits for the chunk; when it never arrives, code stays plain text,
 * readable and copyable. Rejects when the chunk cannot be loaded (a later call tries again).
 */
export function loadHighlighter(): Promise<void> {
  loading ??= import('./highlighter').then(
    (m) => {
      highlighter = m.highlight;
      for (const [key, block] of blockCache) {
        if (block.kind === 'code') {
          blockCache.delete(key);
          blockCacheChars -= cacheCost(key, block);
        }
      }
      coloured?.();
    },
    (err: unknown) => {
      loading = null;
      throw err;
    },
  );
  return loading;
}

/** code as HTML: highlighted once highlight.js is loaded, escaped plain text before. */
export function highlightCode(code: string, lang: string): string {
  return highlighter ? highlighter(code, lang) : escapeHtml(code);
}

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Class of a link whose target was not safe: shown as its text, not as a link. */
export const DEAD_LINK_CLASS = 'dead-link';

/** Complete HTML comments (`<!-- … -->`); an unclosed one stays, shown as text. */
const COMMENT = /<!--[\s\S]*?-->/g;

const marked = new Marked(
  markedHighlight({
    emptyLangClass: 'hljs',
    langPrefix: 'hljs language-',
    highlight: (code, lang) => highlightCode(code, (lang || '').trim().split(/\s+/)[0].toLowerCase()),
  }),
  {
    gfm: true,
    breaks: true,
    async: false,
    tokenizer: {
      // marked treats the text after `<pre>`, `<code>`, `<kbd>` or `<script>` as raw
      // HTML ("inRawBlock") and after `<a>` as link text. Raw HTML is text here, so a
      // tag never changes the lexer's state: what follows it is ordinary Markdown text,
      // escaped like any other.
      tag(src: string) {
        const state = this.lexer.state;
        const inLink = state.inLink;
        const token = Tokenizer.prototype.tag.call(this, src);
        state.inLink = inLink;
        state.inRawBlock = false;
        return token;
      },
    },
    renderer: {
      // Raw HTML (block or inline) is text for us; comments are left out.
      html(token: Tokens.HTML | Tokens.Tag): string {
        const text = escapeHtml(token.text.replace(COMMENT, ''));
        if (!text.trim()) return '';
        return 'block' in token && token.block ? `<p>${text.trim()}</p>\n` : text;
      },
      // Text is always escaped (never passed through as HTML).
      text(token: Tokens.Text | Tokens.Escape): string | false {
        if ('tokens' in token && token.tokens) return false;
        return 'escaped' in token && token.escaped ? escapeHtml(token.text) : false;
      },
      link(token: Tokens.Link): string | false {
        if (isSafeExternalUrl(token.href)) return false;
        return `<span class="${DEAD_LINK_CLASS}">${this.parser.parseInline(token.tokens)}</span>`;
      },
      image(token: Tokens.Image): string {
        const label = escapeHtml(token.text || token.href);
        if (!isSafeExternalUrl(token.href)) return label;
        return `<a href="${escapeHtml(token.href)}">${label}</a>`;
      },
    },
  },
);

const ALLOWED_TAGS = [
  'a', 'p', 'br', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'strong', 'em', 'del', 's',
  'code', 'pre', 'blockquote', 'ul', 'ol', 'li', 'table', 'thead', 'tbody', 'tr', 'th',
  'td', 'span', 'input', 'sup', 'sub',
];

const PURIFY_CONFIG: Config = {
  ALLOWED_TAGS,
  ALLOWED_ATTR: ['href', 'title', 'class', 'align', 'start', 'type', 'checked', 'disabled', 'dir'],
  // The URL rule below is for URLs only: these attributes are not URLs (an ordered
  // list's start number, a table column's alignment, a task list's checkbox).
  ADD_URI_SAFE_ATTR: ['align', 'start', 'type', 'checked', 'disabled', 'dir'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  FORBID_TAGS: ['style', 'script', 'iframe', 'object', 'embed', 'form', 'svg', 'math'],
  FORBID_ATTR: ['style', 'srcset', 'src', 'action', 'formaction'],
  KEEP_CONTENT: true,
};

/** The classes our renderer writes: highlight.js's, the code language, dead links. */
const CLASS_OK = /^(?:hljs(?:-[\w-]+)?|language-[\w+#.-]+|dead-link|[a-z]+_)$/;
/** Elements that get dir="auto" (their text decides left-to-right or right-to-left). */
const DIR_AUTO = new Set(['P', 'LI', 'UL', 'OL', 'H1', 'H2', 'H3', 'H4', 'H5', 'H6', 'BLOCKQUOTE', 'TD', 'TH', 'TABLE']);
const ALIGN_OK = new Set(['left', 'right', 'center']);

type Purifier = ReturnType<typeof DOMPurify>;
let purifier: Purifier | null = null;

function getPurifier(): Purifier {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook('uponSanitizeAttribute', (node, data) => {
    if (data.attrName === 'class') {
      // Only our renderer's classes: no text can borrow the app's own styles.
      data.attrValue = data.attrValue.split(/\s+/).filter((c) => CLASS_OK.test(c)).join(' ');
      if (!data.attrValue) data.keepAttr = false;
    } else if (data.attrName === 'align') {
      data.keepAttr = (node.nodeName === 'TD' || node.nodeName === 'TH') && ALIGN_OK.has(data.attrValue.toLowerCase());
    } else if (data.attrName === 'start') {
      data.keepAttr = node.nodeName === 'OL' && /^-?\d{1,9}$/.test(data.attrValue.trim());
    } else if (data.attrName === 'dir') {
      data.keepAttr = data.attrValue === 'auto';
    } else if (data.attrName === 'type' || data.attrName === 'checked' || data.attrName === 'disabled') {
      data.keepAttr = node.nodeName === 'INPUT';
    }
  });
  p.addHook('afterSanitizeAttributes', (node) => {
    const el = node as Element;
    if (node.nodeName === 'INPUT') {
      // GFM task lists render disabled checkboxes; no input is ever live.
      el.setAttribute('type', 'checkbox');
      el.setAttribute('disabled', '');
    }
    if (node.nodeName === 'A') {
      const href = el.getAttribute('href');
      if (href !== null && !isSafeExternalUrl(href)) el.removeAttribute('href');
      if (el.hasAttribute('href')) el.setAttribute('title', el.getAttribute('title') || href || '');
      // A link without a target is text, not a link.
      else el.setAttribute('class', DEAD_LINK_CLASS);
    }
    if (DIR_AUTO.has(node.nodeName)) el.setAttribute('dir', 'auto');
  });
  purifier = p;
  return p;
}

/** Sanitises an HTML fragment with the markdown allow-list. */
export function sanitizeHtml(html: string): string {
  // Bidi controls are not markup, so marking them in the sanitised HTML cannot change
  // its structure; they are made visible wherever they are (text and attributes).
  return markBidiControls(getPurifier().sanitize(html, PURIFY_CONFIG) as string);
}

/** Renders untrusted markdown to safe HTML (the whole text at once). */
export function renderMarkdown(src: string): string {
  if (!src) return '';
  return renderBlocks(src)
    .map((b) => b.html)
    .join('');
}

// ---- blocks -------------------------------------------------------------------------

/** One top-level block of rendered Markdown: safe HTML, and what kind of block it is. */
export interface MdBlock {
  /**
   * "code": a fenced or indented code block; "table"; "html": anything else;
   * "open-code": a fenced code block still being streamed (its fence not closed yet),
   * shown as plain text (`text`, never HTML) and highlighted once it closes.
   */
  kind: 'code' | 'table' | 'html' | 'open-code';
  /** Sanitised HTML of the block ('' for open-code). */
  html: string;
  /** For code: how many lines it has, and the language named after its fence. */
  lines?: number;
  lang?: string;
  /**
   * For open-code: the code written so far, as the model wrote it (shown as text, never
   * parsed as HTML; its bidi controls are made visible when it is shown).
   */
  text?: string;
}

// ---- fenced code still being written --------------------------------------------------

/** An opening code fence (CommonMark 4.5): up to 3 spaces, 3+ backticks or tildes, info. */
const OPEN_FENCE = /^( {0,3})(`{3,}|~{3,})([^\n]*)\n/;

/** A fenced code block open at the start of a streaming text's unfinished tail. */
interface OpenFence {
  /** The fence's character and length: a closing fence is the same character, at least as many. */
  char: string;
  len: number;
  /** The language (first word of the info string). */
  lang: string;
  /** Where the code starts in the tail (after the opening line). */
  body: number;
  /** How far the tail was searched for a closing fence without finding one (a line start). */
  scanned: number;
}

/**
 * openFence reads an opening fence at the start of `tail`; null when there is none, or
 * when a backtick fence's info string holds a backtick (then it is not a fence).
 */
function openFence(tail: string): OpenFence | null {
  const m = OPEN_FENCE.exec(tail);
  if (!m) return null;
  const [line, , fence, info] = m;
  if (fence[0] === '`' && info.includes('`')) return null;
  return { char: fence[0], len: fence.length, lang: info.trim().split(/\s+/)[0] ?? '', body: line.length, scanned: line.length };
}

/**
 * fenceClosed reports whether `tail` holds the closing fence of `f` past f.scanned: a
 * line of up to 3 spaces, at least f.len of f.char, then only spaces or tabs (CommonMark
 * 4.5), ended by a newline (a last line without one may still grow). It moves
 * f.scanned to the last line start searched, so a growing tail is read once.
 */
function fenceClosed(tail: string, f: OpenFence): boolean {
  let i = f.scanned;
  for (;;) {
    const nl = tail.indexOf('\n', i);
    if (nl < 0) {
      f.scanned = i;
      return false;
    }
    if (isClosingFence(tail, i, nl, f)) return true;
    i = nl + 1;
  }
}

function isClosingFence(s: string, start: number, end: number, f: OpenFence): boolean {
  let i = start;
  while (i < end && i - start < 3 && s[i] === ' ') i++;
  let n = 0;
  while (i < end && s[i] === f.char) {
    i++;
    n++;
  }
  if (n < f.len) return false;
  while (i < end && (s[i] === ' ' || s[i] === '\t')) i++;
  return i === end;
}

/** A code block longer than this many lines is shown collapsed with "Show all". */
export const CODE_COLLAPSE_LINES = 40;

type Links = TokensList['links'];

/** Rendered blocks by source (kind + raw text), least recently used first. */
const blockCache = new Map<string, MdBlock>();
let blockCacheChars = 0;
/**
 * How much the cache keeps (characters): each block's source and its HTML. The HTML
 * counts too: a highlighted code block's is several times its source, and with the
 * source alone counted the cache held that much more than its bound (issue 24).
 */
const BLOCK_CACHE_CHARS = 8_000_000;

function cacheCost(key: string, b: MdBlock): number {
  return key.length + b.html.length;
}

function cached(key: string): MdBlock | undefined {
  const b = blockCache.get(key);
  if (b) {
    blockCache.delete(key);
    blockCache.set(key, b);
  }
  return b;
}

function remember(key: string, b: MdBlock): void {
  const old = blockCache.get(key);
  if (old) blockCacheChars -= cacheCost(key, old);
  blockCache.delete(key);
  blockCache.set(key, b);
  blockCacheChars += cacheCost(key, b);
  while (blockCacheChars > BLOCK_CACHE_CHARS && blockCache.size > 1) {
    const [oldest, ob] = blockCache.entries().next().value as [string, MdBlock];
    blockCache.delete(oldest);
    blockCacheChars -= cacheCost(oldest, ob);
  }
}

/**
 * What the rendered-block cache holds now: its blocks and their characters (source and
 * HTML), at most BLOCK_CACHE_CHARS unless one block alone is larger. For tests and
 * diagnostics.
 */
export function markdownCacheUse(): { blocks: number; chars: number } {
  return { blocks: blockCache.size, chars: blockCacheChars };
}

/** Lexes src into block tokens, with link definitions from earlier text known. */
function lex(src: string, links: Links | null): TokensList {
  const lexer = new Lexer(marked.defaults);
  if (links) Object.assign(lexer.tokens.links, links);
  return lexer.lex(src);
}

/** Renders one block token (highlighting and sanitising it), cached by its source. */
function renderToken(token: Token, links: Links | null, useCache: boolean): MdBlock {
  // A block's HTML depends on its source only, except for reference links defined
  // elsewhere: those blocks are keyed with the definitions they may use.
  const key = token.type + '\u0000' + token.raw + (links && Object.keys(links).length ? '\u0000' + JSON.stringify(links) : '');
  if (useCache) {
    const hit = cached(key);
    if (hit) return hit;
  }
  const list = [token];
  marked.walkTokens(list, marked.defaults.walkTokens!);
  const html = sanitizeHtml(marked.parser(list));
  let block: MdBlock;
  if (token.type === 'code') {
    const code = token as Tokens.Code;
    const raw = code.raw.replace(/\n+$/, '');
    const body = code.codeBlockStyle === 'indented' ? raw : raw.replace(/^[^\n]*\n?/, '').replace(/\n?[^\n]*$/, '');
    block = { kind: 'code', html, lines: body === '' ? 0 : body.split('\n').length, lang: (code.lang || '').trim().split(/\s+/)[0] };
  } else {
    block = { kind: token.type === 'table' ? 'table' : 'html', html };
  }
  if (useCache) remember(key, block);
  return block;
}

function normalise(src: string): string {
  return src.includes('\r') ? src.replace(/\r\n?/g, '\n') : src;
}

/** Blocks per group of a rendered message (MarkdownView: finished groups are skipped off screen). */
export const BLOCK_GROUP = 16;

/**
 * Cuts blocks into groups of BLOCK_GROUP. A group whose blocks are the same objects as
 * the same group of `previous` (the last call's result) is returned as that array, so a
 * render of a streaming answer changes its last group only, not each of the ~1,000
 * blocks of 100 KB of prose.
 */
export function groupBlocks(blocks: readonly MdBlock[], previous: readonly MdBlock[][] = []): MdBlock[][] {
  const out: MdBlock[][] = [];
  for (let i = 0; i < blocks.length; i += BLOCK_GROUP) {
    const was = previous[out.length];
    const n = Math.min(BLOCK_GROUP, blocks.length - i);
    let same = was !== undefined && was.length === n;
    for (let k = 0; same && k < n; k++) same = was[k] === blocks[i + k];
    out.push(same ? was : blocks.slice(i, i + n));
  }
  return out;
}

/** Renders untrusted markdown as top-level blocks, each cached by its source. */
export function renderBlocks(src: string): MdBlock[] {
  if (!src) return [];
  const tokens = lex(normalise(src), null);
  const links = Object.keys(tokens.links).length ? tokens.links : null;
  return tokens.filter((t) => t.type !== 'space').map((t) => renderToken(t, links, true)).filter((b) => b.html !== '');
}

/**
 * Renders a text that grows at its end (a streaming answer). Blocks followed by another
 * block are done: they are parsed, highlighted and sanitised once and returned as the
 * same objects on every update; only the last block (the one still being written) is
 * lexed and rendered again, so an update costs the size of the unfinished block, not of
 * the answer. A text that does not extend the previous one starts over, and so does a
 * new reference-link definition (finished blocks may use it).
 */
export class StreamingMarkdown {
  /** The source of the finished blocks (normalised), and the blocks. */
  private doneSrc = '';
  private done: MdBlock[] = [];
  private links: Links = Object.create(null) as Links;
  /** A fenced code block open at the start of the tail, while it stays open. */
  private fence: OpenFence | null = null;

  update(source: string): MdBlock[] {
    const src = normalise(source);
    if (!src.startsWith(this.doneSrc)) this.reset();
    const tail = src.slice(this.doneSrc.length);
    if (!tail) return this.done;
    // A code block still being written (the usual long tail: an answer that is one long
    // code block) is neither lexed, highlighted nor sanitised on each update: its text
    // is shown as it is until its fence closes (issue 24, item 2: highlighting a 1 MB
    // block again per update cost 20 CPU-s per 1,000 tokens).
    this.fence ??= openFence(tail);
    if (this.fence && !fenceClosed(tail, this.fence)) {
      const f = this.fence;
      return [...this.done, { kind: 'open-code', html: '', lang: f.lang, text: tail.slice(f.body) }];
    }
    this.fence = null;
    const tokens = lex(tail, this.links);
    let last = tokens.length - 1;
    while (last >= 0 && tokens[last].type === 'space') last--;
    // Link definitions of finished blocks are final; a new one may be used by blocks
    // finished before it: render everything again, once.
    const defs: Links = Object.create(null) as Links;
    for (let i = 0; i < last; i++) {
      const t = tokens[i];
      if (t.type === 'def' && tokens.links[(t as Tokens.Def).tag]) defs[(t as Tokens.Def).tag] = tokens.links[(t as Tokens.Def).tag];
    }
    if (Object.keys(defs).length > 0 && this.doneSrc !== '') {
      const links = { ...this.links, ...defs };
      this.reset();
      Object.assign(this.links, links);
      return this.update(source);
    }
    Object.assign(this.links, defs);
    // The tokens' sources add up to the text; if not, play safe and keep nothing done.
    let total = 0;
    for (const t of tokens) total += t.raw.length;
    const links = Object.keys(this.links).length > 0 ? this.links : null;
    if (total === tail.length) {
      for (let i = 0; i < last; i++) {
        const t = tokens[i];
        this.doneSrc += t.raw;
        if (t.type === 'space') continue;
        const b = renderToken(t, links, true);
        if (b.html !== '') this.done.push(b);
      }
    } else {
      last = 0;
    }
    // The unfinished tail, with the definitions seen so far (its own included).
    const tailLinks = Object.keys(tokens.links).length > 0 ? tokens.links : null;
    const out = this.done.slice();
    for (let i = Math.max(last, 0); i < tokens.length; i++) {
      if (tokens[i].type === 'space') continue;
      const b = renderToken(tokens[i], tailLinks, false);
      if (b.html !== '') out.push(b);
    }
    return out;
  }

  reset(): void {
    this.doneSrc = '';
    this.done = [];
    this.links = Object.create(null) as Links;
    this.fence = null;
  }
}
