// The clipboard, for components deep in the transcript (a code block's Copy): App puts
// the host's copy function in the Svelte context under COPY_CONTEXT.

/** Puts text on the clipboard; resolves whether it did. */
export type CopyText = (text: string) => Promise<boolean>;

export const COPY_CONTEXT = 'talaria.copyText';
