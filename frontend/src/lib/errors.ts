// Errors across the window boundary. Every bound method rejects with
// {code, message, hint, field} (backend.UserError, Wails' ErrorFormatter); the window
// decides on `code` (ERROR_CODE_VALUES, generated from backend.ErrorCode), never on
// the message. `ERROR_HANDLING` says what the window does with each code; it is typed
// Record<ErrorCode, ...>, so a code added in Go fails to compile here until it is
// handled (and errors.test.ts checks it at run time too).
//
// Adding a code: declare it in backend/errors.go (with its case in ErrorOf), run `make
// bindings`, add its entry below, and, when the window reacts to it beyond showing
// the message, check `err.code` where the call is made.

import { ERROR_CODE_VALUES, type ErrorCode, type UserError } from './protocol';

/** What the window does with a failed call, by code. */
export interface ErrorHandling {
  /** The banner's title when the call site has none of its own. */
  title: string;
  /**
   * `show`: tell the user (message and hint); `refresh`: the view is out of date: re-read
   * what the call named, quietly; `retry`: a moment later the same call may work (say
   * so); `settings`: the fix is in Settings (the banner offers it).
   */
  action: 'show' | 'refresh' | 'retry' | 'settings';
}

export const ERROR_HANDLING: Record<ErrorCode, ErrorHandling> = {
  invalid: { title: 'Not accepted', action: 'show' },
  not_found: { title: 'No longer there', action: 'refresh' },
  busy: { title: 'The agent is still working', action: 'retry' },
  stale: { title: 'No longer waiting', action: 'refresh' },
  conflict: { title: 'Changed meanwhile', action: 'refresh' },
  steer_gone: { title: 'Already read', action: 'refresh' },
  steer_in_flight: { title: 'Still on its way', action: 'retry' },
  not_delivered: { title: 'Answer not delivered', action: 'retry' },
  not_configured: { title: 'No model set up', action: 'settings' },
  keyring_unavailable: { title: 'System keychain unavailable', action: 'show' },
  agent_unavailable: { title: 'Agent not running', action: 'retry' },
  agent_error: { title: 'The agent refused', action: 'show' },
  unsupported: { title: 'Not available here', action: 'show' },
  nothing_to_do: { title: 'Nothing to do', action: 'show' },
  storage: { title: 'Could not use the database', action: 'show' },
  file: { title: 'File problem', action: 'show' },
  not_ready: { title: 'Still starting', action: 'retry' },
  closing: { title: 'Talaria is quitting', action: 'show' },
  timeout: { title: 'Took too long', action: 'retry' },
  cancelled: { title: 'Cancelled', action: 'show' },
  internal: { title: 'Something went wrong', action: 'show' },
};

const KNOWN = new Set<string>(ERROR_CODE_VALUES);

/** The failure of a bound method: a code to decide on, a message and a hint for the user. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly hint: string;
  readonly field: string;

  constructor(message: string, code: ErrorCode = 'internal', hint = '', field = '') {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.hint = hint;
    this.field = field;
  }

  /** The host refused an answer because the card is out of date. */
  get stale(): boolean {
    return this.code === 'stale';
  }

  get handling(): ErrorHandling {
    return ERROR_HANDLING[this.code];
  }

  /** What a bound method rejected with, as an ApiError (a bare string: Wails' own, e.g. bad arguments). */
  static from(err: unknown): ApiError {
    if (err instanceof ApiError) return err;
    if (err && typeof err === 'object' && !(err instanceof Error)) {
      const e = err as Partial<UserError>;
      const code = typeof e.code === 'string' && KNOWN.has(e.code) ? (e.code as ErrorCode) : 'internal';
      return new ApiError(typeof e.message === 'string' ? e.message : errorMessage(err), code, str(e.hint), str(e.field));
    }
    return new ApiError(errorMessage(err));
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** The text of whatever a call failed with. */
export function errorMessage(err: unknown): string {
  if (typeof err === 'string') return err;
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object' && 'message' in err && typeof err.message === 'string') {
    return err.message;
  }
  try {
    return JSON.stringify(err) ?? String(err);
  } catch {
    return String(err);
  }
}

/** The code of a failure (an ApiError's, or `internal` for anything else). */
export function errorCode(err: unknown): ErrorCode {
  return err instanceof ApiError ? err.code : 'internal';
}

/** The message and, when the host gave one, its hint: what a banner shows. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError && err.hint) return `${err.message}. ${err.hint}`.replace(/\.\.\s/, '. ');
  return errorMessage(err);
}
