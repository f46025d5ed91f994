// Sending from the composer: a message starts a turn (with the files waiting in the
// composer), or steers the turn that runs; /background and /btw go to their own room;
// Stop ends the running turn; the composer is given the focus. One area of the window's
// state (issue 25); the main store hosts it as `store.composer`. The composer's text
// itself is a draft (lib/drafts.svelte.ts).

import type { Api } from './api';
import { errorCode } from './api';
import type { BackgroundWork } from './background.svelte';
import type { ChatFeatures } from './chatfeatures.svelte';
import type { Drafts } from './drafts.svelte';
import type { SessionList } from './sessions.svelte';
import type { Steering } from './steering.svelte';
import type { LiveStream } from './stream.svelte';
import type { SessionInfo } from './protocol';
import { parseCommand } from './tasks';

/** The longest message text the host takes (turn.MaxMessageBytes): 1 MiB. */
export const MAX_MESSAGE_BYTES = 1 << 20;

/** What Composer needs of the main store. */
export interface ComposerHost {
  readonly activeId: string | null;
  readonly activeSession: SessionInfo | null;
  /** True while the open session has a turn running. */
  readonly busy: boolean;
  readonly chat: Pick<ChatFeatures, 'stagedIds' | 'sent'>;
  readonly background: Pick<BackgroundWork, 'startBackgroundTask' | 'askSideQuestion'>;
  readonly drafts: Pick<Drafts, 'adoptUnsaved'>;
  readonly steering: Pick<Steering, 'steer'>;
  readonly stream: Pick<LiveStream, 'live' | 'followStarted'>;
  readonly list: Pick<SessionList, 'markBusy'>;
  /** Opens a new chat; null (and the reason shown) when it could not be made. */
  newSession(): Promise<SessionInfo | null>;
  setBanner(sessionId: string, label: string, err: unknown): void;
  clearBanner(sessionId: string): void;
  flashInfo(text: string): void;
}

export class Composer {
  /** Bumped when the composer should take the focus (a steer came back to be edited). */
  focusKey = $state(0);

  constructor(
    private readonly api: Pick<Api, 'sendMessage' | 'startTurn' | 'cancel'>,
    private readonly host: ComposerHost,
  ) {}

  /** Gives the composer the focus. */
  focus(): void {
    this.focusKey++;
  }

  /**
   * Sends a message: it starts a turn, or, while one runs, steers it (the agent reads it
   * at its next step). Resolves false (and shows why) when nothing was sent.
   */
  async send(text: string): Promise<boolean> {
    const host = this.host;
    const files = host.activeId ? host.chat.stagedIds(host.activeId) : [];
    const cmd = files.length > 0 && !text.trim() ? ({ kind: 'message', text: '' } as const) : parseCommand(text);
    switch (cmd.kind) {
      case 'none':
        return false;
      case 'hint':
        host.flashInfo(cmd.hint);
        return false;
      case 'background':
        return host.background.startBackgroundTask(cmd.prompt);
      case 'btw':
        return host.background.askSideQuestion(cmd.question);
    }
    const body = cmd.text;
    const size = new TextEncoder().encode(body).length;
    if (size > MAX_MESSAGE_BYTES) {
      // Refused here too, before megabytes travel to the host (it refuses them as well).
      host.setBanner(host.activeId ?? '', 'Message not sent',
        `The message is ${(size / 1048576).toFixed(1)} MiB; messages up to 1 MiB are sent. Attach the text as a file, or send a shorter part.`);
      return false;
    }
    let sid = host.activeId;
    if (!sid) {
      const s = await host.newSession();
      if (!s) return false;
      sid = s.id;
      // What was typed before the session existed is being sent now (the composer took
      // it out of the box); what was typed since is the new chat's draft.
      host.drafts.adoptUnsaved(sid);
    }
    host.clearBanner(sid);
    // Files wait in the composer while a turn runs: they go with the next message.
    if (host.busy) return body.trim() ? host.steering.steer(sid, body) : false;
    try {
      const ids = host.chat.stagedIds(sid);
      const started = ids.length > 0 ? await this.api.sendMessage(sid, body, ids) : await this.api.startTurn(sid, body);
      if (ids.length > 0) host.chat.sent(sid);
      if (host.activeId === sid) host.stream.followStarted(sid, started.stream_id, started.user_message);
      host.list.markBusy(sid, started.stream_id);
      return true;
    } catch (err) {
      // A turn this window had not seen yet holds the session (a follow-up of queued
      // messages, another window): steer it instead.
      if (errorCode(err) === 'busy') return host.steering.steer(sid, body);
      host.setBanner(sid, 'Message not sent', err);
      return false;
    }
  }

  /** Stops the open session's running turn (Stop, Escape). */
  async cancel(): Promise<void> {
    const streamId = this.host.stream.live?.streamId || this.host.activeSession?.active_stream_id;
    if (!streamId) return;
    try {
      await this.api.cancel(streamId);
    } catch (err) {
      if (this.host.activeId) this.host.setBanner(this.host.activeId, 'Could not stop the turn', err);
    }
  }
}
