// The first chat in one step (issue 26, item 8): with a local OpenAI-compatible server
// answering but no model chosen, the first screen offers the server's models; choosing
// one saves it as Settings would, and the first message is answered at once.
import { expect, test, text } from './fixtures';

test('the first screen offers the models of a server that answers, and the first message gets its answer', async ({ app, provider }) => {
  const page = app.page;
  const settings = { provider_name: 'scripted', base_url: provider.url, api_key: '', clear_api_key: false, workspace: '' };
  // An empty chat is the one the window opens after the reload: an earlier test's long
  // chat, scrolled up, kept the new answer out of the rows drawn.
  await app.newChat();
  await provider.models('scripted-model', 'local-llama');
  await app.call('SaveSettings', { ...settings, model: '' });
  try {
    await page.reload();
    await expect(page.getByRole('heading', { name: 'Choose a model to start' })).toBeVisible();
    const picker = page.getByLabel('Model', { exact: true });
    await expect(picker.locator('option')).toHaveText(['local-llama', 'scripted-model']);
    await expect(page.getByText(/none is chosen/)).toHaveCount(0);
    await picker.selectOption('local-llama');
    await page.getByRole('button', { name: 'Start chatting' }).click();

    // The first screen gives way to the chat; the model is saved as Settings saves it.
    await expect(page.getByRole('heading', { name: 'Choose a model to start' })).toHaveCount(0);
    await expect(app.composer).toBeEnabled();
    expect(await app.call<{ model: string; base_url: string }>('GetSettings')).toMatchObject({ model: 'local-llama', base_url: provider.url });

    await provider.script(text('Hello from ', 'the local server.'));
    await app.send('my first message');
    await expect(app.answer()).toContainText('Hello from the local server.');
    const streams = await provider.streams();
    expect(streams).toHaveLength(1);
    expect(streams[0].model).toBe('local-llama');
    expect(streams[0].messages.at(-1)?.content).toBe('my first message');
  } finally {
    // Later tests run with the run's configuration.
    await provider.models('scripted-model');
    await app.call('SaveSettings', { ...settings, model: 'scripted-model' });
  }
});
