// DEV ONLY: what the fake backend rejects with, in the host's shape (backend.UserError:
// Wails' ErrorFormatter sends {code, message, hint, field}), so the window decides on
// the code here as it does against the real host.

import type { ErrorCode, UserError } from '../lib/protocol';

/** A rejection like the host's: a stable code, a message and a hint. */
export function fail(code: ErrorCode, message: string, hint = ''): UserError {
  return { code, message, hint };
}
