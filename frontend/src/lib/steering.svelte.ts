// Steering a running turn: a message sent while a turn runs is queued for the agent
// (or starts a turn when none runs), and a queued message can be taken back into the
// composer (Edit), dropped (Cancel) or read at once (Send now). One area of the window's
// state (issue 25); the main store hosts it as `store.steering` and hands it the
// messages sent while the open chat is busy.

import type { Api } from './api';
import { errorCode, errorMessage } from './api';
import type { Drafts } from './drafts.svelte';
import type { SessionList } from './sessions.svelte';
import type { MessageView, SteerInfo } from './protocol';
import { addSteer, dropSteer, mergeSteers, type StreamState } from './reducer';

/** What Steering needs of the main store. */
export interface SteeringHost {
  readonly activeId: string | null;
  /** The open session's live stream, or null when it is idle. */
  readonly live: StreamState | null;
  readonly drafts: Pick<Drafts, 'append'>;
  readonly list: Pick<SessionList, 'markBusy'>;
  /** Whether the window follows a stream of the session. */
  follows(sessionId: string): boolean;
  /** Whether the window follows this stream. */
  followsStream(streamId: string): boolean;
  /** Follows a turn of the open session that started here, and catches up on its frames. */
  followTurn(sessionId: string, streamId: string, userMessage: MessageView | null): void;
  /** Changes the followed stream's state (a queued message added or dropped). */
  patchLive(fn: (s: StreamState) => StreamState): void;
  setBanner(sessionId: string, label: string, err: unknown): void;
  flashInfo(text: string): void;
  /** Gives the composer the focus (a queued message came back to be edited). */
  focusComposer(): void;
}

export class Steering {
  /** Ids of the queued messages whose Edit, Cancel or Send now is on its way. */
  steerBusy = $state<string[]>([]);

  constructor(
    private readonly api: Pick<Api, 'steer' | 'steerNow' | 'withdrawSteer' | 'pendingSteers'>,
    private readonly host: SteeringHost,
  ) {}

  /** Messages queued for the open session's running turn, oldest first. */
  get steers(): SteerInfo[] {
    return this.host.live?.steers ?? [];
  }

  /** Steer: into the running turn ("queued"), or a new turn when none runs ("turn"). */
  async steer(sid: string, body: string): Promise<boolean> {
    try {
      const o = await this.api.steer(sid, body);
      const user = o.delivery === 'turn' ? (o.user_message ?? null) : null;
      if (o.stream_id) {
        if (this.host.activeId === sid && !this.host.followsStream(o.stream_id)) {
          // It started a turn: its user row is shown at once (the frames follow).
          this.host.followTurn(sid, o.stream_id, user);
        } else if (user && this.host.followsStream(o.stream_id)) {
          this.host.patchLive((s) => (s.userMessage ? s : { ...s, userMessage: user }));
        }
        this.host.list.markBusy(sid, o.stream_id);
      }
      if (o.delivery === 'queued' && o.steer_id && this.host.followsStream(o.stream_id)) {
        const info: SteerInfo = { id: o.steer_id, text: body, created_at: Date.now() };
        this.host.patchLive((s) => addSteer(s, info));
      }
      return true;
    } catch (err) {
      this.host.setBanner(sid, 'Message not sent', err);
      return false;
    }
  }

  /** Edit: takes a queued message back into the composer. */
  async editSteer(steerId: string): Promise<boolean> {
    const sid = this.host.activeId;
    const text = await this.withdrawSteer(steerId, 'Could not take the message back');
    if (text === null || !sid) return false;
    this.host.drafts.append(sid, text);
    if (this.host.activeId === sid) this.host.focusComposer();
    return true;
  }

  /** Cancel: takes a queued message back and drops its text. */
  async cancelSteer(steerId: string): Promise<boolean> {
    return (await this.withdrawSteer(steerId, 'Could not cancel the message')) !== null;
  }

  /** Send now: asks the agent to read a queued message at once. */
  async steerNow(steerId: string): Promise<boolean> {
    const sid = this.host.activeId;
    if (!sid || this.steerBusy.includes(steerId)) return false;
    this.steerBusy = [...this.steerBusy, steerId];
    try {
      await this.api.steerNow(sid, steerId);
      return true;
    } catch (err) {
      const code = errorCode(err);
      if (code === 'steer_gone') await this.refreshSteers(sid, steerId);
      // Not acknowledged by the agent yet: a moment later it works.
      else if (code === 'steer_in_flight') this.host.flashInfo(errorMessage(err));
      else this.host.setBanner(sid, 'Could not send the message now', err);
      return false;
    } finally {
      this.steerBusy = this.steerBusy.filter((x) => x !== steerId);
    }
  }

  /** WithdrawSteer; the text, or null when it failed (a steer already read: refreshed). */
  private async withdrawSteer(steerId: string, label: string): Promise<string | null> {
    const sid = this.host.activeId;
    if (!sid || this.steerBusy.includes(steerId)) return null;
    this.steerBusy = [...this.steerBusy, steerId];
    try {
      const text = await this.api.withdrawSteer(sid, steerId);
      if (this.host.follows(sid)) this.host.patchLive((s) => dropSteer(s, steerId, true));
      return text;
    } catch (err) {
      // The agent read it already (its bubble is in the answer), or it is gone: refresh.
      if (errorCode(err) === 'steer_gone') await this.refreshSteers(sid, steerId);
      else this.host.setBanner(sid, label, err);
      return null;
    } finally {
      this.steerBusy = this.steerBusy.filter((x) => x !== steerId);
    }
  }

  /** Re-reads the queue after a steer turned out to be gone. */
  private async refreshSteers(sid: string, goneId: string): Promise<void> {
    if (this.host.follows(sid)) this.host.patchLive((s) => dropSteer(s, goneId, false));
    try {
      const list = await this.api.pendingSteers(sid);
      if (this.host.follows(sid)) this.host.patchLive((s) => mergeSteers(s, list));
    } catch (err) {
      console.warn('PendingSteers failed', errorMessage(err));
    }
  }
}
