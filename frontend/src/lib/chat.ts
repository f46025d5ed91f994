// The shapes of the chat features' bound methods (backend/chat.go, attachments.go,
// models.go; app/chat.go, app/quickask.go), as Go sends them, and pure helpers of the
// message actions. Kept beside protocol.ts until the generated contract carries them.

import type { MessageView, Usage } from './protocol';

/** A file attached to a message, or staged in a chat's composer (message_id 0). */
export interface Attachment {
  id: string;
  session_id: string;
  message_id?: number;
  sha256: string;
  name: string;
  mime_type: string;
  kind: 'image' | 'text';
  size: number;
  /** For a text file: how many of its first bytes the model gets (size when whole). */
  sent_bytes: number;
  created_at: number;
}

export interface AttachmentContent {
  attachment: Attachment;
  /** data:<mime>;base64,... for an image; "" for text. */
  data_url: string;
  /** The start of a text file (at most 8 KiB). */
  text: string;
}

export interface TurnStarted {
  stream_id: string;
  user_message: MessageView;
}

/** A retry's or an edit's answer: the new turn and the fork keeping the replaced branch. */
export interface Branched extends TurnStarted {
  fork_id: string;
}

export interface TurnFigures {
  stream_id: string;
  started_at: number;
  ended_at: number;
  terminal: string;
  usage: Usage & { cost_reported?: boolean };
  model: string;
  context_tokens: number;
  /** "provider", "price" or "" (unknown: never a guessed price). */
  cost_source: string;
}

export interface ContextMeterInfo {
  used_tokens: number;
  estimated: boolean;
  context_length: number;
  source: string;
  note: string;
  compact_at: number;
  model: string;
  /** False for a runtime that keeps its own context: the meter is hidden. */
  available: boolean;
}

export interface ChatFigures {
  turns: TurnFigures[];
  cost: number;
  cost_known: number;
  cost_unknown: number;
  context: ContextMeterInfo;
}

export interface Price {
  /** US dollars per million tokens. */
  input: number;
  output: number;
  cached_input?: number;
}

export interface ModelSettings {
  context_length?: number;
  price?: Price | null;
}

export interface ModelInfo {
  provider: string;
  model: string;
  context_length: number;
  context_source: string;
  provider_context: number;
  context_note: string;
  /** "yes", "no" or "" (the provider does not say). */
  vision: string;
  reasoning: string;
  settings: ModelSettings;
  error: string;
}

export interface RuntimeFeatures {
  images: boolean;
  reasoning_effort: boolean;
  max_output_tokens: boolean;
  model_choice: boolean;
  compaction: boolean;
  titles: boolean;
}

export interface ChatOptionsValue {
  system_prompt?: string;
  tools?: string[];
  reasoning_effort?: string;
  max_output_tokens?: number;
  mcp_servers?: Record<string, boolean>;
}

export interface ChatSettings {
  options: ChatOptionsValue;
  model: string;
  default_model: string;
  model_info: ModelInfo | null;
  features: RuntimeFeatures;
  runtime: string;
  default_system_prompt: string;
}

export interface ChatPreferences {
  default_system_prompt: string;
  /** Percent of the context window (50..95); 0: never. */
  compact_at: number;
  text_limit_kb: number;
}

export interface CompactResult {
  summary: MessageView | null;
  message: string;
  retried: TurnStarted | null;
}

export interface QuickAskStatus {
  active: boolean;
  shortcut: string;
  shortcut_active: boolean;
  shortcut_error: string;
  command: string;
}

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
