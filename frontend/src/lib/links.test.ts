// @vitest-environment jsdom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { installLinkGuard, isSafeExternalUrl } from './links';

describe('isSafeExternalUrl', () => {
  it.each([
    ['https://example.com', true],
    ['http://127.0.0.1:11434/v1', true],
    ['mailto:me@example.com', true],
    ['  https://example.com  ', true],
    ['javascript:alert(1)', false],
    ['JAVASCRIPT:alert(1)', false],
    ['data:text/html,hi', false],
    ['file:///etc/passwd', false],
    ['/relative/path', false],
    ['#anchor', false],
    ['', false],
    [null, false],
  ])('%s → %s', (href, ok) => {
    expect(isSafeExternalUrl(href as string | null)).toBe(ok);
  });
});

describe('installLinkGuard', () => {
  let uninstall: (() => void) | null = null;
  afterEach(() => {
    uninstall?.();
    document.body.innerHTML = '';
  });

  function click(el: Element, init: MouseEventInit = {}, type = 'click'): MouseEvent {
    const ev = new MouseEvent(type, { bubbles: true, cancelable: true, ...init });
    el.dispatchEvent(ev);
    return ev;
  }

  it('opens safe links in the system browser and never navigates', () => {
    const open = vi.fn();
    uninstall = installLinkGuard(document, open);
    document.body.innerHTML = '<div class="md"><a href="https://example.com/x"><strong>docs</strong></a></div>';
    const ev = click(document.querySelector('strong')!);
    expect(ev.defaultPrevented).toBe(true);
    expect(open).toHaveBeenCalledWith('https://example.com/x');
  });

  it('stops unsafe and relative links without opening anything', () => {
    const open = vi.fn();
    uninstall = installLinkGuard(document, open);
    document.body.innerHTML = '<a id="a" href="javascript:alert(1)">x</a><a id="b" href="/local">y</a><a id="c">z</a>';
    for (const id of ['a', 'b', 'c']) expect(click(document.getElementById(id)!).defaultPrevented).toBe(true);
    expect(open).not.toHaveBeenCalled();
  });

  it('handles middle clicks and leaves other clicks alone', () => {
    const open = vi.fn();
    uninstall = installLinkGuard(document, open);
    document.body.innerHTML = '<a href="https://e.example">x</a><button>b</button>';
    expect(click(document.querySelector('a')!, { button: 1 }, 'auxclick').defaultPrevented).toBe(true);
    expect(open).toHaveBeenCalledTimes(1);
    expect(click(document.querySelector('button')!).defaultPrevented).toBe(false);
  });

  it('uninstalls cleanly', () => {
    const open = vi.fn();
    installLinkGuard(document, open)();
    document.body.innerHTML = '<a href="https://e.example">x</a>';
    // Record what the guard did, then stop jsdom from trying to navigate.
    let prevented: boolean | null = null;
    const probe = (ev: Event) => {
      prevented = ev.defaultPrevented;
      ev.preventDefault();
    };
    document.addEventListener('click', probe);
    click(document.querySelector('a')!);
    document.removeEventListener('click', probe);
    expect(prevented).toBe(false);
    expect(open).not.toHaveBeenCalled();
  });
});
