// The window's calls of one area: background tasks and side questions.
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { EventsOn } from '../../../wailsjs/runtime/runtime';
import { toSideQuestion, toTask, toTaskResult, toTasks, toTasksUpdate } from '../tasks';
import {
  APP_EVENTS,
  type BackgroundTask,
  type BackgroundTasksUpdate,
  type DatabaseEvent,
  type AgentNotice,
  type SideQuestion,
  type TaskResult,
} from '../protocol';
import { call, type Unsubscribe } from './core';

export const tasksCalls = {
  /** Runs prompt as a background task of the session (at once, or queued). */
  async startBackgroundTask(parentSessionId: string, prompt: string): Promise<BackgroundTask | null> {
    return toTask(await call<unknown>(() => bound.Tasks.StartBackgroundTask(parentSessionId, prompt)));
  },

  /** The session's tasks that were not dismissed, newest first. */
  async listBackgroundTasks(parentSessionId: string): Promise<BackgroundTask[]> {
    return toTasks(await call<unknown>(() => bound.Tasks.ListBackgroundTasks(parentSessionId)));
  },

  async getBackgroundTaskResult(taskId: string): Promise<TaskResult> {
    return toTaskResult(await call<unknown>(() => bound.Tasks.GetBackgroundTaskResult(taskId)), taskId);
  },

  stopBackgroundTask(taskId: string): Promise<void> {
    return call<void>(() => bound.Tasks.StopBackgroundTask(taskId));
  },

  dismissBackgroundTask(taskId: string): Promise<void> {
    return call<void>(() => bound.Tasks.DismissBackgroundTask(taskId));
  },

  async getMaxBackgroundTasks(): Promise<number> {
    return call(() => bound.Tasks.GetMaxBackgroundTasks());
  },

  setMaxBackgroundTasks(n: number): Promise<void> {
    return call<void>(() => bound.Tasks.SetMaxBackgroundTasks(n));
  },

  /** Answers question from a throwaway copy of the session (/btw): follow its frames. */
  async askSideQuestion(sessionId: string, question: string): Promise<SideQuestion> {
    return toSideQuestion(await call<unknown>(() => bound.Tasks.AskSideQuestion(sessionId, question)));
  },

  cancelSideQuestion(id: string): Promise<void> {
    return call<void>(() => bound.Tasks.CancelSideQuestion(id));
  },

  /** Something an agent did not do (e.g. delete a deleted chat's session at the agent). */
  onAgentNotice(cb: (n: AgentNotice) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.agentNotice, (n: AgentNotice | null) => {
      if (n && typeof n.message === 'string' && n.message) cb(n);
    });
  },

  onDatabase(cb: (e: DatabaseEvent) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.database, (e: DatabaseEvent | null) => {
      if (e && typeof e.state === 'string') cb(e);
    });
  },

  onBackgroundTasks(cb: (u: BackgroundTasksUpdate) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.backgroundTasks, (data: unknown) => {
      const u = toTasksUpdate(data);
      if (u) cb(u);
    });
  },
};
