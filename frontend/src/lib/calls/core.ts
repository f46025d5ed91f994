// What every area's calls share: the call wrapper (errors as ApiError, calls held
// until the first paint), the first page that came with the page, and the window's
// own adaptations of a message.

import { ApiError } from '../errors';
import {
  type SessionSandbox,
  type HermesInstall,
  type HermesSettings,
  type MessageView,
  type SessionInfo,
  type TranscriptPage,
} from '../protocol';
// Calls asked for before the window's first paint go out once it is painted (see
// holdCallsUntil): their answers would otherwise arrive inside the first frame's work,
// each one parsed and its updates run before the frame, holding the paint back (issue 16).
let held: Promise<void> | null = null;

/**
 * Holds every bound call made from now until `painted` settles, then sends them in the
 * order they were made. main.ts arms it with the first paint before it mounts the app:
 * the first screen's data came with the page (app/boot.go), so nothing it shows waits
 * on a call. A rejected `painted` releases the calls too.
 */
export function holdCallsUntil(painted: Promise<void>): void {
  const gate = painted.then(
    () => {},
    () => {},
  );
  held = gate;
  void gate.then(() => {
    if (held === gate) held = null;
  });
}

export async function call<T>(fn: () => Promise<T>): Promise<T> {
  if (held) await held;
  try {
    return await fn();
  } catch (err) {
    throw ApiError.from(err);
  }
}

export function list<T>(v: T[] | null | undefined): T[] {
  return Array.isArray(v) ? v : [];
}

/** The install a save sends: SaveHermesSettings ignores it (discovery fills it in). */
export const noInstall: HermesInstall = { python: '', version: '', python_version: '', source: '', home: '', profiles: [] };

export function normaliseHermes(s: HermesSettings): HermesSettings {
  const i = s.install ?? ({} as HermesInstall);
  return { path: s.path ?? '', home: s.home ?? '', model: s.model ?? '',
    install: { ...i, profiles: list(i.profiles), problem: i.problem ?? '', hint: i.hint ?? '' } };
}

/**
 * The sidebar's first page of sessions when it came with the page (app/boot.go puts it in
 * index.html as JSON, so the first screen needs no bound call), once; null when it did
 * not or does not read as one. `transcript` is the first listed chat's newest rows, as
 * GetTranscript gives them, when they came too.
 */
export function takeBootSessions(): { sessions: SessionInfo[]; limit: number; transcript: TranscriptPage | null } | null {
  if (typeof document === 'undefined') return null;
  const el = document.getElementById('talaria-boot');
  if (!el) return null;
  el.remove();
  try {
    const v = JSON.parse(el.textContent ?? '') as { sessions?: unknown; limit?: unknown; transcript?: unknown };
    if (!v || !Array.isArray(v.sessions) || typeof v.limit !== 'number') return null;
    const t = v.transcript as TranscriptPage | undefined;
    const transcript = t && typeof t === 'object' && t.session && typeof t.session.id === 'string' ? transcriptPage(t) : null;
    return { sessions: v.sessions as SessionInfo[], limit: v.limit, transcript };
  } catch {
    return null;
  }
}

export function num(v: unknown, fallback = 0): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : fallback;
}

/** Go omits empty optional fields (omitempty); the UI always sees strings. */
export function normaliseMessage(m: MessageView): MessageView {
  const out: MessageView = { ...m, content: m.content ?? '', reasoning: m.reasoning ?? '', kind: m.kind ?? '', stream_id: m.stream_id ?? '' };
  if ('tool_calls' in m) {
    if (Array.isArray(m.tool_calls) && m.tool_calls.length > 0) out.tool_calls = m.tool_calls;
    else delete out.tool_calls;
  }
  return out;
}

export function transcriptPage(p: TranscriptPage): TranscriptPage {
  return { ...p, messages: p.messages.map(normaliseMessage) };
}


export type Unsubscribe = () => void;

export function normaliseSandbox(v: SessionSandbox | null | undefined): SessionSandbox {
  const mode = v?.mode === 'read-only' || v?.mode === 'full-access' ? v.mode : 'workspace-write';
  return { mode, network: mode === 'full-access' || v?.network === true };
}
