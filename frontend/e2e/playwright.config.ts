// Playwright configuration of the window tests (scripts/window-test.sh, `make
// test-window`). The script starts `wails dev` and the scripted provider and passes
// their addresses in TALARIA_URL and TALARIA_PROVIDER_URL; run specs only through it.
import { defineConfig } from '@playwright/test';
import { TEST_MS, WAIT_MS } from './wait';

const out = process.env.WINDOW_TEST_OUT ?? '../build/window-test';

export default defineConfig({
  testDir: '.',
  testMatch: '**/*.spec.ts',
  // One backend and one scripted provider serve every test: run them one at a time.
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  // One generous deadline for every expectation (wait.ts); a test outlives several.
  timeout: TEST_MS,
  expect: { timeout: WAIT_MS },
  outputDir: `${out}/results`,
  reporter: [['list'], ['html', { outputFolder: `${out}/report`, open: 'never' }]],
  use: {
    baseURL: process.env.TALARIA_URL,
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    },
    headless: true,
    viewport: { width: 1180, height: 800 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
