// Signing in to a remote MCP server in the real window: the MCP TypeScript SDK's
// example server run with --oauth (installed by scripts/mcp-setup.sh; it answers 401
// with a Bearer challenge and runs a demo authorization server that issues a code
// without a login page) shows "Needs sign-in" in Settings; Sign in goes through the
// real flow (discovery, dynamic registration, PKCE, the app's loopback redirect) with
// the window test's browser (scripts/window-test.sh: an xdg-open that follows the
// redirects), the grant goes to the test session's gnome-keyring, and the row says
// "Signed in"; Sign out turns it back.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { expect, test, type App } from './fixtures';
import { WAIT_MS } from './wait';

const example = path.resolve(process.cwd(), '../.cache/mcp-servers/node_modules/@modelcontextprotocol/sdk/dist/esm/examples/server/simpleStreamableHttp.js');

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function startDemo(): Promise<{ child: ChildProcess; url: string }> {
  const [mcpPort, authPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [example, '--oauth', '--oauth-strict'], {
    env: { ...process.env, MCP_PORT: String(mcpPort), MCP_AUTH_PORT: String(authPort) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let listening = 0;
    let out = '';
    const timer = setTimeout(() => reject(new Error(`the OAuth demo server did not listen: ${out}`)), WAIT_MS);
    const seen = (b: Buffer) => {
      out += b.toString();
      listening = (out.match(/listening on port/g) ?? []).length;
      if (listening >= 2) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`the OAuth demo server exited (${code}): ${out}`)));
  });
  return { child, url: `http://localhost:${mcpPort}/mcp` };
}

function filesHolding(dir: string, needle: string): string[] {
  const hits: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) hits.push(...filesHolding(p, needle));
    else if (st.isFile() && readFileSync(p).includes(needle)) hits.push(p);
  }
  return hits;
}

async function removeServers(app: App) {
  const list = await app.call<{ name: string }[]>('ListMCPServers');
  for (const s of list ?? []) await app.call('DeleteMCPServer', s.name);
}

let demo: { child: ChildProcess; url: string } | null = null;
test.beforeEach(async ({ app }) => {
  await removeServers(app);
  demo = await startDemo();
});
test.afterEach(async ({ app }) => {
  await removeServers(app);
  demo?.child.kill('SIGKILL');
  demo = null;
});

test('a remote MCP server that asks for OAuth: needs sign-in, Sign in through the browser, Sign out', async ({ app }) => {
  await app.call('SaveMCPServer', {
    name: 'demo', transport: 'http', command: '', args: [], env: [], cwd: '', url: demo!.url, headers: [],
    enabled: false, allow_read_only: false, sandbox: '', disabled_tools: [], writable_paths: [],
  }, '');
  const page = app.page;
  await page.getByRole('button', { name: 'Settings' }).click();
  const row = page.locator('[data-mcp-server="demo"]');
  await expect(row.locator('[data-mcp-auth]')).toHaveAttribute('data-mcp-auth', 'needs_sign_in');
  await expect(row).toContainText('Needs sign-in');
  await row.getByRole('button', { name: 'Sign in to demo' }).click();
  await expect(row.locator('[data-mcp-auth]')).toHaveAttribute('data-mcp-auth', 'signed_in');
  await expect(row).toContainText('Signed in');
  // The browser went to the authorization server and came back to the app's loopback.
  const log = readFileSync(path.join(process.env.WINDOW_TEST_OUT ?? '../build/window-test', 'browser.log'), 'utf8');
  expect(log).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback\?code=[^ ]+ 200$/m);
  // The server accepts the kept sign-in (read back from the keyring).
  const state = await app.call<{ state: string; reason: string }>('MCPServerAuth', 'demo');
  expect(state).toMatchObject({ state: 'signed_in', reason: '' });
  // The authorization code reached no file of the data folder (the Go test of record,
  // backend/mcp_oauth_e2e_test.go, greps the files for the access token itself).
  const code = /callback\?code=([^& ]+)/.exec(log)![1];
  const dataDir = process.env.TALARIA_DATA_DIR ?? '';
  expect(dataDir, 'scripts/window-test.sh sets TALARIA_DATA_DIR').not.toBe('');
  expect(filesHolding(dataDir, code)).toEqual([]);

  await row.getByRole('button', { name: 'Sign out of demo' }).click();
  await expect(row.locator('[data-mcp-auth]')).toHaveAttribute('data-mcp-auth', 'needs_sign_in');
  await expect(row.getByRole('button', { name: 'Sign in to demo' })).toBeVisible();
});
