// @vitest-environment jsdom
// The composer: Enter takes the text out of the box at once (typing after it is the next
// message, a second fast Enter is a second message, sent in order), a message not sent
// comes back, and an Enter that confirms an IME composition never sends, in Chromium's
// event order and in WebKitGTK's (compositionend first, then keydown with keyCode 229).
import { fireEvent, render, screen } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { flush } from '../test/fakeApi';
import Composer from './Composer.svelte';

function setup() {
  const replies: ((ok: boolean) => void)[] = [];
  const onsend = vi.fn((_text: string) => new Promise<boolean>((resolve) => replies.push(resolve)));
  render(Composer, { props: { busy: false, onsend, onstop: () => {} } });
  const area = screen.getByLabelText('Message') as HTMLTextAreaElement;
  return { area, onsend, replies };
}

describe('composer', () => {
  it('clears on Enter before the send returns; typing after it and a second fast Enter make the next message', async () => {
    const user = userEvent.setup();
    const { area, onsend, replies } = setup();
    await user.type(area, 'first message{Enter}');
    expect(onsend).toHaveBeenCalledWith('first message');
    expect(area.value).toBe('');
    // Typed while the first is on its way, then Enter at once: a message of its own.
    await user.type(area, 'second{Enter}');
    expect(area.value).toBe('');
    await user.type(area, 'third');
    expect(area.value).toBe('third');
    replies[0](true);
    await flush();
    expect(onsend).toHaveBeenCalledTimes(2);
    expect(onsend.mock.calls[1][0]).toBe('second');
    replies[1](true);
    await flush();
    expect(area.value).toBe('third');
  });

  it('a message that was not sent comes back, before what was typed since', async () => {
    const user = userEvent.setup();
    const { area, replies } = setup();
    await user.type(area, 'lost?{Enter}');
    expect(area.value).toBe('');
    await user.type(area, 'more');
    replies[0](false);
    await flush();
    expect(area.value).toBe('lost?\nmore');
  });

  it('never sends on the Enter that confirms an IME composition (Chromium and WebKitGTK order)', async () => {
    const { area, onsend } = setup();
    await fireEvent.input(area, { target: { value: '日本語' } });
    // Chromium: keydown during the composition.
    await fireEvent.compositionStart(area);
    await fireEvent.keyDown(area, { key: 'Enter', keyCode: 229, isComposing: true });
    await fireEvent.compositionEnd(area, { data: '日本語' });
    // WebKitGTK: compositionend first, then the Enter with keyCode 229 and isComposing false.
    await fireEvent.compositionStart(area);
    await fireEvent.compositionEnd(area, { data: '日本語' });
    await fireEvent.keyDown(area, { key: 'Enter', keyCode: 229 });
    // ... or with the Enter's own keyCode, right after the composition ended.
    await fireEvent.compositionStart(area);
    await fireEvent.compositionEnd(area, { data: '日本語' });
    await fireEvent.keyDown(area, { key: 'Enter', keyCode: 13 });
    expect(onsend).not.toHaveBeenCalled();
    expect(area.value).toBe('日本語');
    // A later Enter is the user's: it sends.
    await new Promise((r) => setTimeout(r, 80));
    await fireEvent.keyDown(area, { key: 'Enter', keyCode: 13 });
    expect(onsend).toHaveBeenCalledWith('日本語');
  });
});
