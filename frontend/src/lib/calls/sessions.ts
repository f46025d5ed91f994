// The window's calls of one area: session actions (rename, pin, archive, delete, export, fork ...).
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import {
  type Draft,
  type ExportFile,
  type ExportFormat,
  type RecoveryReport,
  type SearchHit,
  type SessionInfo,
} from '../protocol';
import { call } from './core';

export const sessionsCalls = {
  async renameSession(id: string, title: string): Promise<SessionInfo> {
    return call(() => bound.Chats.RenameSession(id, title));
  },

  async pinSession(id: string, pinned: boolean): Promise<SessionInfo> {
    return call(() => bound.Chats.PinSession(id, pinned));
  },

  async archiveSession(id: string, archived: boolean): Promise<SessionInfo> {
    return call(() => bound.Chats.ArchiveSession(id, archived));
  },

  async listArchivedSessions(): Promise<SessionInfo[]> {
    return await call(() => bound.Chats.ListArchivedSessions());
  },

  deleteSession(id: string): Promise<void> {
    return call<void>(() => bound.Chats.DeleteSession(id));
  },

  /**
   * The agent that keeps the chat's history when it is deleted ('' when deleting it
   * deletes the agent's session too, or there is none): the delete dialog says so.
   */
  historyKeptBy(id: string): Promise<string> {
    return call<string>(() => bound.Agents.HistoryKeptBy(id));
  },

  /** Deletes a chat with nothing of the user's in it yet; true when it did. */
  discardIfEmpty(id: string): Promise<boolean> {
    return call<boolean>(() => bound.Chats.DiscardIfEmpty(id));
  },

  /** A new session with the rows up to and including `position`; one per requestKey. */
  async forkSession(id: string, position: number, requestKey: string): Promise<SessionInfo> {
    return call(() => bound.Chats.ForkSession(id, position, requestKey));
  },

  async duplicateSession(id: string, requestKey: string): Promise<SessionInfo> {
    return call(() => bound.Chats.DuplicateSession(id, requestKey));
  },

  saveDraft(id: string, text: string): Promise<void> {
    return call<void>(() => bound.Chats.SaveDraft(id, text));
  },

  async getDraft(id: string): Promise<Draft> {
    const d = await call(() => bound.Chats.GetDraft(id));
    return { ...d, session_id: d.session_id || id };
  },

  async searchSessions(query: string, limit = 30): Promise<SearchHit[]> {
    return await call(() => bound.Chats.SearchSessions(query, limit));
  },

  /** Asks where to save (a native dialog) and writes the file; "" when cancelled. */
  async exportSession(id: string, format: ExportFormat): Promise<string> {
    return call(() => bound.Chats.ExportSession(id, format));
  },

  async exportSessionText(id: string, format: ExportFormat): Promise<ExportFile> {
    return call(() => bound.Chats.ExportSessionText(id, format));
  },

  /** Asks for a JSON export (a native dialog) and imports it; null when cancelled. */
  async importSession(): Promise<SessionInfo | null> {
    const s = await call(() => bound.Chats.ImportSession());
    return s.id !== '' ? s : null;
  },

  async getRecoveryReport(): Promise<RecoveryReport> {
    const r = await call(() => bound.Chats.GetRecoveryReport());
    return { ...r, problems: r.problems ?? [] }; // omitted when there are none
  },

  dismissRecoveryReport(): Promise<void> {
    return call<void>(() => bound.Chats.DismissRecoveryReport());
  },
};
