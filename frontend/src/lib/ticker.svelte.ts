// One slow clock for every activity indicator (Pulse.svelte): it ticks only while an
// indicator is mounted, PULSE_MS apart, so a window where the agent works and prints
// nothing repaints a few pixels once a second instead of running CSS animations at the
// display's rate (which WebKitGTK repaints in software). While the window is hidden it
// does not tick at all (lib/visibleclock.ts).

import { everyWhileVisible } from './visibleclock';

/** The time between two steps of an activity indicator (ms): one repaint of a few pixels a second. */
export const PULSE_MS = 1000;

export const ticker = $state({ n: 0 });

let users = 0;
let stopClock: (() => void) | null = null;

/** Starts the clock for one indicator; returns its stop. */
export function useTicker(): () => void {
  if (users++ === 0) stopClock = everyWhileVisible(() => ticker.n++, PULSE_MS);
  let done = false;
  return () => {
    if (done) return;
    done = true;
    if (--users === 0 && stopClock) {
      stopClock();
      stopClock = null;
    }
  };
}
