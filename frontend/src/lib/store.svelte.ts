// Window state: the session list, the open session, its live stream, the agent's status
// and settings. Components read the fields and call the methods; all I/O goes through
// the Api handed in (src/lib/api.ts in the app, a fake in tests).

import type { Api } from './api';
import { errorMessage } from './api';
import { StreamFollower } from './follower';
import type {
  AppErrorData,
  DoneData,
  Frame,
  MessageView,
  ProviderCheck,
  SessionInfo,
  Settings,
  SettingsInput,
  SidecarStatus,
  Status,
  Usage,
} from './protocol';
import type { StreamState } from './reducer';

export interface LastRun {
  usage: Usage | null;
  tps: number | null;
  duration_seconds: number | null;
}

export class AppStore {
  sessions = $state<SessionInfo[]>([]);
  activeId = $state<string | null>(null);
  messages = $state<MessageView[]>([]);
  loadingSession = $state(false);
  /** The open session's live stream, or null when it is idle. */
  live = $state<StreamState | null>(null);
  /** Banner for the open session: the last turn's apperror or a failed call. */
  banners = $state<Record<string, AppErrorData>>({});
  /** Footer figures of each session's last finished run. */
  lastRuns = $state<Record<string, LastRun>>({});
  sidecar = $state<SidecarStatus | null>(null);
  status = $state<Status | null>(null);
  settings = $state<Settings | null>(null);
  providerCheck = $state<ProviderCheck | null>(null);
  checkingProvider = $state(false);
  firstRunDismissed = $state(false);
  settingsOpen = $state(false);
  /** Error with no session to pin it to (start-up failures). */
  globalError = $state<string | null>(null);

  private follower: StreamFollower | null = null;
  private unsubscribers: Array<() => void> = [];
  private listing: Promise<void> | null = null;
  private relist = false;
  private readonly api: Api;

  constructor(api: Api) {
    this.api = api;
  }

  // ---- derived views -----------------------------------------------------------

  get activeSession(): SessionInfo | null {
    return this.sessions.find((s) => s.id === this.activeId) ?? null;
  }

  get banner(): AppErrorData | null {
    return this.activeId ? (this.banners[this.activeId] ?? null) : null;
  }

  /** True while the open session has a turn running. */
  get busy(): boolean {
    if (this.live && !this.live.ended) return true;
    return !!this.activeSession?.active_stream_id;
  }

  get showFirstRun(): boolean {
    return !this.firstRunDismissed && this.providerCheck !== null && !this.providerCheck.ok;
  }

  // ---- start-up and events -----------------------------------------------------

  async start(): Promise<void> {
    this.unsubscribers.push(
      this.api.onFrame((f) => this.onFrame(f)),
      this.api.onSessionsChanged(() => void this.refreshSessions()),
      this.api.onOpenSession((id) => void this.openSession(id)),
      this.api.onSidecarStatus((s) => {
        this.sidecar = s;
        if (this.status) this.status = { ...this.status, sidecar: s };
      }),
    );
    const [sessions, status, settings] = await Promise.allSettled([
      this.api.listSessions(),
      this.api.getStatus(),
      this.api.getSettings(),
    ]);
    if (sessions.status === 'fulfilled') this.sessions = sortSessions(sessions.value);
    else this.globalError = errorMessage(sessions.reason);
    if (status.status === 'fulfilled') {
      this.status = status.value;
      this.sidecar ??= status.value.sidecar;
    }
    if (settings.status === 'fulfilled') this.settings = settings.value;
    if (this.sessions.length > 0) await this.openSession(this.sessions[0].id);
    void this.checkProvider();
  }

  stop(): void {
    for (const u of this.unsubscribers) u();
    this.unsubscribers = [];
    this.dropFollower();
  }

