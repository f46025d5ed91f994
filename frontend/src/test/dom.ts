import { waitFor } from '@testing-library/svelte';

/** Waits until `selector` matches an element (dialogs are mounted when first opened). */
export async function findElement<T extends Element = HTMLElement>(selector: string): Promise<T> {
  return waitFor(() => {
    const el = document.querySelector<T>(selector);
    if (!el) throw new Error(`no element matches ${selector}`);
    return el;
  });
}
