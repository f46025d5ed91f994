// The window's calls of one area: the sidecar's supervision, activity and app events.
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { EventsOn } from '../../../wailsjs/runtime/runtime';
import {
  APP_EVENTS,
  type Activity,
  type Diagnostics,
  type Frame,
  type SidecarStatus,
  type AgentState,
  type AgentStateData,
} from '../protocol';
import { call, list, num, type Unsubscribe } from './core';

function normaliseActivity(a: Activity): Activity {
  return { ...a, running: list(a?.running), waiting: num(a?.waiting) };
}

export const supervisionCalls = {
  restartAgent(): Promise<void> {
    return call<void>(() => bound.Agents.RestartAgent());
  },

  async getDiagnostics(): Promise<Diagnostics> {
    return call(() => bound.About.GetDiagnostics());
  },

  openLogsFolder(): Promise<void> {
    return call<void>(() => bound.About.OpenLogsFolder());
  },

  /** The window has (true) or lost (false) the user's attention: notifications follow. */
  setWindowFocused(focused: boolean): Promise<void> {
    return call<void>(() => bound.About.SetWindowFocused(focused));
  },

  /** The window has painted its first screen: the agent's sidecar may start now. */
  windowPainted(): Promise<void> {
    return call<void>(() => bound.About.WindowPainted());
  },

  /** Keeps what the window shows as the picture the next start paints first (lib/firstscreen). */
  saveFirstScreen(sessionId: string, width: number, page: string): Promise<void> {
    return call<void>(() => bound.About.SaveFirstScreen(sessionId, width, page));
  },

  async getActivity(): Promise<Activity> {
    return normaliseActivity(await call<Activity>(() => bound.About.GetActivity()));
  },

  onActivity(cb: (a: Activity) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.activity, (a: Activity) => {
      if (a && typeof a === 'object') cb(normaliseActivity(a));
    });
  },

  /**
   * Calls cb with each frame the backend publishes, in order. They arrive in batches
   * (`frames`: a streaming answer's text frames at most once per 100 ms, bus.Batcher).
   * A frame cb throws on does not cost the others of its batch: the error is thrown
   * again on its own task (reported as uncaught) and the next frame goes on.
   */
  onFrame(cb: (frame: Frame) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.frames, (frames: Frame[] | null) => {
      if (!Array.isArray(frames)) return;
      for (const f of frames) {
        if (!f || typeof f !== 'object') continue;
        try {
          cb(f);
        } catch (err) {
          queueMicrotask(() => {
            throw err;
          });
        }
      }
    });
  },

  /**
   * Calls cb with a chat's agent state that its ACP agent changed between turns (such
   * as the slash commands OpenCode tells just after its first answer).
   */
  onAgentState(cb: (sessionId: string, state: AgentState) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.agentState, (d: AgentStateData | null) => {
      if (d && typeof d.session_id === 'string' && d.state && typeof d.state === 'object') cb(d.session_id, d.state);
    });
  },

  onSessionsChanged(cb: () => void): Unsubscribe {
    return EventsOn(APP_EVENTS.sessionsChanged, () => cb());
  },

  onOpenSession(cb: (sessionId: string) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.openSession, (data: { session_id?: unknown } | null) => {
      if (data && typeof data.session_id === 'string') cb(data.session_id);
    });
  },

  onSidecarStatus(cb: (status: SidecarStatus) => void): Unsubscribe {
    return EventsOn(APP_EVENTS.sidecarStatus, (status: SidecarStatus) => {
      if (status && typeof status === 'object') cb(status);
    });
  },
};
