// Markdown for text written by a model or a tool: marked renders, highlight.js colours
// code blocks, DOMPurify sanitises. Raw HTML in the source is shown as text, never
// parsed; only http(s) and mailto links survive; images become plain links (the CSP
// blocks remote images anyway, and a remote image would leak that the chat was read).

import { Marked, type Tokens } from 'marked';
import { markedHighlight } from 'marked-highlight';
import DOMPurify, { type Config } from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import plaintext from 'highlight.js/lib/languages/plaintext';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import shell from 'highlight.js/lib/languages/shell';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { isSafeExternalUrl } from './links';

const LANGUAGES = { bash, css, diff, go, javascript, json, plaintext, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

export function highlightCode(code: string, lang: string): string {
  const language = lang && hljs.getLanguage(lang) ? lang : 'plaintext';
  return hljs.highlight(code, { language, ignoreIllegals: true }).value;
}

export function escapeHtml(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const marked = new Marked(
  markedHighlight({
    emptyLangClass: 'hljs',
    langPrefix: 'hljs language-',
    highlight: (code, lang) => highlightCode(code, (lang || '').trim().split(/\s+/)[0].toLowerCase()),
  }),
  {
    gfm: true,
    breaks: false,
    async: false,
    renderer: {
      // Raw HTML (block or inline) is text for us.
      html(token: Tokens.HTML | Tokens.Tag): string {
        const text = escapeHtml(token.text);
        return 'block' in token && token.block ? `<p>${text.trim()}</p>\n` : text;
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
  ALLOWED_ATTR: ['href', 'title', 'class', 'align', 'start', 'type', 'checked', 'disabled'],
  ALLOW_DATA_ATTR: false,
  ALLOW_ARIA_ATTR: false,
  ALLOWED_URI_REGEXP: /^(?:https?:|mailto:)/i,
  FORBID_TAGS: ['style', 'script', 'iframe', 'object', 'embed', 'form', 'svg', 'math'],
  FORBID_ATTR: ['style', 'srcset', 'src', 'action', 'formaction'],
  KEEP_CONTENT: true,
};

type Purifier = ReturnType<typeof DOMPurify>;
let purifier: Purifier | null = null;

function getPurifier(): Purifier {
  if (purifier) return purifier;
  const p = DOMPurify(window);
  p.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName === 'INPUT') {
      // GFM task lists render disabled checkboxes; no input is ever live.
      const el = node as Element;
      el.setAttribute('type', 'checkbox');
      el.setAttribute('disabled', '');
    }
    if (node.nodeName === 'A') {
      const el = node as Element;
      const href = el.getAttribute('href');
      if (href !== null && !isSafeExternalUrl(href)) el.removeAttribute('href');
      if (el.hasAttribute('href')) el.setAttribute('title', el.getAttribute('title') || href || '');
    }
  });
  purifier = p;
  return p;
}

/** Sanitises an HTML fragment with the markdown allow-list. */
export function sanitizeHtml(html: string): string {
  return getPurifier().sanitize(html, PURIFY_CONFIG) as string;
}

/** Renders untrusted markdown to safe HTML. */
export function renderMarkdown(src: string): string {
  if (!src) return '';
  const html = marked.parse(src, { async: false }) as string;
  return sanitizeHtml(html);
}
