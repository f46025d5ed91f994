// The cards of the open chat that wait for the user (approvals, clarify prompts, vault
// prompts), the YOLO switch of each chat, which chats wait for the user (the sidebar's
// mark) and the always-allowed command patterns (Settings). One area of the window's
// state (issue 25); the main store hosts it as `store.cards`, folds the host's pending
// cards into the stream it follows and clears a card's notice when its stream ends.

import type { Api } from './api';
import { ApiError, errorCode, errorMessage, errorText } from './api';
import type {
  Activity,
  AllowlistEntry,
  ApprovalChoice,
  ApprovalData,
  ClarifyAnswer,
  ElicitAction,
  ClarifyData,
  Frame,
  PendingView,
  VaultAnswer,
  VaultResult,
} from './protocol';
import { mergePending, waiting, withdrawApproval, withdrawClarify, type StreamState } from './reducer';

/** What ApprovalCards needs of the main store. */
export interface CardsHost {
  readonly activeId: string | null;
  /** The open session's live stream, or null when it is idle. */
  readonly live: StreamState | null;
  /** Whether the window follows a stream of the session (its cards are in `live`). */
  follows(sessionId: string): boolean;
  /** Changes the followed stream's state (a card folded in or withdrawn). */
  patchLive(fn: (s: StreamState) => StreamState): void;
  /** Shows a failed action under the chat. */
  setBanner(sessionId: string, label: string, err: unknown): void;
}

export class ApprovalCards {
  /** Per session: YOLO (approvals off) as the host last said. */
  yolo = $state<Record<string, boolean>>({});
  /** Ids of the cards whose answer is on its way (their buttons are disabled). */
  answering = $state<string[]>([]);
  /** A failed answer, shown on its card. */
  cardError = $state<{ id: string; message: string } | null>(null);
  /** A short word about the cards of the open session (e.g. one was already settled). */
  cardNotice = $state<string | null>(null);
  /** Per session, until its stream ends: "Secret NAME provided" lines (never the value). */
  vaultNotes = $state<Record<string, string[]>>({});
  /**
   * Per session: how many approvals and clarify prompts wait for the user, from the
   * pending_count of the frames seen (the sidebar marks the sessions that need you).
   */
  waitingFor = $state<Record<string, { approvals: number; clarifies: number }>>({});
  /** The always-allowed command patterns (Settings). */
  allowlist = $state<AllowlistEntry[]>([]);
  allowlistError = $state<string | null>(null);
  /**
   * GetPending's answer while the open session has no live stream to fold it into (the
   * host has a card the window cannot place in a stream yet).
   */
  idlePending = $state<PendingView | null>(null);

  constructor(
    private readonly api: Pick<
      Api,
      'getPending' | 'respondApproval' | 'setYolo' | 'respondClarify' | 'dismissElicitation' | 'respondVault' | 'getAllowlist' | 'removeAllowlist'
    >,
    private readonly host: CardsHost,
  ) {}

  /** The open chat's stream ended or was left: its card's notice and error go. */
  clearNotices(): void {
    this.cardNotice = null;
    this.cardError = null;
  }

  /** A stream of the session ended: the saved transcript now records what was provided. */
  dropNotes(sessionId: string): void {
    if (sessionId in this.vaultNotes) {
      const notes = { ...this.vaultNotes };
      delete notes[sessionId];
      this.vaultNotes = notes;
    }
  }

  /** The approval card to show: the head of the open session's queue. */
  get approval(): ApprovalData | null {
    if (this.host.live) return this.host.live.approvals[0] ?? null;
    return this.idlePending?.approval ?? null;
  }

  /** Approvals waiting in the open session, the shown one included. */
  get approvalsWaiting(): number {
    if (this.host.live) return waiting(this.host.live.approvals.length, this.host.live.approvalCount);
    return this.idlePending?.approval ? this.idlePending.approval_count : 0;
  }

