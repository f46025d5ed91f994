// The harness itself: a message goes through the real backend and sidecar to the
// scripted provider, the answer streams into the window and is saved.
import { expect, test, text } from './fixtures';

test('a scripted answer streams in and is saved', async ({ app, provider }) => {
  await provider.script(text('Hello ', 'from the ', 'scripted provider'));
  await provider.aux(text('Greeting the scripted provider'));
  await app.newChat();
  await app.send('hi there');
  await expect(app.rows('user').last()).toContainText('hi there');
  await expect(app.assistant().last()).toContainText('Hello from the scripted provider');

  const streams = await provider.streams();
  expect(streams).toHaveLength(1);
  expect(streams[0].messages.at(-1)).toMatchObject({ role: 'user', content: 'hi there' });

  const sessions = await app.call<{ id: string; message_count: number }[]>('ListSessions');
  await expect.poll(async () => (await app.call<{ messages: unknown[] }>('GetSession', sessions[0].id)).messages.length).toBe(2);
});
