// @vitest-environment jsdom
// The composer: Enter takes the text out of the box at once (typing after it is the next
// message, a second fast Enter is a second message, sent in order), a message not sent
// comes back, and an Enter that confirms an IME composition never sends, in Chromium's
// event order and in WebKitGTK's (compositionend first, then keydown with keyCode 229).
import { createEvent, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { drained } from '../test/until';
import Composer from './Composer.svelte';

/**
 * Fires an event made by `make` that happened at `ms` (its timeStamp): the composer tells
 * an IME's Enter from the user's by the time since the composition ended, and the test
 * says that time instead of waiting for it.
 */
async function at(ms: number, el: HTMLElement, make: (el: HTMLElement) => Event) {
  const ev = make(el);
  Object.defineProperty(ev, 'timeStamp', { value: ms });
  await fireEvent(el, ev);
}

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
    await waitFor(() => expect(onsend).toHaveBeenCalledTimes(2));
    expect(onsend.mock.calls[1][0]).toBe('second');
    replies[1](true);
    // What the answer leads to (nothing here) runs within the microtasks.
    await drained();
    expect(area.value).toBe('third');
  });

  it('a message that was not sent comes back, before what was typed since', async () => {
    const user = userEvent.setup();
    const { area, replies } = setup();
    await user.type(area, 'lost?{Enter}');
    expect(area.value).toBe('');
    await user.type(area, 'more');
    replies[0](false);
    await waitFor(() => expect(area.value).toBe('lost?\nmore'));
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
    await at(1000, area, (el) => createEvent.compositionEnd(el, { data: '日本語' }));
    await at(1001, area, (el) => createEvent.keyDown(el, { key: 'Enter', keyCode: 229 }));
    // ... or with the Enter's own keyCode, right after the composition ended (10 ms).
    await fireEvent.compositionStart(area);
    await at(2000, area, (el) => createEvent.compositionEnd(el, { data: '日本語' }));
    await at(2010, area, (el) => createEvent.keyDown(el, { key: 'Enter', keyCode: 13 }));
    expect(onsend).not.toHaveBeenCalled();
    expect(area.value).toBe('日本語');
    // A later Enter (80 ms after) is the user's: it sends.
    await at(2080, area, (el) => createEvent.keyDown(el, { key: 'Enter', keyCode: 13 }));
    expect(onsend).toHaveBeenCalledWith('日本語');
  });
});