  /** The clarify or vault card to show. */
  get clarify(): ClarifyData | null {
    if (this.host.live) return this.host.live.clarifies[0] ?? null;
    return this.idlePending?.clarify ?? null;
  }

  get clarifiesWaiting(): number {
    if (this.host.live) return waiting(this.host.live.clarifies.length, this.host.live.clarifyCount);
    return this.idlePending?.clarify ? this.idlePending.clarify_count : 0;
  }

  get activeYolo(): boolean {
    return this.host.activeId ? this.yolo[this.host.activeId] === true : false;
  }

  get notes(): string[] {
    return this.host.activeId ? (this.vaultNotes[this.host.activeId] ?? []) : [];
  }

  /** The activity snapshot: which sessions wait for the user (the sidebar's mark). */
  onActivity(a: Activity): void {
    const next: Record<string, { approvals: number; clarifies: number }> = {};
    for (const r of a.running) {
      if (!r || typeof r.session_id !== 'string') continue;
      const approvals = Math.max(0, Number(r.approvals) || 0);
      const clarifies = Math.max(0, Number(r.clarifies) || 0);
      if (approvals + clarifies > 0) next[r.session_id] = { approvals, clarifies };
    }
    this.waitingFor = next;
  }

  noteWaiting(f: Frame): void {
    const d = (f.data ?? {}) as { pending_count?: unknown };
    const n = typeof d.pending_count === 'number' && d.pending_count >= 0 ? d.pending_count : null;
    const cur = this.waitingFor[f.session_id] ?? { approvals: 0, clarifies: 0 };
    let next = cur;
    if ((f.event === 'approval' || f.event === 'approval_resolved') && n !== null) next = { ...cur, approvals: n };
    else if ((f.event === 'clarify' || f.event === 'clarify_resolved') && n !== null) next = { ...cur, clarifies: n };
    else if (f.event === 'stream_end') next = { approvals: 0, clarifies: 0 };
    if (next.approvals !== cur.approvals || next.clarifies !== cur.clarifies) {
      this.waitingFor = { ...this.waitingFor, [f.session_id]: next };
    }
  }

  // ---- answers: called only from a click (or an explicit shortcut) on the card itself

  /** Re-reads the open session's pending cards and YOLO switch from the host. */
  async refreshPending(sessionId = this.host.activeId): Promise<void> {
    if (!sessionId) return;
    let p: PendingView;
    try {
      p = await this.api.getPending(sessionId);
    } catch (err) {
      console.warn('GetPending failed', errorMessage(err));
      return;
    }
    this.yolo = { ...this.yolo, [sessionId]: p.yolo };
    if (this.host.activeId !== sessionId) return;
    if (this.host.follows(sessionId)) {
      this.idlePending = null;
      this.host.patchLive((s) => mergePending(s, p));
    } else {
      this.idlePending = p.approval || p.clarify ? p : null;
    }
  }

  async respondApproval(approvalId: string, choice: ApprovalChoice): Promise<boolean> {
    return this.answer(approvalId, 'approval', (sid) => this.api.respondApproval(sid, approvalId, choice));
  }

  /** Answers an ACP agent's permission card with one of the options it offered. */
  async respondApprovalOption(approvalId: string, optionId: string, respond: (sid: string, id: string, option: string) => Promise<void>): Promise<boolean> {
    return this.answer(approvalId, 'approval', (sid) => respond(sid, approvalId, optionId));
  }

  /** Turns YOLO on or off for the open session; from a card pass that card's id. */
  async setYolo(on: boolean, fromApprovalId = ''): Promise<boolean> {
    const sid = this.host.activeId;
    if (!sid) return false;
    const run = async () => {
      await this.api.setYolo(sid, on, fromApprovalId);
      this.yolo = { ...this.yolo, [sid]: on };
    };
    if (!fromApprovalId) {
      try {
        await run();
        return true;
      } catch (err) {
        this.host.setBanner(sid, on ? 'Could not turn YOLO on' : 'Could not turn YOLO off', err);
        return false;
      }
    }
    // The card stays until the host resolves it (reason "yolo").
    return this.answer(fromApprovalId, 'approval', run, false);
  }

