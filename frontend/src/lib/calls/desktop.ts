// The window's calls of one area: desktop: launch actions, start at login, About (lib/desktop.ts).
// Part of `api` (lib/api.ts), which is what components and stores import.

import * as bound from '../bindings.gen';
import { EventsOn } from '../../../wailsjs/runtime/runtime';
import {
  LAUNCH_ACTION_EVENT,
  normaliseAbout,
  normaliseAutostart,
  type About,
  type Autostart,
} from '../desktop';
import { call, type Unsubscribe } from './core';

export const desktopCalls = {
  /** What launches asked of the window since the last call ('new_chat'), each once. */
  async takeLaunchActions(): Promise<string[]> {
    return call(() => bound.About.TakeLaunchActions());
  },

  /** A launch asked something of the window: call takeLaunchActions. */
  onLaunchAction(cb: () => void): Unsubscribe {
    return EventsOn(LAUNCH_ACTION_EVENT, () => cb());
  },

  async getAutostart(): Promise<Autostart> {
    return normaliseAutostart(await call<Autostart>(() => bound.About.GetAutostart()));
  },

  async setAutostart(on: boolean): Promise<Autostart> {
    return normaliseAutostart(await call<Autostart>(() => bound.About.SetAutostart(on)));
  },

  async getAbout(): Promise<About> {
    return normaliseAbout(await call<About>(() => bound.About.GetAbout()));
  },

  getLicenseText(ecosystem: string, name: string): Promise<string> {
    return call<string>(() => bound.About.GetLicenseText(ecosystem, name));
  },

  openDataFolder(): Promise<void> {
    return call<void>(() => bound.About.OpenDataFolder());
  },
};
