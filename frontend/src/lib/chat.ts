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

/**
 * US dollars as a cost is read: cents from $1 up ("$2.35"), else to a hundredth of a
 * cent, with no more than two trailing zeros dropped ("$0.0123", "$0.50", "$0.0004").
 */
export function usd(c: number): string {
  if (!Number.isFinite(c)) return '$0';
  return `$${c >= 1 ? c.toFixed(2) : c.toFixed(4).replace(/0{1,2}$/, '')}`;
}

/** A chat's cost for the header: "$0.0123", "≥ $0.0123" when some turns have no cost, "" when none is known. */
export function chatCostText(f: Pick<ChatFigures, 'cost' | 'cost_known' | 'cost_unknown'> | null): string {
  if (!f || f.cost_known === 0) return '';
  return `${f.cost_unknown > 0 ? '≥ ' : ''}${usd(f.cost)}`;
}

/** A turn's cost for its footer ("" when unknown), with where it came from. */
export function turnCostText(t: Pick<TurnFigures, 'usage' | 'cost_source'> | null): string {
  if (!t || !t.cost_source) return '';
  return `${usd(t.usage.estimated_cost)}${t.cost_source === 'price' ? ' (your price)' : ''}`;
}

/** What a transcript row's actions need (ChatView passes it to each MessageBubble). */
export interface RowActions {
  /** A turn runs: Edit and Retry wait. */
  busy: boolean;
  /** The rows Edit and Retry act on (actionTargets). */
  lastUser: string | null;
  lastAnswer: string | null;
  /** The user row being edited (its id), if any. */
  editing: string | null;
  /** Retry is offered (the chat's runtime answers again). */
  canRetry: boolean;
  /** Models a retry may use instead of the chat's (the provider's list). */
  models: readonly string[];
  copy(m: MessageView): void;
  startEdit(m: MessageView): void;
  cancelEdit(): void;
  submitEdit(m: MessageView, text: string): Promise<boolean>;
  retry(model: string): void;
  /** A turn's cost for the row that ends it ("" unknown). */
  turnCost(streamId: string): string;
  /** Whether the row is the last assistant row of its turn (the cost goes there). */
  lastOfTurn(m: MessageView): boolean;
  preview(a: Attachment): Promise<import('./protocol.gen').AttachmentContent>;
  openAttachment(a: Attachment): void;
}
