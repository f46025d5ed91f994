// The window's calls of one area: approvals, clarify and vault clarify cards, the allowlist.
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { toPending } from '../cards';
import {
  type AllowlistEntry,
  type ApprovalChoice,
  type ClarifyAnswer,
  type ElicitAction,
  type PendingView,
  type VaultAnswer,
  type VaultResult,
} from '../protocol';
import { call } from './core';

export const approvalsCalls = {
  // Each answers a card the user clicked; a card that is out of date is refused with an
  // ApiError whose code is `stale` (its `stale` is true).

  respondApproval(sessionId: string, approvalId: string, choice: ApprovalChoice): Promise<void> {
    return call<void>(() => bound.Approvals.RespondApproval(sessionId, approvalId, choice));
  },

  /** fromApprovalId: the id of the approval card the switch was used on, else "". */
  setYolo(sessionId: string, on: boolean, fromApprovalId: string): Promise<void> {
    return call<void>(() => bound.Approvals.SetYolo(sessionId, on, fromApprovalId));
  },

  /** One answer per question: a string, or a list for a multi-select question. */
  respondClarify(sessionId: string, clarifyId: string, answers: ClarifyAnswer[]): Promise<void> {
    return call<void>(() => bound.Approvals.RespondClarify(sessionId, clarifyId, answers));
  },

  /** Answers an elicitation's card without content: the user declined or cancelled it. */
  dismissElicitation(sessionId: string, clarifyId: string, action: ElicitAction): Promise<void> {
    return call<void>(() => bound.Approvals.DismissElicitation(sessionId, clarifyId, action));
  },

  /**
   * Answers a vault prompt. The value goes to the host and nowhere else: it is not kept,
   * logged or put in an error here, and the reply never carries it.
   */
  async respondVault(sessionId: string, clarifyId: string, answer: VaultAnswer, remember: boolean): Promise<VaultResult> {
    const arg = { value: answer.value, use_saved: answer.use_saved, decline: answer.decline };
    const r = await call<Partial<VaultResult> | null>(() =>
      bound.Approvals.RespondVault(sessionId, clarifyId, arg, remember),
    );
    const kept = r?.kept === 'keychain' || r?.kept === 'session' || r?.kept === 'declined' ? r.kept : answer.decline ? 'declined' : 'session';
    return { ok: r?.ok !== false, kept };
  },

  /** The heads of the session's approval and clarify queues, their counts and YOLO. */
  async getPending(sessionId: string): Promise<PendingView> {
    return toPending(await call<unknown>(() => bound.Approvals.GetPending(sessionId)));
  },

  async getAllowlist(): Promise<AllowlistEntry[]> {
    return call(() => bound.Approvals.GetAllowlist());
  },

  removeAllowlist(pattern: string): Promise<void> {
    return call<void>(() => bound.Approvals.RemoveAllowlist(pattern));
  },
};
