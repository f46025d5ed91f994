// The app's settings as the window shows them: the Settings dialog, the settings read
// and saved, and the check of the configured provider (the first-run screen shows while
// it fails). One area of the window's state (issue 25); the main store hosts it as
// `store.config`, reads the settings after the first paint and checks the provider.

import type { Api } from './api';
import { ApiError, errorMessage } from './api';
import type { LocalServer, ProviderCheck, Settings, SettingsInput } from './protocol';

export class AppSettings {
  settings = $state<Settings | null>(null);
  providerCheck = $state<ProviderCheck | null>(null);
  checkingProvider = $state(false);
  firstRunDismissed = $state(false);
  settingsOpen = $state(false);

  constructor(private readonly api: Pick<Api, 'checkProvider' | 'saveSettings' | 'getSettings'>) {}

  get showFirstRun(): boolean {
    return !this.firstRunDismissed && this.providerCheck !== null && !this.providerCheck.ok;
  }

  async checkProvider(): Promise<ProviderCheck | null> {
    this.checkingProvider = true;
    try {
      this.providerCheck = await this.api.checkProvider();
    } catch (err) {
      this.providerCheck = { ok: false, message: errorMessage(err), hint: err instanceof ApiError ? err.hint : '', models: [] };
    } finally {
      this.checkingProvider = false;
    }
    return this.providerCheck;
  }

  async saveSettings(input: SettingsInput): Promise<Settings> {
    const saved = await this.api.saveSettings(input);
    this.settings = saved;
    // The endpoint may have changed: re-check quietly so the first-run screen follows.
    void this.checkProvider();
    return saved;
  }

  /**
   * Chooses `model` as the Settings dialog would (the first screen's picker, issue 26
   * item 8): of the configured endpoint (the provider, endpoint and key stay), or of
   * `server`, a local server found answering (its preset and address become the
   * provider). The check runs again, and once it passes the first screen gives way to
   * the chat. Rejects with the save's error (the settings unchanged).
   */
  async chooseModel(model: string, server?: LocalServer): Promise<ProviderCheck | null> {
    const cur = this.settings ?? (await this.api.getSettings());
    this.settings = await this.api.saveSettings({
      provider_name: server?.provider_name ?? cur.provider_name, base_url: server?.base_url ?? cur.base_url, model,
      workspace: '', api_key: '', clear_api_key: false,
    });
    return this.checkProvider();
  }

  /** Saves the form, then tries the configured endpoint. */
  async testConnection(input: SettingsInput): Promise<ProviderCheck | null> {
    this.settings = await this.api.saveSettings(input);
    return this.checkProvider();
  }
}
