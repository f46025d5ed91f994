// Hermes Agent in the window: its Settings section (what was found, the path
// override, the home, the model of Hermes chats) and the "Hermes sessions" list (the
// user's own sessions from Hermes's CLI/TUI, opened read-only, "Continue here"). Kept
// apart from AppStore; App owns one instance.

import type { Api } from './api';
import { errorText } from './api';
import type { HermesHistory, HermesModels, HermesSession, HermesSettings, SessionInfo } from './protocol';

export class HermesStore {
  settings = $state<HermesSettings | null>(null);
  settingsError = $state<string | null>(null);
  saving = $state(false);
  models = $state<HermesModels | null>(null);
  modelsError = $state<string | null>(null);
  loadingModels = $state(false);

  /** The sessions dialog. */
  sessionsOpen = $state(false);
  runtimeId = $state('hermes');
  sessions = $state<HermesSession[]>([]);
  sessionsError = $state<string | null>(null);
  loadingSessions = $state(false);
  /** The session shown read-only, when one is. */
  viewing = $state<HermesHistory | null>(null);
  viewError = $state<string | null>(null);

  /** Called after the Hermes settings changed (the runtime pickers list what they find). */
  onchange: (() => void) | null = null;

  constructor(private readonly api: Api) {}

  async load(): Promise<void> {
    try {
      this.settings = await this.api.getHermesSettings();
      this.settingsError = null;
    } catch (err) {
      this.settingsError = errorText(err);
    }
  }

  /** Saves the overrides; true when the host took them. */
  async save(input: { path: string; home: string; model: string }): Promise<boolean> {
    this.saving = true;
    try {
      this.settings = await this.api.saveHermesSettings(input);
      this.settingsError = null;
      this.onchange?.();
      return true;
    } catch (err) {
      this.settingsError = errorText(err);
      return false;
    } finally {
      this.saving = false;
    }
  }

  /** Asks Hermes for its models (starts its runtime when needed). */
  async loadModels(runtimeId = 'hermes'): Promise<void> {
    this.loadingModels = true;
    try {
      this.models = await this.api.hermesModels(runtimeId);
      this.modelsError = null;
    } catch (err) {
      this.modelsError = errorText(err);
    } finally {
      this.loadingModels = false;
    }
  }

  async openSessions(runtimeId = 'hermes'): Promise<void> {
    this.runtimeId = runtimeId;
    this.sessionsOpen = true;
    this.viewing = null;
    await this.refreshSessions();
  }

  async refreshSessions(): Promise<void> {
    this.loadingSessions = true;
    try {
      this.sessions = await this.api.hermesSessions(this.runtimeId);
      this.sessionsError = null;
    } catch (err) {
      this.sessionsError = errorText(err);
    } finally {
      this.loadingSessions = false;
    }
  }

  async view(agentSessionId: string): Promise<void> {
    try {
      this.viewing = await this.api.hermesHistory(this.runtimeId, agentSessionId);
      this.viewError = null;
    } catch (err) {
      this.viewError = errorText(err);
    }
  }

  /** "Continue here": the chat bound to the session (made when there is none), or null. */
  async continueHere(agentSessionId: string): Promise<SessionInfo | null> {
    try {
      const s = await this.api.continueHermesSession(this.runtimeId, agentSessionId);
      this.viewError = null;
      this.sessionsOpen = false;
      return s;
    } catch (err) {
      this.viewError = errorText(err);
      return null;
    }
  }
}
