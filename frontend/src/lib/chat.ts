// The chat features' shapes (generated from backend/chat.go, attachments.go, models.go
// into protocol.gen.ts) and pure helpers of the message actions and figures.

import type { MessageView } from './protocol';

export type {
  Attachment,
  AttachmentContent,
  Branched,
  ChatFigures,
  ChatPreferences,
  ChatSettings,
  CompactResult,
  ContextMeter as ContextMeterInfo,
  ModelInfo,
  ModelSettings,
  Price,
  QuickAskStatus,
  RuntimeFeatures,
  TurnFigures,
  TurnStarted,
  ChatOptions as ChatOptionsValue,
} from './protocol.gen';
import type { Attachment, ChatFigures, TurnFigures } from './protocol.gen';

/** The reasoning efforts a chat can ask for ("" = the provider's default). */
export const REASONING_EFFORTS = ['', 'none', 'low', 'medium', 'high'] as const;

/** The toolsets of the built-in runtime (chat options `tools`). */
export const TOOLSETS = [
  { id: 'terminal', label: 'Terminal' },
  { id: 'file', label: 'Files' },
  { id: 'todo', label: 'Todo list' },
  { id: 'clarify', label: 'Questions to you' },
  { id: 'vault', label: 'Secrets' },
] as const;

/** A message's text with its attachments named, for "Copy" of a user message. */
export function copyText(m: MessageView & { attachments?: Attachment[] }): string {
  const files = (m.attachments ?? []).map((a) => `[${a.name}]`);
  return [m.content, ...files].filter(Boolean).join('\n');
}

/**
 * The last user row and the last answer of a transcript (the rows Edit and Retry act
 * on), by id: Retry is offered on the last assistant row after the last user row.
 */
export function actionTargets(messages: readonly MessageView[]): { lastUser: string | null; lastAnswer: string | null } {
  let lastUser: string | null = null;
  let lastAnswer: string | null = null;
  for (const m of messages) {
    if (m.role === 'user' && !m.kind) {
      lastUser = String(m.id);
      lastAnswer = null;
    } else if (m.role === 'assistant' && lastUser !== null && m.kind !== 'summary') {
      lastAnswer = String(m.id);
    }
  }
  return { lastUser, lastAnswer };
}

/** The code of a fenced block's element for "Copy code" (the text, never the HTML). */
export function codeOf(el: Element | null): string {
  const code = el?.querySelector('code') ?? el;
  return code?.textContent ?? '';
}

/** A chat's cost for the header: "$0.0123", "≥ $0.0123" when some turns have no cost, "" when none is known. */
export function chatCostText(f: Pick<ChatFigures, 'cost' | 'cost_known' | 'cost_unknown'> | null): string {
  if (!f || f.cost_known === 0) return '';
  const v = f.cost < 0.01 ? f.cost.toFixed(4) : f.cost.toFixed(2);
  return `${f.cost_unknown > 0 ? '≥ ' : ''}$${v}`;
}

/** A turn's cost for its footer ("" when unknown), with where it came from. */
export function turnCostText(t: Pick<TurnFigures, 'usage' | 'cost_source'> | null): string {
  if (!t || !t.cost_source) return '';
  const c = t.usage.estimated_cost;
  const v = c < 0.01 ? c.toFixed(4) : c.toFixed(2);
  return `$${v}${t.cost_source === 'price' ? ' (your price)' : ''}`;
}
