// @vitest-environment jsdom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { dropFirstScreen, firstScreenShown, watchFirstScreen, FIRST_SCREEN_ID, QUIET_MS } from './firstscreen';

describe('watchFirstScreen', () => {
  let root: HTMLElement;
  beforeEach(() => {
    vi.useFakeTimers();
    root = document.createElement('div');
    root.id = 'app';
    root.innerHTML = '<div class="scroller" data-first-screen-scroll="end"><p>row 1</p></div>';
    document.body.append(root);
  });
  afterEach(() => {
    vi.useRealTimers();
    document.body.innerHTML = '';
  });

  async function quiet() {
    await Promise.resolve(); // the MutationObserver's records
    await vi.advanceTimersByTimeAsync(QUIET_MS + 1);
  }

  it('takes a picture once the window has been quiet, of the chat that opens first, not twice the same', async () => {
    const save = vi.fn((_id: string, _width: number, _page: string) => Promise.resolve());
    const stop = watchFirstScreen(root, { ready: () => 's1', save });
    await quiet();
    expect(save).toHaveBeenCalledTimes(1);
    expect(save.mock.calls[0]).toEqual(['s1', window.innerWidth, root.innerHTML]);
    // A change, then quiet: a new picture; a change undone: the same picture, not sent.
    root.querySelector('p')!.textContent = 'row 1, edited';
    await quiet();
    expect(save).toHaveBeenCalledTimes(2);
    expect(save.mock.calls[1][2]).toContain('row 1, edited');
    root.setAttribute('data-x', '1');
    root.removeAttribute('data-x');
    await quiet();
    expect(save).toHaveBeenCalledTimes(2);
    stop();
    root.querySelector('p')!.textContent = 'after stop';
    await quiet();
    expect(save).toHaveBeenCalledTimes(2);
  });

  it('takes no new picture when only a clock label changed ("just now" to "1 min ago")', async () => {
    root.innerHTML = '<div class="scroller" data-first-screen-scroll="end"><p>row 1 <span data-clock>just now</span></p></div>';
    const save = vi.fn((_id: string, _width: number, _page: string) => Promise.resolve());
    const stop = watchFirstScreen(root, { ready: () => 's1', save });
    await quiet();
    expect(save).toHaveBeenCalledTimes(1);
    const clock = root.querySelector('[data-clock]')!;
    clock.firstChild!.nodeValue = '1 min ago'; // as Svelte rewrites a text
    await quiet();
    clock.textContent = '2 min ago'; // a child list change inside the label
    await quiet();
    expect(save).toHaveBeenCalledTimes(1);
    // A change beside it is taken, with the label as it reads now.
    root.querySelector('p')!.append(' edited');
    await quiet();
    expect(save).toHaveBeenCalledTimes(2);
    expect(save.mock.calls[1][2]).toContain('2 min ago');
    stop();
  });

  it("takes the empty chat of a data folder without chats (ready gives '')", async () => {
    const save = vi.fn((_id: string, _width: number, _page: string) => Promise.resolve());
    const stop = watchFirstScreen(root, { ready: () => '', save });
    await quiet();
    expect(save).toHaveBeenCalledTimes(1);
    expect(save.mock.calls[0][0]).toBe('');
    stop();
  });

  it('takes none while changes keep coming, nor while the chat is not the first or something is over it', async () => {
    const save = vi.fn((_id: string, _width: number, _page: string) => Promise.resolve());
    let id: string | null = null;
    watchFirstScreen(root, { ready: () => id, save });
    // Streaming: a change every 100 ms never leaves the window quiet.
    for (let i = 0; i < 40; i++) {
      root.querySelector('p')!.textContent = `token ${i}`;
      await Promise.resolve();
      await vi.advanceTimersByTimeAsync(100);
    }
    id = 's1';
    await quiet();
    expect(save).toHaveBeenCalledTimes(1); // the first quiet moment
    const dialog = document.createElement('dialog');
    dialog.setAttribute('open', '');
    root.append(dialog);
    await quiet();
    dialog.removeAttribute('open'); // a closed dialog is not over anything
    root.querySelector('p')!.textContent = 'changed with the dialog closed';
    await quiet();
    expect(save).toHaveBeenCalledTimes(2);
    id = null;
    root.querySelector('p')!.textContent = 'another chat';
    await quiet();
    expect(save).toHaveBeenCalledTimes(2);
  });

  it('takes none while the page still shows its picture; a failed save is tried again at the next quiet moment', async () => {
    const shot = document.createElement('div');
    shot.id = FIRST_SCREEN_ID;
    document.body.prepend(shot);
    let fail = true;
    const save = vi.fn((_id: string, _width: number, _page: string) => (fail ? Promise.reject(new Error('disk full')) : Promise.resolve()));
    watchFirstScreen(root, { ready: () => 's1', save });
    await quiet();
    expect(save).not.toHaveBeenCalled();
    expect(firstScreenShown()).toBe(true);
    expect(dropFirstScreen()).toBeNull(); // jsdom paints nothing: no paint time
    expect(firstScreenShown()).toBe(false);
    root.append(document.createElement('span'));
    await quiet();
    expect(save).toHaveBeenCalledTimes(1);
    fail = false;
    root.lastElementChild!.remove();
    root.append(document.createElement('span')); // the same page as the failed one
    await quiet();
    expect(save).toHaveBeenCalledTimes(2);
  });
});