  async checkProvider(): Promise<ProviderCheck | null> {
    this.checkingProvider = true;
    try {
      this.providerCheck = await this.api.checkProvider();
    } catch (err) {
      this.providerCheck = { ok: false, message: errorMessage(err), hint: '', models: [] };
    } finally {
      this.checkingProvider = false;
    }
    return this.providerCheck;
  }

  /** Re-lists sessions; calls that overlap collapse into one more listing. */
  refreshSessions(): Promise<void> {
    if (this.listing) {
      this.relist = true;
      return this.listing;
    }
    this.listing = (async () => {
      try {
        do {
          this.relist = false;
          const list = await this.api.listSessions();
          this.sessions = sortSessions(list.map((s) => this.keepLocalBusy(s)));
        } while (this.relist);
      } catch (err) {
        this.globalError = errorMessage(err);
      } finally {
        this.listing = null;
      }
    })();
    return this.listing;
  }

  onFrame(f: Frame): void {
    if (!f || typeof f.session_id !== 'string') return;
    if (f.event === 'title') {
      const title = (f.data as { title?: unknown } | null)?.title;
      if (typeof title === 'string') this.patchSession(f.session_id, { title });
    }
    if (f.session_id !== this.activeId) {
      if (f.event === 'stream_end') this.patchSession(f.session_id, { active_stream_id: '' });
      else if (f.event !== 'title') this.markBusy(f.session_id, f.stream_id);
      return;
    }
    if (!this.follower || this.follower.streamId !== f.stream_id) {
      this.follow(f.session_id, f.stream_id);
    }
    this.follower!.push(f);
  }

  // ---- sessions ----------------------------------------------------------------

  async openSession(id: string): Promise<void> {
    if (this.activeId !== id) this.dropFollower();
    this.activeId = id;
    this.loadingSession = true;
    try {
      const view = await this.api.getSession(id);
      if (this.activeId !== id) return;
      this.messages = view.messages;
      this.upsertSession(view.session);
      const sid = view.session.active_stream_id;
      if (sid && (!this.follower || this.follower.streamId !== sid)) {
        this.follow(id, sid);
        void this.follower!.replay();
      }
    } catch (err) {
      this.setBanner(id, 'Could not open the conversation', errorMessage(err));
    } finally {
      if (this.activeId === id) this.loadingSession = false;
    }
  }

  async newSession(): Promise<SessionInfo | null> {
    try {
      const s = await this.api.newSession();
      this.upsertSession(s);
      this.dropFollower();
      this.activeId = s.id;
      this.messages = [];
      return s;
    } catch (err) {
      this.globalError = `Could not start a new chat: ${errorMessage(err)}`;
      return null;
    }
  }

  /** Sends a message; resolves false (and shows why) when the turn did not start. */
  async send(text: string): Promise<boolean> {
    const body = text.trim();
    if (!body || this.busy) return false;
    let sid = this.activeId;
    if (!sid) {
      const s = await this.newSession();
      if (!s) return false;
      sid = s.id;
    }
    this.clearBanner(sid);
    try {
      const started = await this.api.startTurn(sid, body);
      if (this.activeId === sid) {
        if (!this.follower || this.follower.streamId !== started.stream_id) {
          this.follow(sid, started.stream_id, started.user_message);
          this.live = this.follower!.current;
        }
      }
      this.markBusy(sid, started.stream_id);
      return true;
    } catch (err) {
      this.setBanner(sid, 'Message not sent', errorMessage(err));
      return false;
    }
  }

  async cancel(): Promise<void> {
    const streamId = this.live?.streamId || this.activeSession?.active_stream_id;
    if (!streamId) return;
    try {
      await this.api.cancel(streamId);
    } catch (err) {
      if (this.activeId) this.setBanner(this.activeId, 'Could not stop the turn', errorMessage(err));
    }
  }

  // ---- settings ----------------------------------------------------------------

