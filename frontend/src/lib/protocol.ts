// The window's side of the Go/TypeScript contract. Every wire type, enum, frame name,
// event name and constant is generated from the Go declarations into protocol.gen.ts
// (backend/contract; `make bindings` regenerates it, and a Go test fails when it is not
// current). This module re-exports them and adds only what is derived from them; it
// mirrors nothing by hand. docs/protocol.md ("The Go/TypeScript contract") says how to
// add a frame.

import { HOST_EVENTS, SIDECAR_EVENTS, type FrameEvent, type RunStatusData, type RunStatusKind } from './protocol.gen';

export * from './protocol.gen';

const KNOWN = new Set<string>([...SIDECAR_EVENTS, ...HOST_EVENTS]);

/** True for a frame name declared in Go (known events may still be unhandled). */
export function isKnownEvent(name: string): name is FrameEvent {
  return KNOWN.has(name);
}

/** The text of a message's content: the string, or its text parts joined. */
export function contentText(content: string | Record<string, unknown>[] | null | undefined): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (p && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

/** A run status while the turn is in a phase (run_status with a non-null status). */
export type RunStatus = Omit<RunStatusData, 'status'> & { status: RunStatusKind };

/** `v` when it is one of an enum's `values` (read from the wire defensively), else `fallback`. */
export function oneOf<T extends string>(values: readonly T[], v: unknown, fallback: T): T {
  return typeof v === 'string' && (values as readonly string[]).includes(v) ? (v as T) : fallback;
}
