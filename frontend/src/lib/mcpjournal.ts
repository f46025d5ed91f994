// The MCP answers of finished turns, read back from their journal: a saved tool row
// keeps what the model read (text), while the card also shows what the server sent
// (images, resource links, hints). One read per turn, shared by its cards.

import { toToolRef, toToolResult, type McpToolRef, type McpToolResult } from './mcp';

export interface McpCall {
  ref: McpToolRef | null;
  result: McpToolResult | null;
}

interface JournalFrame {
  event: string;
  data: unknown;
}

/** Reads a stream's frames from its start (api.streamSince). */
export type StreamReader = (streamId: string, seq: number) => Promise<JournalFrame[]>;

export const MCP_JOURNAL_KEY = Symbol('mcp-journal');

export class McpJournal {
  #read: StreamReader;
  #streams = new Map<string, Promise<Map<string, McpCall>>>();

  constructor(read: StreamReader) {
    this.#read = read;
  }

  /** The MCP call tid of stream streamId, or null when the journal does not have it. */
  async call(streamId: string, tid: string): Promise<McpCall | null> {
    if (!streamId || !tid) return null;
    let p = this.#streams.get(streamId);
    if (!p) {
      p = this.#load(streamId);
      this.#streams.set(streamId, p);
      if (this.#streams.size > 64) this.#streams.delete(this.#streams.keys().next().value as string);
    }
    return (await p).get(tid) ?? null;
  }

  async #load(streamId: string): Promise<Map<string, McpCall>> {
    const out = new Map<string, McpCall>();
    let frames: JournalFrame[];
    try {
      frames = await this.#read(streamId, 0);
    } catch {
      this.#streams.delete(streamId); // try again next time
      return out;
    }
    for (const f of frames) {
      if (f.event !== 'tool' && f.event !== 'tool_complete') continue;
      const d = (f.data && typeof f.data === 'object' ? f.data : {}) as Record<string, unknown>;
      const tid = typeof d.tid === 'string' ? d.tid : '';
      if (!tid || !d.mcp) continue;
      const c = out.get(tid) ?? { ref: null, result: null };
      if (f.event === 'tool') c.ref = toToolRef(d.mcp);
      else c.result = toToolResult(d.mcp);
      out.set(tid, c);
    }
    return out;
  }
}
