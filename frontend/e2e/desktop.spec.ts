// The desktop side through the real backend: the About view (build, folders, every
// bundled library with its licence text) and Settings' "Start Talaria at login", which
// writes and removes the real XDG autostart entry (the harness points XDG_CONFIG_HOME
// at a throwaway folder).
import { expect, test } from './fixtures';

test('About shows the build, the folders and the licences of the bundled libraries', async ({ app }) => {
  const page = app.page;
  await page.getByRole('button', { name: 'About', exact: true }).click();
  const about = page.getByRole('dialog', { name: 'About Talaria' });
  await expect(about).toBeVisible();
  const info = await app.call<{ version: string; paths: { log_dir: string }; libraries: unknown[] }>('GetAbout');
  await expect(about.locator('dl.build')).toContainText(info.version);
  await expect(about).toContainText(info.paths.log_dir);
  expect(info.libraries.length).toBeGreaterThan(40);
  await expect(about.getByText(`Third-party software (${info.libraries.length})`)).toBeVisible();

  await about.getByRole('list', { name: 'npm packages (the window)' }).getByRole('button', { name: /dompurify/ }).click();
  await expect(about.getByLabel('Licence of dompurify')).toContainText('Apache License');
  await about.getByRole('list', { name: 'Go modules' }).getByRole('button', { name: /github\.com\/wailsapp\/wails\/v2 / }).click();
  await expect(about.getByLabel('Licence of github.com/wailsapp/wails/v2')).toContainText('MIT License');
  // Talaria's own licence (LICENSE, embedded in the build) beside the libraries'.
  await expect(about.locator('dl.build')).toContainText('MIT');
  await about.locator('dl.build').getByRole('button', { name: 'Show' }).click();
  await expect(about.getByLabel('Licence of Talaria Desktop')).toContainText('The Talaria Desktop authors');
  await page.screenshot({ path: '../build/window-test/about.png' });
  await about.getByRole('button', { name: 'Close' }).click();
  await expect(about).toBeHidden();
});

test('Start Talaria at login writes and removes the login entry', async ({ app }) => {
  const page = app.page;
  await page.getByRole('button', { name: 'Settings' }).click();
  const box = page.getByRole('checkbox', { name: 'Start Talaria at login, in the system tray' });
  await expect(box).toBeEnabled();
  await expect(box).not.toBeChecked();
  await box.check();
  await expect(box).toBeChecked();
  const on = await app.call<{ enabled: boolean; where: string; command: string }>('GetAutostart');
  expect(on.enabled).toBe(true);
  expect(on.where).toMatch(/\/config\/autostart\/talaria\.desktop$/);
  expect(on.command).toContain('--hidden');
  await page.getByText('Start-up').scrollIntoViewIfNeeded();
  await page.screenshot({ path: '../build/window-test/settings-start-at-login.png' });

  await box.uncheck();
  await expect(box).not.toBeChecked();
  expect((await app.call<{ enabled: boolean }>('GetAutostart')).enabled).toBe(false);
});
