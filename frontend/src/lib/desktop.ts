// The desktop side of the app: launch actions (the desktop entry's "New chat", a
// second launch), starting at login into the tray, and the About view's data. Shapes
// follow backend/aboutinfo.go, backend/autostart.go and app/launch.go.

/** Emitted when a launch asked something of the window (no payload). */
export const LAUNCH_ACTION_EVENT = 'launch_action';

/** Launch actions the window knows. */
export const LAUNCH_NEW_CHAT = 'new_chat';
/** The window switched into quick ask (app.LaunchQuickAsk): the tray, the global shortcut or --quick-ask. */
export const LAUNCH_QUICK_ASK = 'quick_ask';

// The shapes are generated from Go (protocol.gen.ts, backend/contract).
import type { About, AboutLibrary, Autostart, StatusPaths as AboutPaths } from './protocol';
export type { About, AboutLibrary, AboutPaths, Autostart };

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

export function normaliseAutostart(a: Partial<Autostart> | null | undefined): Autostart {
  return { enabled: a?.enabled === true, where: str(a?.where), command: str(a?.command), error: str(a?.error) };
}

export function normaliseAbout(a: Partial<About> | null | undefined): About {
  const p: Partial<AboutPaths> = a?.paths ?? {};
  return {
    version: str(a?.version),
    commit: str(a?.commit),
    build_date: str(a?.build_date),
    go_version: str(a?.go_version),
    platform: str(a?.platform),
    license: str(a?.license),
    license_text: str(a?.license_text),
    paths: {
      data_dir: str(p.data_dir),
      db_path: str(p.db_path),
      log_dir: str(p.log_dir),
      app_log: str(p.app_log),
      sidecar_log: str(p.sidecar_log),
      cache_dir: str(p.cache_dir),
    },
    libraries: (Array.isArray(a?.libraries) ? a.libraries : [])
      .filter((l): l is AboutLibrary => !!l && typeof l === 'object' && typeof l.name === 'string')
      .map((l) => ({ name: l.name, version: str(l.version), license: str(l.license), ecosystem: str(l.ecosystem) })),
    error: str(a?.error),
  };
}

/** The first 12 characters of a commit id ('' stays ''). */
export function shortCommit(c: string): string {
  return c.slice(0, 12);
}

/** "1 December 2026, 10:00 UTC" from an RFC 3339 time; the input when it is not one. */
export function formatBuildDate(iso: string): string {
  const t = Date.parse(iso);
  if (!iso || Number.isNaN(t)) return iso;
  const d = new Date(t);
  const month = d.toLocaleString('en-GB', { month: 'long', timeZone: 'UTC' });
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  return `${d.getUTCDate()} ${month} ${d.getUTCFullYear()}, ${hh}:${mm} UTC`;
}

const ECOSYSTEM_TITLES: Record<string, string> = { go: 'Go modules', npm: 'npm packages (the window)', c: 'C libraries' };

/** The libraries grouped for display: Go, npm, then C, each sorted by name. */
export function groupLibraries(libs: AboutLibrary[]): { title: string; ecosystem: string; libraries: AboutLibrary[] }[] {
  const order = ['go', 'npm', 'c'];
  const groups = new Map<string, AboutLibrary[]>();
  for (const l of libs) groups.set(l.ecosystem, [...(groups.get(l.ecosystem) ?? []), l]);
  return [...groups.entries()]
    .sort(([a], [b]) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b))
    .map(([eco, list]) => ({
      ecosystem: eco,
      title: ECOSYSTEM_TITLES[eco] ?? eco,
      libraries: [...list].sort((x, y) => x.name.localeCompare(y.name)),
    }));
}

type LaunchApi = {
  takeLaunchActions(): Promise<string[]>;
  onLaunchAction(cb: () => void): () => void;
};

/**
 * Does what launches ask of the window: once now (an action may have been queued
 * before the window listened, e.g. `talaria --new-chat` starting the app) and on every
 * launch_action event. Each action is taken from the host exactly once. Returns the
 * unsubscribe function.
 */
export function watchLaunchActions(api: LaunchApi, handlers: { newChat: () => unknown; quickAsk?: () => unknown }): () => void {
  let busy: Promise<void> = Promise.resolve();
  const take = () => {
    busy = busy.then(async () => {
      let actions: string[] = [];
      try {
        actions = await api.takeLaunchActions();
      } catch {
        return; // an older host without launch actions, or the window closing
      }
      for (const a of actions) {
        if (a === LAUNCH_NEW_CHAT) await handlers.newChat();
        else if (a === LAUNCH_QUICK_ASK) await handlers.quickAsk?.();
      }
    });
  };
  const unsubscribe = api.onLaunchAction(take);
  take();
  return unsubscribe;
}

/** What StartupSetting needs of the host. */
export type AutostartApi = {
  getAutostart(): Promise<Autostart>;
  setAutostart(on: boolean): Promise<Autostart>;
};

/** What AboutDialog needs of the host. */
export type AboutApi = {
  getAbout(): Promise<About>;
  getLicenseText(ecosystem: string, name: string): Promise<string>;
  openDataFolder(): Promise<void>;
  openLogsFolder(): Promise<void>;
};
