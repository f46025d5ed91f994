// The one deadline of every wait in the vitest suite. A wait ends as soon as its
// condition holds; the deadline only bounds a wait whose condition never comes, so it
// is generous: the machine is shared and a test file may take 45 s under load.
// TALARIA_TEST_WAIT_MS overrides it (e.g. 5000 to find a hung wait quickly).
//
// Used by: Testing Library's findBy*/waitFor (asyncUtilTimeout, set in setup.ts),
// vi.waitFor/vi.waitUntil through `waitOpts`, and vitest's test and hook timeouts
// (vite.config.ts), which are a multiple of it so a stuck wait reports its own error
// ("Unable to find role=…") rather than a bare test timeout.
export const WAIT_MS = Number(testEnv('TALARIA_TEST_WAIT_MS')) > 0 ? Number(testEnv('TALARIA_TEST_WAIT_MS')) : 60_000;

/** The options of vi.waitFor / vi.waitUntil: the shared deadline. */
export const waitOpts = { timeout: WAIT_MS, interval: 20 } as const;

/** An environment variable of the test run (read in Node: the config, the workers). */
export function testEnv(name: string): string | undefined {
  return (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env[name];
}