  async respondClarify(clarifyId: string, answers: ClarifyAnswer[]): Promise<boolean> {
    return this.answer(clarifyId, 'clarify', (sid) => this.api.respondClarify(sid, clarifyId, answers));
  }

  /** Declines or cancels an elicitation's card (ClarifyData.elicitation). */
  async dismissElicitation(clarifyId: string, action: ElicitAction): Promise<boolean> {
    return this.answer(clarifyId, 'clarify', (sid) => this.api.dismissElicitation(sid, clarifyId, action));
  }

  /**
   * Answers a vault prompt. The value is handed to the api and not kept here; the window
   * notes only that the secret was provided or declined.
   */
  async respondVault(card: ClarifyData, answer: VaultAnswer, remember: boolean): Promise<VaultResult | null> {
    let result: VaultResult | null = null;
    const name = card.name || 'secret';
    const ok = await this.answer(card.clarify_id, 'clarify', async (sid) => {
      result = await this.api.respondVault(sid, card.clarify_id, answer, remember);
      const r: VaultResult = result;
      // Not taken: the prompt was settled meanwhile. Treat it like a stale card.
      if (!r.ok) throw new ApiError('the agent no longer waits for this secret', 'stale');
      const note =
        r.kept === 'declined'
          ? `Secret ${name} declined`
          : `Secret ${name} provided${r.kept === 'keychain' ? ' (saved in the system keychain)' : ' (this session only)'}`;
      this.vaultNotes = { ...this.vaultNotes, [sid]: [...(this.vaultNotes[sid] ?? []), note] };
    });
    return ok ? result : null;
  }

  async loadAllowlist(): Promise<void> {
    try {
      this.allowlist = await this.api.getAllowlist();
      this.allowlistError = null;
    } catch (err) {
      this.allowlistError = errorText(err);
    }
  }

  async removeAllowlist(pattern: string): Promise<void> {
    try {
      await this.api.removeAllowlist(pattern);
      this.allowlistError = null;
    } catch (err) {
      this.allowlistError = errorText(err);
    }
    await this.loadAllowlist();
  }

  /**
   * Sends one answer for a card of the open session. On success the card goes (settled,
   * unless `settle` is false: the host withdraws it by a frame); when the host calls it
   * stale the card goes and the queue is re-read; another error stays on the card.
   */
  private async answer(
    id: string,
    kind: 'approval' | 'clarify',
    send: (sessionId: string) => Promise<void>,
    settle = true,
  ): Promise<boolean> {
    const sid = this.host.activeId;
    if (!sid || this.answering.includes(id)) return false;
    this.answering = [...this.answering, id];
    if (this.cardError?.id === id) this.cardError = null;
    this.cardNotice = null;
    const withdraw = (settled: boolean) => {
      if (this.host.follows(sid)) {
        this.host.patchLive((s) => (kind === 'approval' ? withdrawApproval(s, id, settled) : withdrawClarify(s, id, settled)));
      } else if (this.idlePending && this.host.activeId === sid) {
        const p = this.idlePending;
        this.idlePending = kind === 'approval'
          ? { ...p, approval: p.approval?.approval_id === id ? null : p.approval }
          : { ...p, clarify: p.clarify?.clarify_id === id ? null : p.clarify };
      }
    };
    try {
      await send(sid);
      if (settle) withdraw(true);
      if (!this.host.follows(sid)) void this.refreshPending(sid);
      return true;
    } catch (err) {
      const message = errorText(err);
      if (errorCode(err) === 'stale') {
        withdraw(false);
        if (this.host.activeId === sid) this.cardNotice = 'That request was already answered or has timed out.';
        await this.refreshPending(sid);
      } else if (this.host.activeId === sid) {
        this.cardError = { id, message };
      }
      return false;
    } finally {
      this.answering = this.answering.filter((x) => x !== id);
    }
  }
}
