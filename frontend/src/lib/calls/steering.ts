// The window's calls of one area: steering a running turn.
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { type SteerInfo, type SteerNowResult, type SteerOutcome } from '../protocol';
import { call, normaliseMessage } from './core';

export const steeringCalls = {
  /**
   * Sends text into the session's running turn (delivery "queued", with the steer's id),
   * or starts a turn when none runs (delivery "turn").
   */
  async steer(sessionId: string, text: string): Promise<SteerOutcome> {
    const o = await call(() => bound.Turns.Steer(sessionId, text));
    return o.user_message ? { ...o, user_message: normaliseMessage(o.user_message) } : o;
  },

  /** Takes a queued message back and returns its text (Edit and Cancel). */
  withdrawSteer(sessionId: string, steerId: string): Promise<string> {
    return call<string>(() => bound.Turns.WithdrawSteer(sessionId, steerId));
  },

  /** Asks the agent to read a queued message at once. */
  async steerNow(sessionId: string, steerId: string): Promise<SteerNowResult> {
    return call(() => bound.Turns.SteerNow(sessionId, steerId));
  },

  async pendingSteers(sessionId: string): Promise<SteerInfo[]> {
    return call(() => bound.Turns.PendingSteers(sessionId));
  },
};
