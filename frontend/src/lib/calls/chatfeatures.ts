// The window's calls of one area: the chat features (issue 12): files, retry and edit, summaries, figures, a
// chat's own settings, quick ask (shapes in lib/chat.ts).
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { ClipboardSetText } from '../../../wailsjs/runtime/runtime';
import type {
  Attachment,
  AttachmentContent,
  Branched,
  ChatFigures,
  ChatOptionsValue,
  ChatPreferences,
  ChatSettings,
  CompactResult,
  ModelInfo,
  ModelSettings,
  QuickAskStatus,
  TurnStarted as ChatTurnStarted,
} from '../chat';
import { type SessionInfo } from '../protocol';
import { call } from './core';

export const chatfeaturesCalls = {
  /** Puts text on the system clipboard (Copy message, Copy code). Resolves whether it did. */
  async copyText(text: string): Promise<boolean> {
    try {
      if (await ClipboardSetText(text)) return true;
    } catch {
      // no Wails runtime (a plain browser): the web clipboard below
    }
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch {
      return false;
    }
  },

  /** Sends text with the listed files staged in the chat's composer. */
  sendMessage(sessionId: string, text: string, attachmentIds: string[]): Promise<ChatTurnStarted> {
    return call<ChatTurnStarted>(() => bound.Turns.SendMessage(sessionId, text, attachmentIds));
  },

  /** Stages a file the user dropped or pasted (its bytes, base64). */
  attachFile(sessionId: string, name: string, dataBase64: string): Promise<Attachment> {
    return call<Attachment>(() => bound.Turns.AttachFile(sessionId, name, dataBase64));
  },

  /** Opens the system's file dialog and stages the chosen files. */
  async pickAttachments(sessionId: string): Promise<Attachment[]> {
    return call(() => bound.Turns.PickAttachments(sessionId));
  },

  async stagedAttachments(sessionId: string): Promise<Attachment[]> {
    return call(() => bound.Turns.StagedAttachments(sessionId));
  },

  removeAttachment(sessionId: string, id: string): Promise<void> {
    return call<void>(() => bound.Turns.RemoveAttachment(sessionId, id));
  },

  attachmentPreview(sessionId: string, id: string): Promise<AttachmentContent> {
    return call<AttachmentContent>(() => bound.Turns.AttachmentPreview(sessionId, id));
  },

  /** Answers the chat's last message again ("" model: the chat's own). */
  retry(sessionId: string, model: string): Promise<Branched> {
    return call<Branched>(() => bound.Turns.Retry(sessionId, model));
  },

  /** Replaces a message of the user with text and sends it again. */
  editAndResend(sessionId: string, messageId: number, text: string, revision: number): Promise<Branched> {
    return call<Branched>(() => bound.Turns.EditAndResend(sessionId, messageId, text, revision));
  },

  /** "Summarise and continue"; with retry a failed last turn is answered again. */
  compactSession(sessionId: string, retry: boolean): Promise<CompactResult> {
    return call<CompactResult>(() => bound.Turns.CompactSession(sessionId, retry));
  },

  regenerateTitle(sessionId: string): Promise<string> {
    return call<string>(() => bound.Turns.RegenerateTitle(sessionId));
  },

  /** The chat's cost and context meter, and the figures of the turns of `streamIds`. */
  async chatFigures(sessionId: string, streamIds: string[]): Promise<ChatFigures> {
    return call(() => bound.Turns.ChatFigures(sessionId, streamIds));
  },

  getChatSettings(sessionId: string): Promise<ChatSettings> {
    return call<ChatSettings>(() => bound.Settings.GetChatSettings(sessionId));
  },

  setChatOptions(sessionId: string, o: ChatOptionsValue): Promise<SessionInfo> {
    return call(() => bound.Settings.SetChatOptions(sessionId, o));
  },

  setChatModel(sessionId: string, model: string): Promise<SessionInfo> {
    return call(() => bound.Settings.SetChatModel(sessionId, model));
  },

  modelInfo(model: string): Promise<ModelInfo> {
    return call<ModelInfo>(() => bound.Settings.ModelInfo(model));
  },

  setModelSettings(model: string, ms: ModelSettings): Promise<ModelInfo> {
    return call<ModelInfo>(() => bound.Settings.SetModelSettings(model, ms));
  },

  getChatPreferences(): Promise<ChatPreferences> {
    return call<ChatPreferences>(() => bound.Settings.GetChatPreferences());
  },

  saveChatPreferences(p: ChatPreferences): Promise<ChatPreferences> {
    return call<ChatPreferences>(() => bound.Settings.SaveChatPreferences(p));
  },

  quickAskStatus(): Promise<QuickAskStatus> {
    return call<QuickAskStatus>(() => bound.Turns.QuickAskStatus());
  },

  setQuickAskShortcut(text: string): Promise<QuickAskStatus> {
    return call<QuickAskStatus>(() => bound.Turns.SetQuickAskShortcut(text));
  },

  /** Switches the window into quick ask (as the tray's Quick ask does). */
  quickAsk(): Promise<void> {
    return call<void>(() => bound.Turns.QuickAsk());
  },

  /** Puts the window back; with openMain it stays shown (Open in Talaria). */
  leaveQuickAsk(openMain: boolean): Promise<void> {
    return call<void>(() => bound.Turns.LeaveQuickAsk(openMain));
  },
};
