// A remote host in the real window: a real OpenSSH server on a loopback port (each
// connection served by `sshd -i`, its logins' HOME a folder of this test's own), added
// in Settings with its port and Tested (what it has; the sidecar is copied there), then
// a chat moved to "Built-in on loop" answers from the sidecar running there. The app's
// ssh reads TALARIA_SSH_CONFIG (scripts/window-test.sh), which this test writes: the
// server's host key and the test's client key, never ~/.ssh.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { expect, test, text } from './fixtures';
import { AGENT_WAIT_MS } from './wait';

type Sshd = { port: number; home: string; close: () => Promise<void> };

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
    close: async () => {
      for (const c of children) c.kill('SIGKILL');
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('a chat runs on a remote host added in Settings, through ssh', async ({ app, provider }) => {
  test.slow(); // Test copies the app's binary to the host
  const sshd = await startSshd();
  try {
    const page = app.page;
    await page.getByRole('button', { name: 'Settings', exact: true }).click();
    const section = page.locator('fieldset.remotes');
    await section.getByRole('button', { name: 'Add a host…' }).click();
    await section.getByRole('textbox', { name: 'Name' }).fill('loop');
    await section.getByRole('textbox', { name: 'Target' }).fill(`${userInfo().username}@127.0.0.1`);
    await section.getByRole('textbox', { name: 'Port' }).fill(String(sshd.port));
    await section.getByRole('button', { name: 'Add and test' }).click();
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
    await app.page.evaluate(async () => {
      const w = window as unknown as { go: { app: { Remotes: { DeleteRemoteHost: (n: string) => Promise<void> } } } };
      await w.go.app.Remotes.DeleteRemoteHost('loop');
    });
    await sshd.close();
  }
});
