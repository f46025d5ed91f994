// An ACP agent's account and earlier sessions in the window: the sign-in card a chat
// shows when its agent asks to sign in (ACP authenticate with one of the agent's own
// methods, then the failed message is answered again), and the "Agent sessions"
// dialog (the agent's own sessions through ACP session/list, one opened as a chat;
// "Sign out" through ACP logout when the agent offers it).

import { errorText } from './api';
import type { AcpApi, AcpSession, AuthMethod } from './acp';

export class AcpAccountStore {
  /** The sign-in card: the runtime of the chat that asked, or null when closed. */
  signInRuntime = $state<string | null>(null);
  methods = $state<AuthMethod[]>([]);
  signInError = $state('');
  signingIn = $state<string | null>(null); // the method being tried

  /** The sessions dialog: the agent's runtime id and name, or null when closed. */
  sessionsFor = $state<{ runtimeId: string; name: string } | null>(null);
  sessions = $state<AcpSession[]>([]);
  sessionsError = $state('');
  loading = $state(false);
  canList = $state(false);
  canLogout = $state(false);
  signedOut = $state(false);
  /**
   * The runtimes signed out of in this window (ACP logout succeeded), until a sign-in to
   * the same agent succeeds: the sessions dialog shows it each time it opens.
   */
  signedOutOf = $state<string[]>([]);

  constructor(private api: AcpApi) {}

  /** Opens the sign-in card for runtimeId's agent with the methods it offers. */
  async openSignIn(runtimeId: string): Promise<void> {
    this.signInRuntime = runtimeId;
    this.methods = [];
    this.signInError = '';
    try {
      this.methods = (await this.api.info(runtimeId)).auth_methods;
      if (this.methods.length === 0) this.signInError = 'This agent offers no way to sign in through Talaria: sign in with its own command in a terminal, then send again.';
    } catch (err) {
      this.signInError = errorText(err);
    }
  }

  /**
   * Signs in with methodId; on success the card closes and retry (answer the failed
   * message again) runs. An agent's refusal stays on the card.
   */
  async signIn(methodId: string, retry: () => Promise<unknown>): Promise<boolean> {
    const rt = this.signInRuntime;
    if (!rt) return false;
    this.signingIn = methodId;
    this.signInError = '';
    try {
      await this.api.authenticate(rt, methodId);
      this.signedOutOf = this.signedOutOf.filter((r) => r !== rt);
      this.signInRuntime = null;
      await retry();
      return true;
    } catch (err) {
      this.signInError = errorText(err);
      return false;
    } finally {
      this.signingIn = null;
    }
  }

  /** Opens the sessions dialog of runtimeId's agent (named name) and lists them. */
  async openSessions(runtimeId: string, name: string): Promise<void> {
    this.sessionsFor = { runtimeId, name };
    this.sessions = [];
    this.sessionsError = '';
    this.signedOut = this.signedOutOf.includes(runtimeId);
    this.loading = true;
    try {
      const info = await this.api.info(runtimeId);
      this.canList = info.capabilities.list_sessions;
      this.canLogout = info.capabilities.logout;
      if (this.canList) this.sessions = await this.api.sessions(runtimeId);
    } catch (err) {
      this.sessionsError = errorText(err);
    } finally {
      this.loading = false;
    }
  }

  /** Opens (or finds) the chat of one of the agent's sessions; its id, or null. */
  async open(agentSessionId: string): Promise<string | null> {
    const f = this.sessionsFor;
    if (!f) return null;
    try {
      const s = await this.api.continueSession(f.runtimeId, agentSessionId);
      this.sessionsFor = null;
      return s.id;
    } catch (err) {
      this.sessionsError = errorText(err);
      return null;
    }
  }

  /** Signs out of the agent of the sessions dialog (ACP logout). */
  async signOut(): Promise<void> {
    const f = this.sessionsFor;
    if (!f) return;
    this.sessionsError = '';
    try {
      await this.api.logout(f.runtimeId);
      this.signedOut = true;
      if (!this.signedOutOf.includes(f.runtimeId)) this.signedOutOf = [...this.signedOutOf, f.runtimeId];
    } catch (err) {
      this.sessionsError = errorText(err);
    }
  }
}
