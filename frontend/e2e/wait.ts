// The deadlines of the window tests, one place. An expectation ends as soon as it holds;
// the deadline only bounds one whose condition never comes, so it is generous: the
// machine is shared, and `wails dev`, WebKit's or Chromium's first layout and the real
// agents are slow under load. TALARIA_TEST_WAIT_MS overrides it (as for vitest).
export const WAIT_MS = Number(process.env.TALARIA_TEST_WAIT_MS) > 0 ? Number(process.env.TALARIA_TEST_WAIT_MS) : 60_000;

/** An expectation that waits on a real agent starting (Hermes's Python, OpenCode). */
export const AGENT_WAIT_MS = 4 * WAIT_MS;

/** A test: it may hold several expectations (`test.slow()` triples it for the real agents). */
export const TEST_MS = 5 * WAIT_MS;
