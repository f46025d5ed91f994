// A Svelte action that moves an element to the end of document.body while it lives:
// a dialog opened from inside another dialog's form then has its own form, and Enter
// in its fields never submits the outer one.
export function portal(node: HTMLElement): { destroy(): void } {
  document.body.appendChild(node);
  return {
    destroy() {
      node.remove();
    },
  };
}