  async saveSettings(input: SettingsInput): Promise<Settings> {
    const saved = await this.api.saveSettings(input);
    this.settings = saved;
    // The endpoint may have changed: re-check quietly so the first-run screen follows.
    void this.checkProvider();
    return saved;
  }

  /** Saves the form, then tries the configured endpoint. */
  async testConnection(input: SettingsInput): Promise<ProviderCheck | null> {
    this.settings = await this.api.saveSettings(input);
    return this.checkProvider();
  }

  dismissBanner(): void {
    if (this.activeId) this.clearBanner(this.activeId);
  }

  // ---- internals ---------------------------------------------------------------

  private follow(sessionId: string, streamId: string, userMessage: MessageView | null = null): void {
    this.dropFollower();
    const follower = new StreamFollower({
      sessionId,
      streamId,
      userMessage,
      streamSince: (id, seq) => this.api.streamSince(id, seq),
      onState: (s) => {
        if (this.follower !== follower) return;
        this.live = s;
        if (s.ended) void this.finish(follower, s);
      },
      onError: (err) => console.warn('stream catch-up failed', errorMessage(err)),
    });
    this.follower = follower;
    this.live = follower.current;
    this.markBusy(sessionId, streamId);
  }

  /** After stream_end: keep the banner and footer figures, re-read the saved rows. */
  private async finish(follower: StreamFollower, s: StreamState): Promise<void> {
    const sid = s.sessionId;
    if (s.error) this.banners = { ...this.banners, [sid]: s.error };
    const done: DoneData | null = s.done;
    this.lastRuns = {
      ...this.lastRuns,
      [sid]: { usage: s.usage, tps: done?.tps ?? s.tps, duration_seconds: done?.duration_seconds ?? null },
    };
    this.patchSession(sid, { active_stream_id: '' });
    try {
      const view = await this.api.getSession(sid);
      if (this.follower !== follower) return;
      this.messages = view.messages;
      this.upsertSession(view.session);
    } catch (err) {
      this.setBanner(sid, 'Could not reload the conversation', errorMessage(err));
    } finally {
      if (this.follower === follower) {
        follower.stop();
        this.follower = null;
        this.live = null;
      }
    }
    void this.refreshSessions();
  }

  private dropFollower(): void {
    this.follower?.stop();
    this.follower = null;
    this.live = null;
  }

  private setBanner(sessionId: string, label: string, message: string): void {
    this.banners = { ...this.banners, [sessionId]: { type: 'error', label, message, hint: '' } };
  }

  private clearBanner(sessionId: string): void {
    if (!(sessionId in this.banners)) return;
    const next = { ...this.banners };
    delete next[sessionId];
    this.banners = next;
  }

  private markBusy(sessionId: string, streamId: string): void {
    const s = this.sessions.find((x) => x.id === sessionId);
    if (s && s.active_stream_id !== streamId) this.patchSession(sessionId, { active_stream_id: streamId });
  }

  /** A listing taken before our stream_end must not clear a stream we still follow. */
  private keepLocalBusy(s: SessionInfo): SessionInfo {
    if (this.follower && this.follower.sessionId === s.id && !this.live?.ended && !s.active_stream_id) {
      return { ...s, active_stream_id: this.follower.streamId };
    }
    return s;
  }

  private patchSession(id: string, patch: Partial<SessionInfo>): void {
    const i = this.sessions.findIndex((s) => s.id === id);
    if (i < 0) return;
    const next = [...this.sessions];
    next[i] = { ...next[i], ...patch };
    this.sessions = next;
  }

  private upsertSession(s: SessionInfo): void {
    const rest = this.sessions.filter((x) => x.id !== s.id);
    this.sessions = sortSessions([...rest, this.keepLocalBusy(s)]);
  }
}

/** Newest first (updated_at, then created_at). */
export function sortSessions(list: SessionInfo[]): SessionInfo[] {
  return [...list].sort((a, b) => b.updated_at - a.updated_at || b.created_at - a.created_at);
}
