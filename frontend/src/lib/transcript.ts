// The open chat's saved rows are read a page at a time (GetTranscript and
// GetTranscriptFrom, backend/transcript.go): the last screen first, older pages as the
// user scrolls up, newer ones below a search hit. These merge a page into the rows
// already loaded, keeping the loaded objects of rows that did not change (same id: a
// saved row never changes under its id), so unchanged rows are not rendered again.

import { buildTranscript, type TranscriptItem } from './cards';
import type { MessageView } from './protocol';

/** Rows read when a chat opens: the last screen and a margin. */
export const FIRST_PAGE = 40;
/** Rows read per older or newer page. */
export const PAGE = 150;
/** Rows read above a search hit when a chat opens at it. */
export const AROUND = 20;
/** The most rows one read returns (store.MaxPageRows). */
export const MAX_PAGE = 1000;
/** Sessions per sidebar page. */
export const SESSION_PAGE = 100;

function reuse(loaded: readonly MessageView[], page: readonly MessageView[]): MessageView[] {
  if (loaded.length === 0) return [...page];
  const byId = new Map(loaded.map((m) => [String(m.id), m]));
  return page.map((m) => byId.get(String(m.id)) ?? m);
}

/**
 * The loaded rows with a page read from some position on: the page's rows in place of
 * the loaded ones from its first position to its last, and the loaded rows after its
 * last kept. Reads are not ordered: a turn's rows read when it ends may be answered
 * after the next turn's rows were read, and must not take them off the chat. An empty
 * page (nothing saved from that position) changes nothing.
 */
export function mergeRead(loaded: readonly MessageView[], page: readonly MessageView[]): MessageView[] {
  if (page.length === 0) return [...loaded];
  const end = page[page.length - 1].position;
  return [...spliceFrom(loaded, page), ...loaded.filter((m) => m.position > end)];
}

/** The loaded rows with the page's rows in place of those at its positions and after. */
export function spliceFrom(loaded: readonly MessageView[], page: readonly MessageView[]): MessageView[] {
  if (page.length === 0) return [...loaded];
  const from = page[0].position;
  const kept = loaded.filter((m) => m.position < from);
  return [...kept, ...reuse(loaded, page)];
}

/** Older rows before the loaded ones (rows already loaded are not doubled). */
export function prependPage(loaded: readonly MessageView[], page: readonly MessageView[]): MessageView[] {
  const first = loaded.length > 0 ? loaded[0].position : Infinity;
  return [...page.filter((m) => m.position < first), ...loaded];
}

/** Newer rows after the loaded ones. */
export function appendPage(loaded: readonly MessageView[], page: readonly MessageView[]): MessageView[] {
  const last = loaded.length > 0 ? loaded[loaded.length - 1].position : -Infinity;
  return [...loaded, ...page.filter((m) => m.position > last)];
}

/** The loaded rows replaced by a page, reusing the objects of rows that stayed. */
export function replaceWith(loaded: readonly MessageView[], page: readonly MessageView[]): MessageView[] {
  return reuse(loaded, page);
}

/**
 * buildTranscript with memory: an item whose rows are the same objects as last time
 * (the message, and for an assistant row the tool rows answering its calls) is returned
 * as the same object, so the chat renders only the rows that changed.
 */
export class TranscriptMemo {
  private prev = new Map<string, { deps: unknown[]; item: TranscriptItem }>();

  build(messages: readonly MessageView[]): TranscriptItem[] {
    const results = new Map<string, MessageView>();
    const byId = new Map<string, MessageView>();
    for (const m of messages) {
      byId.set(String(m.id), m);
      if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m);
    }
    const next = new Map<string, { deps: unknown[]; item: TranscriptItem }>();
    const out = buildTranscript(messages).map((item) => {
      const deps: unknown[] =
        item.kind === 'message'
          ? [item.message, ...(item.message.tool_calls ?? []).map((c) => (c.id ? (results.get(c.id) ?? null) : null))]
          : item.kind === 'tool'
            ? [byId.get(item.key) ?? item.tool]
            : item.kind === 'truncated'
              ? [item.reason]
              : item.kind === 'summary'
                ? [item.message]
                : [item.text];
      const old = this.prev.get(item.key);
      const keep = old && old.item.kind === item.kind && old.deps.length === deps.length && old.deps.every((d, i) => d === deps[i]);
      const chosen = keep ? old.item : item;
      next.set(item.key, { deps, item: chosen });
      return chosen;
    });
    this.prev = next;
    return out;
  }
}

/** The position a transcript item stands for (a tool card: its tool row's). */
export function itemPosition(item: TranscriptItem, byId: ReadonlyMap<string, MessageView>): number {
  if (item.kind === 'message' || item.kind === 'summary') return item.message.position;
  return byId.get(item.key)?.position ?? -1;
}
