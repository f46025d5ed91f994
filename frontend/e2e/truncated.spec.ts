// An answer the model cut at its output limit (finish_reason "length"): the window
// shows what came, a note saying it was cut, and Continue, which asks the model to go on
// with the cut answer in the history (the note itself is never sent).
import { expect, test, text } from './fixtures';

test('a cut answer gets a note with Continue', async ({ app, provider }) => {
  await provider.script({ ...text('The first ', 'half'), finish_reason: 'length' });
  await app.newChat();
  await app.send('write a long essay');
  await expect(app.assistant().last()).toContainText('The first half');
  const note = app.page.locator('[data-truncated="length"]');
  await expect(note).toContainText('output limit');
  await provider.script(text('and the second half.'));
  await note.getByRole('button', { name: 'Continue' }).click();
  await expect(app.assistant().last()).toContainText('and the second half.');
  const streams = await provider.streams();
  expect(streams).toHaveLength(2);
  expect(streams[1].messages.filter((m) => m.role !== 'system').map((m) => `${m.role}:${m.content}`)).toEqual([
    'user:write a long essay',
    'assistant:The first half',
    'user:Continue',
  ]);
  // Only the last answer offers Continue.
  await expect(app.page.locator('[data-truncated] button')).toHaveCount(0);
});
