// The window process's crashes in Diagnostics (issue 26, item 9a): a real Go panic,
// written by the Go runtime through backend/crashlog as the app's own would be, filed in
// the app's crash folder, is the newest crash the Diagnostics view shows; so is the real
// GTK window's web process (WebKitWebProcess) being killed, after which the window
// loads again.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect, test } from './fixtures';
import { AGENT_WAIT_MS } from './wait';

const dataDir = process.env.TALARIA_DATA_DIR ?? '';

test("Diagnostics shows the app's last crash report", async ({ app }) => {
  expect(dataDir, 'scripts/window-test.sh sets TALARIA_DATA_DIR').not.toBe('');
  // A process that installs the crash log as the app does, then panics in a goroutine
  // (backend/crashlog's test binary in its crashing part).
  const tmp = mkdtempSync(path.join(tmpdir(), 'talaria-crash-'));
  try {
    execFileSync('go', ['test', '-count=1', '-run', '^$', './backend/crashlog/'], {
      cwd: path.resolve(process.cwd(), '..'),
      env: { ...process.env, CRASHLOG_CHILD: tmp, CRASHLOG_MODE: 'panic' },
      stdio: 'pipe',
    });
  } catch {
    // It crashed, as it should: go test reports the failure.
  }
  const report = path.join(tmp, 'current.log');
  expect(existsSync(report)).toBe(true);
  // Filed in the app's crash folder as the next start files it; named to be the newest.
  const crashes = path.join(dataDir, 'logs', 'crashes');
  mkdirSync(crashes, { recursive: true });
  const filed = path.join(crashes, 'crash-20991231T235959.000Z.log');
  copyFileSync(report, filed);
  try {
    await app.page.getByRole('button', { name: 'Diagnostics' }).click();
    const dialog = app.page.getByRole('dialog', { name: 'Diagnostics' });
    await expect(dialog.getByText('panic: crash test: the window process broke', { exact: true })).toBeVisible();
    await expect(dialog.getByText(filed, { exact: true })).toBeVisible();
    await dialog.getByText("The app's crash report").click();
    await expect(dialog.getByLabel('Crash report')).toContainText('goroutine ');
    await expect(dialog.getByLabel('Crash report')).toContainText('crashlog_test.child');
    await dialog.getByRole('button', { name: 'Close' }).click();
  } finally {
    rmSync(filed, { force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
});

// The WebKitWebProcesses of this run's real GTK window: processes of that name with the
// app of this data folder (TALARIA_HOME) among their ancestors. WebKit may keep more
// than one (a spare or a cached process beside the one drawing the page), and which
// one draws is not visible from outside, so the test ends them all.
function webProcessesOfThisRun(): number[] {
  const marker = `TALARIA_HOME=${dataDir}\0`;
  const read = (f: string) => {
    try {
      return readFileSync(f, 'utf8');
    } catch {
      return '';
    }
  };
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || read(`/proc/${name}/comm`).trim() !== 'WebKitWebProces') continue;
    let pid = name;
    for (let depth = 0; depth < 8 && pid !== '0' && pid !== '1'; depth++) {
      if (read(`/proc/${pid}/environ`).includes(marker)) {
        found.push(Number(name));
        break;
      }
      const stat = read(`/proc/${pid}/stat`);
      pid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1] ?? '0';
    }
  }
  return found;
}

test("the window's web process dying is a crash Diagnostics shows, and the window loads again", async ({ app }) => {
  expect(dataDir, 'scripts/window-test.sh sets TALARIA_DATA_DIR').not.toBe('');
  let victims: number[] = [];
  await expect.poll(() => (victims = webProcessesOfThisRun()).length, { timeout: AGENT_WAIT_MS }).toBeGreaterThan(0);
  for (const pid of victims) process.kill(pid, 'SIGKILL');
  type Diag = { last_crash: { path: string; summary: string; text: string } };
  await expect
    .poll(async () => (await app.call<Diag>('GetDiagnostics')).last_crash.summary, {
      timeout: AGENT_WAIT_MS,
      message: `the app filed no crash after the web processes ${victims.join(', ')} were killed`,
    })
    .toBe("webview: the window's web process crashed");
  const crash = (await app.call<Diag>('GetDiagnostics')).last_crash;
  try {
    expect(crash.text).toContain('The window was loaded again.');
    // The page was loaded again in a new web process.
    await expect
      .poll(() => webProcessesOfThisRun().filter((pid) => !victims.includes(pid)).length, { timeout: AGENT_WAIT_MS })
      .toBeGreaterThan(0);
    await app.page.getByRole('button', { name: 'Diagnostics' }).click();
    const dialog = app.page.getByRole('dialog', { name: 'Diagnostics' });
    await expect(dialog.getByText("webview: the window's web process crashed", { exact: true })).toBeVisible();
    await dialog.getByRole('button', { name: 'Close' }).click();
  } finally {
    rmSync(crash.path, { force: true });
  }
});
