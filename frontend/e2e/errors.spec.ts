// Errors across the real window boundary: every bound method rejects with a stable
// code (backend.UserError through Wails' ErrorFormatter), and the window decides on it.
import { expect, test, text } from './fixtures';

test('bound methods reject with {code, message, hint}', async ({ app }) => {
  const missing = await app.callError('GetSession', '00000000-0000-7000-8000-000000000000');
  expect(missing).toMatchObject({ code: 'not_found' });
  expect(missing.message).not.toBe('');

  const link = await app.callError('OpenURL', 'javascript:alert(1)');
  expect(link).toMatchObject({ code: 'invalid', message: 'only web and mail links can be opened' });

  const settings = await app.callError('SaveSettings', {
    provider_name: 'scripted', base_url: 'not a url', model: 'm', workspace: '', api_key: '', clear_api_key: false,
  });
  expect(settings).toMatchObject({ code: 'invalid', field: 'base_url' });
});

test('a second turn while one runs is refused as busy, with what to do', async ({ app, provider }) => {
  await provider.script({ chunks: [{ text: 'Working on it' }, { text: ' and done.', gate: 'g1' }] }, text('Read your note.'));
  await provider.aux(text('Something long'));
  await app.newChat();
  await app.send('start something long');
  await expect(app.answer()).toContainText('Working on it');
  const sessions = await app.call<{ id: string; active_stream_id: string }[]>('ListSessions');
  const running = sessions.find((s) => s.active_stream_id !== '');
  expect(running).toBeDefined();
  const busy = await app.callError('StartTurn', running!.id, 'another one');
  expect(busy).toMatchObject({ code: 'busy' });
  expect(busy.hint).toContain('Stop');
  await provider.release('g1');
  await expect(app.answer()).toContainText('and done.');
});
