// The only module (with acp.ts and remote.ts, for their areas) that calls the bound Go
// services. It calls them through bindings.gen.ts, generated from the Go methods with
// the contract's types (app/bindgen; `make bindings`), so a method or a type that
// changes on the Go side is a compile error here. Components import `api` from here and
// never reach window.go or window.runtime themselves.
//
// Every call returns a Promise of the shapes in protocol.ts. A rejected bound method
// (Go returned an error) becomes an ApiError whose message is the Go error text. A
// result is what its generated type says: Go sends no null where the contract has a
// list (app/lists.go; TestBoundResultsHaveNoNullLists), so nothing here fills one in.
// What is left to adapt is the window's own: the optional members of a message, a
// sandbox mode it does not know, the event payloads (bus events are not bound results).

import { chatsCalls } from './calls/chats';
import { approvalsCalls } from './calls/approvals';
import { mcpCalls } from './calls/mcp';
import { steeringCalls } from './calls/steering';
import { tasksCalls } from './calls/tasks';
import { sessionsCalls } from './calls/sessions';
import { supervisionCalls } from './calls/supervision';
import { desktopCalls } from './calls/desktop';
import { chatfeaturesCalls } from './calls/chatfeatures';
import { call, list, type Unsubscribe } from './calls/core';
import * as bound from './bindings.gen';
import { EventsOn } from '../../wailsjs/runtime/runtime';
import { type Progress as ImportProgress } from './protocol';

// A failed call rejects with an ApiError carrying the host's code (errors.ts).
export { ApiError, errorCode, errorMessage, errorText } from './errors';
export { holdCallsUntil, normaliseMessage, takeBootSessions, type Unsubscribe } from './calls/core';

/** Every call of the window: one area per module under lib/calls/. */
export const api = {
  ...chatsCalls,
  ...approvalsCalls,
  ...mcpCalls,
  ...steeringCalls,
  ...tasksCalls,
  ...sessionsCalls,
  ...supervisionCalls,
  ...desktopCalls,
  ...chatfeaturesCalls,
};


export type Api = typeof api;

/** The import of existing histories (Go's app.Imports; lib/imports.svelte.ts). */
export const importsApi = {
  /** Starts importing Hermes sessions: the ids given, or all of the profile. */
  async startHermes(runtimeId: string, sessionIds: string[], all: boolean): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.StartHermesImport({ runtime_id: runtimeId, session_ids: sessionIds, all })));
  },
  /** Asks for a Talaria web folder in a native dialog; "" when cancelled. */
  async chooseWebFolder(): Promise<string> {
    return (await call<string>(() => bound.Imports.ChooseWebFolder())) ?? '';
  },
  /** Starts importing a Talaria web folder. */
  async startWeb(folder: string): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.StartWebImport(folder)));
  },
  /** Stops the running import after the chat it is writing. */
  async cancel(jobId: string): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.CancelImport(jobId)));
  },
  /** The running or last import's progress. */
  async status(): Promise<ImportProgress> {
    return normaliseProgress(await call<ImportProgress>(() => bound.Imports.ImportStatus()));
  },
  /** Every progress an import publishes. */
  onProgress(cb: (p: ImportProgress) => void): Unsubscribe {
    return EventsOn(IMPORT_PROGRESS_EVENT, (p: ImportProgress) => cb(normaliseProgress(p)));
  },
};

export type ImportsApi = typeof importsApi;

/** The window event of an import's progress (history.EventProgress). */
export const IMPORT_PROGRESS_EVENT = 'import_progress';

function normaliseProgress(p: ImportProgress): ImportProgress {
  return { ...p, problems: list(p?.problems), session_ids: list(p?.session_ids) };
}
