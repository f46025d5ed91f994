// The window's calls of one area: sessions and their transcripts, turns, the sandbox and workspace, runtimes and Hermes, settings.
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { EventsOn } from '../../../wailsjs/runtime/runtime';
import {
  APP_EVENTS,
  type AuditEntry,
  type AuditFilter,
  type SessionSandbox,
  type Frame,
  type HermesHistory,
  type HermesModels,
  type HermesSession,
  type HermesSettings,
  type ProviderCheck,
  type RuntimeOption,
  type SessionInfo,
  type SessionView,
  type TranscriptPage,
  type Settings,
  type SettingsInput,
  type Status,
  type TurnStarted,
} from '../protocol';
import { call, noInstall, normaliseHermes, normaliseMessage, transcriptPage, type Unsubscribe, normaliseSandbox } from './core';

export const chatsCalls = {
  /** A chat's sandbox policy. */
  async getSessionSandbox(sessionId: string): Promise<SessionSandbox> {
    return normaliseSandbox(await call<SessionSandbox>(() => bound.Agents.GetSessionSandbox(sessionId)));
  },

  /** Sets a chat's sandbox policy (from its next command on). */
  setSessionSandbox(sessionId: string, v: SessionSandbox): Promise<void> {
    return call(() => bound.Agents.SetSessionSandbox(sessionId, v));
  },

  /** The policy new chats start with. */
  async getDefaultSandbox(): Promise<SessionSandbox> {
    return normaliseSandbox(await call<SessionSandbox>(() => bound.Agents.GetDefaultSandbox()));
  },

  /** Sets the policy new chats start with (never full access). */
  setDefaultSandbox(v: SessionSandbox): Promise<void> {
    return call(() => bound.Agents.SetDefaultSandbox(v));
  },

  /** Sets the folder a chat works in; a folder that holds the data folder is refused. */
  async setSessionWorkspace(sessionId: string, path: string): Promise<SessionInfo> {
    return call(() => bound.Chats.SetSessionWorkspace(sessionId, path));
  },

  /** Sets the folder new chats start in (Settings); the cleaned path. */
  async setDefaultWorkspace(path: string): Promise<string> {
    return call(() => bound.Chats.SetDefaultWorkspace(path));
  },

  /** Asks the user for a folder; "" when cancelled. */
  async chooseFolder(title: string, start: string): Promise<string> {
    return call(() => bound.About.ChooseFolder(title, start));
  },

  /** The approval audit log, newest first. */
  async listAudit(filter: AuditFilter = {}): Promise<AuditEntry[]> {
    return call(() => bound.Approvals.ListAudit(filter));
  },

  /** Empties the approval audit log; how many entries it held. */
  async clearAudit(): Promise<number> {
    return (await call<number>(() => bound.Approvals.ClearAudit())) ?? 0;
  },

  /** Saves the log as CSV where the user chooses; the path, "" when cancelled. */
  async exportAudit(filter: AuditFilter = {}): Promise<string> {
    return call(() => bound.Approvals.ExportAudit(filter));
  },

  onAuditChanged(cb: () => void): Unsubscribe {
    return EventsOn(APP_EVENTS.auditChanged, () => cb());
  },

  async newSession(): Promise<SessionInfo> {
    return call(() => bound.Chats.NewSession());
  },

  async listSessions(): Promise<SessionInfo[]> {
    return await call(() => bound.Chats.ListSessions());
  },

  /** The runtimes the pickers offer, the default one marked. */
  async listRuntimes(): Promise<RuntimeOption[]> {
    return call(() => bound.Agents.ListRuntimes());
  },

  /** The Hermes settings and what discovery found with them. */
  async getHermesSettings(): Promise<HermesSettings> {
    return normaliseHermes(await call<HermesSettings>(() => bound.Agents.GetHermesSettings()));
  },

  /** Stores the Hermes path override, home and model, and rediscovers. */
  async saveHermesSettings(s: Pick<HermesSettings, 'path' | 'home' | 'model'>): Promise<HermesSettings> {
    return normaliseHermes(await call<HermesSettings>(() => bound.Agents.SaveHermesSettings({ ...s, install: noInstall })));
  },

  /** The user's own Hermes sessions of runtime id ("" = the default profile). */
  async hermesSessions(runtimeId: string): Promise<HermesSession[]> {
    return call(() => bound.Agents.HermesSessions(runtimeId));
  },

  /** One Hermes session's transcript, read-only. */
  async hermesHistory(runtimeId: string, agentSessionId: string): Promise<HermesHistory> {
    return call(() => bound.Agents.HermesHistory(runtimeId, agentSessionId));
  },

  /** Makes (or finds) the chat bound to a Hermes session. */
  async continueHermesSession(runtimeId: string, agentSessionId: string): Promise<SessionInfo> {
    return call(() => bound.Agents.ContinueHermesSession(runtimeId, agentSessionId));
  },

  /** The models Hermes can use. */
  async hermesModels(runtimeId: string): Promise<HermesModels> {
    return call(() => bound.Agents.HermesModels(runtimeId));
  },

  /** Makes runtime id the one new chats use. */
  setDefaultRuntime(id: string): Promise<void> {
    return call<void>(() => bound.Agents.SetDefaultRuntime(id));
  },

  /** Restarts (or starts) the sidecar of runtime id. */
  restartRuntime(id: string): Promise<void> {
    return call<void>(() => bound.Agents.RestartRuntime(id));
  },

  /** Moves an idle chat to runtime id. */
  async setSessionRuntime(sessionId: string, id: string): Promise<SessionInfo> {
    return call(() => bound.Agents.SetSessionRuntime(sessionId, id));
  },

  async getSession(id: string): Promise<SessionView> {
    const v = await call(() => bound.Chats.GetSession(id));
    return { session: v.session, messages: v.messages.map(normaliseMessage) };
  },

  /** `limit` sessions of the sidebar from `offset` on (pinned first, then newest). */
  async listSessionsPage(offset: number, limit: number): Promise<SessionInfo[]> {
    return await call(() => bound.Chats.ListSessionsPage(offset, limit));
  },

  /** The last `limit` rows before position `before` (-1: the session's last rows). */
  async getTranscript(id: string, before: number, limit: number): Promise<TranscriptPage> {
    return transcriptPage(await call<TranscriptPage>(() => bound.Chats.GetTranscript(id, before, limit)));
  },

  /** `limit` rows from position `from` on. */
  async getTranscriptFrom(id: string, from: number, limit: number): Promise<TranscriptPage> {
    return transcriptPage(await call<TranscriptPage>(() => bound.Chats.GetTranscriptFrom(id, from, limit)));
  },

  async startTurn(sessionId: string, text: string): Promise<TurnStarted> {
    const t = await call<TurnStarted>(() => bound.Turns.StartTurn(sessionId, text));
    return { ...t, user_message: normaliseMessage(t.user_message) };
  },

  cancel(streamId: string): Promise<void> {
    return call<void>(() => bound.Turns.Cancel(streamId));
  },

  async streamSince(streamId: string, seq: number): Promise<Frame[]> {
    return call(() => bound.Turns.StreamSince(streamId, seq));
  },

  getSettings(): Promise<Settings> {
    return call<Settings>(() => bound.Settings.GetSettings());
  },

  saveSettings(input: SettingsInput): Promise<Settings> {
    // The generated parameter type is a class with the same fields.
    return call<Settings>(() => bound.Settings.SaveSettings(input));
  },

  async checkProvider(): Promise<ProviderCheck> {
    return call(() => bound.Settings.CheckProvider());
  },

  async getStatus(): Promise<Status> {
    return call(() => bound.Agents.GetStatus());
  },
};
