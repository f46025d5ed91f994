// A remote host in the real window: a real OpenSSH server on a loopback port (each
// connection served by `sshd -i`, its logins' HOME a folder of this test's own), added
// in Settings with its port and Tested (what it has; the sidecar is copied there), then
// a chat moved to "Built-in on loop" answers from the sidecar running there. The app's
// ssh reads TALARIA_SSH_CONFIG (scripts/window-test.sh), which this test writes: the
// server's host key and the test's client key, never ~/.ssh.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { expect, test, text, type App } from './fixtures';
import { HERMES_PYTHON, writeHermesHome } from './hermes';
import { AGENT_WAIT_MS } from './wait';

type Sshd = { port: number; home: string; drop: () => void; close: () => Promise<void> };

async function startSshd(): Promise<Sshd> {
  const sshd = '/usr/sbin/sshd';
  if (!existsSync(sshd)) throw new Error('sshd is not installed: run make setup (it installs openssh-server)');
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'talaria-window-ssh-')));
  const home = join(dir, 'home');
  mkdirSync(home, { mode: 0o700 });
  const keygen = (f: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'talaria-window-test', '-f', f]);
  keygen(join(dir, 'host'));
  keygen(join(dir, 'id'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'id.pub')), { mode: 0o600 });
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const user = userInfo().username;
  writeFileSync(join(dir, 'sshd_config'), [
    `HostKey ${dir}/host`, `AuthorizedKeysFile ${dir}/authorized_keys`, 'StrictModes no', 'UsePAM no',
    'PasswordAuthentication no', 'KbdInteractiveAuthentication no', 'PubkeyAuthentication yes', `AllowUsers ${user}`,
    'PermitRootLogin prohibit-password', 'AllowTcpForwarding no', 'X11Forwarding no', 'PrintMotd no',
    `ForceCommand HOME=${home}; export HOME; cd "$HOME" || exit 1; exec /bin/sh -c "$SSH_ORIGINAL_COMMAND"`, '',
  ].join('\n'), { mode: 0o600 });
  const children = new Set<ChildProcess>();
  const server = net.createServer((sock) => {
    // sshd -i serves one connection on its stdin and stdout: the socket itself.
    const child = spawn(sshd, ['-i', '-e', '-f', join(dir, 'sshd_config')], { stdio: [sock, sock, 'ignore'] });
    children.add(child);
    child.on('exit', () => {
      children.delete(child);
      sock.destroy();
    });
    sock.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const hostKey = readFileSync(join(dir, 'host.pub'), 'utf8').split(' ');
  writeFileSync(join(dir, 'known_hosts'), `[127.0.0.1]:${port} ${hostKey[0]} ${hostKey[1]}\n`);
  const config = process.env.TALARIA_SSH_CONFIG;
  if (!config) throw new Error('TALARIA_SSH_CONFIG is not set: run this spec through scripts/window-test.sh');
  writeFileSync(config, [
    'Host *', `  UserKnownHostsFile ${dir}/known_hosts`, '  GlobalKnownHostsFile /dev/null', '  StrictHostKeyChecking yes',
    `  IdentityFile ${dir}/id`, '  IdentitiesOnly yes', '  LogLevel ERROR', '',
  ].join('\n'));
  return {
    port, home,
    // The connections drop (laptop sleep, Wi-Fi): their sshd processes are killed.
    drop: () => {
      for (const c of children) c.kill('SIGKILL');
    },
    close: async () => {
      for (const c of children) c.kill('SIGKILL');
      killLoginProcesses(home);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// killLoginProcesses kills what the logins left running (a sidecar daemon outlives its
// connection, sidecar/link): the processes whose HOME is the test's.
function killLoginProcesses(home: string) {
  for (const pid of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`HOME=${home}`)) process.kill(Number(pid), 'SIGKILL');
    } catch {
      // gone already, or not ours
    }
  }
}

test('a chat runs on a remote host added in Settings, through ssh', async ({ app, provider }) => {
  test.slow(); // Test copies the app's binary to the host
  const sshd = await startSshd();
  try {
    const page = app.page;
    const section = await addHost(app, sshd.port);
    const host = section.locator('[data-host="loop"]');
    await expect(host.locator('[data-probe]')).toContainText('Linux', { timeout: AGENT_WAIT_MS });
    await expect(host.locator('code')).toHaveText(`ssh -p ${sshd.port} ${userInfo().username}@127.0.0.1`);
    if (process.env.WINDOW_TEST_OUT) await page.screenshot({ path: join(process.env.WINDOW_TEST_OUT, 'remote-hosts.png') });
    await page.keyboard.press('Escape');

    await app.newChat();
    await page.getByLabel('Runtime of this chat').selectOption('ssh:loop');
    await provider.script(text('Hello from the host.'));
    await app.send('where do you run?');
    await expect(app.assistant().last()).toContainText('Hello from the host.', { timeout: AGENT_WAIT_MS });
    await expect(page.getByTestId('workspace')).toHaveText('loop:~/Talaria');
    // The sidecar that answered runs from the copy Test made on the host.
    expect(existsSync(join(sshd.home, '.cache', 'talaria'))).toBe(true);
    expect(existsSync(join(sshd.home, 'Talaria'))).toBe(true);
    if (process.env.WINDOW_TEST_OUT) await page.screenshot({ path: join(process.env.WINDOW_TEST_OUT, 'remote-chat.png') });
  } finally {
    // The specs after this one share the data folder: the host goes with the test.
    await removeHost(app);
    await sshd.close();
  }
});

// The real Hermes 0.19.0 on the host (scripts/hermes-setup.sh's, named in the host's
// "Hermes Agent there"), its ~/.hermes there pointed at the scripted provider: a chat
// on "Hermes Agent on loop" answers from it; the connection drops in the middle of an
// answer, the turn goes on there, and the whole answer is shown once after the reconnect.
test('a Hermes chat on a remote host survives a dropped connection', async ({ app, provider }) => {
  test.slow(); // Test copies the app's binary; Hermes's Python starts there
  const sshd = await startSshd();
  const python = HERMES_PYTHON;
  const hermesHome = join(sshd.home, '.hermes');
  mkdirSync(hermesHome, { mode: 0o700 });
  writeHermesHome(hermesHome);
  try {
    const page = app.page;
    const section = await addHost(app, sshd.port, python);
    const host = section.locator('[data-host="loop"]');
    await expect(host.locator('[data-probe]')).toContainText('Hermes Agent 0.19.0', { timeout: AGENT_WAIT_MS });
    await page.keyboard.press('Escape');

    await app.newChat();
    const picker = page.getByLabel('Runtime of this chat');
    await expect(picker.locator('option', { hasText: 'Hermes Agent on loop' })).toBeEnabled({ timeout: AGENT_WAIT_MS });
    await picker.selectOption({ label: 'Hermes Agent on loop' });
    await provider.script({ chunks: [{ text: 'Before the drop, ' }, { text: 'after the reconnect.', gate: 'drop' }] });
    await app.send('a long one');
    await expect(app.answer()).toContainText('Before the drop, ', { timeout: AGENT_WAIT_MS });
    sshd.drop();
    await provider.release('drop');
    await expect(app.assistant().last().locator('p')).toHaveText('Before the drop, after the reconnect.', { timeout: AGENT_WAIT_MS });
    await expect(app.assistant()).toHaveCount(1);
    await expect(page.locator('.chat').getByText(/Before the drop/)).toHaveCount(1);
    if (process.env.WINDOW_TEST_OUT) await page.screenshot({ path: join(process.env.WINDOW_TEST_OUT, 'remote-hermes-reconnected.png') });
  } finally {
    await removeHost(app);
    await sshd.close();
  }
});

// addHost adds the host "loop" (this machine through the spec's sshd on port, and the
// Hermes there when given) in Settings, Remote hosts, with "Add and test"; it returns
// that section.
async function addHost(app: App, port: number, hermes = '') {
  const page = app.page;
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const section = page.locator('fieldset.remotes');
  await section.getByRole('button', { name: 'Add a host…' }).click();
  await section.getByRole('textbox', { name: 'Name' }).fill('loop');
  await section.getByRole('textbox', { name: 'Target' }).fill(`${userInfo().username}@127.0.0.1`);
  await section.getByRole('textbox', { name: 'Port' }).fill(String(port));
  if (hermes) await section.getByRole('textbox', { name: 'Hermes Agent there' }).fill(hermes);
  await section.getByRole('button', { name: 'Add and test' }).click();
  return section;
}

async function removeHost(app: App) {
  await app.page.evaluate(async () => {
    const w = window as unknown as { go: { app: { Remotes: { DeleteRemoteHost: (n: string) => Promise<void> } } } };
    await w.go.app.Remotes.DeleteRemoteHost('loop');
  });
}
