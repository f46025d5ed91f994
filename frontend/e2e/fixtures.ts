// The fixtures every window test uses (see README.md beside this file).
//
//   import { expect, test, text } from './fixtures';
//   test('an answer streams in', async ({ app, provider }) => {
//     await provider.script(text('Hello ', 'there'));
//     await app.newChat();
//     await app.send('hi');
//     await expect(app.assistant().last()).toContainText('Hello there');
//   });
//
// `app` is a Chromium page on `wails dev`'s address: the real frontend, bound to the
// real Go backend (its own data folder, the real sidecar) over Wails' websocket. The
// backend is configured once to use the scripted provider. `provider` scripts that
// provider's answers for this test (its queue is emptied before and after each test).
import { test as base, expect, type Locator, type Page } from '@playwright/test';

export { expect };

const appURL = need('TALARIA_URL');
const providerURL = need('TALARIA_PROVIDER_URL'); // http://127.0.0.1:PORT/v1
const controlURL = providerURL.replace(/\/v1\/?$/, '') + '/_control/';

function need(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run the window tests with scripts/window-test.sh (make test-window)`);
  return v;
}

// ---- scripting the provider (sidecar/providertest, LoadScript's JSON format) ----------

/** One streamed event of a scripted answer (providertest.Chunk). */
export interface Chunk {
  /** choices[0].delta.content */
  text?: string;
  /** choices[0].delta.reasoning_content (or `reasoning_field`) */
  reasoning?: string;
  reasoning_field?: 'reasoning_content' | 'reasoning';
  tool_calls?: { index: number; id?: string; name?: string; arguments?: string }[];
  usage?: Usage;
  /** Written verbatim instead of an event (it carries its own `data: ` and blank line). */
  raw?: string;
  /** Milliseconds to wait before this chunk (what came before is flushed first). */
  delay_ms?: number;
  /** Hold the stream here until `provider.release(gate)`. */
  gate?: string;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** The answer to one chat-completions request (providertest.Turn). */
export interface Turn {
  /** HTTP status; 400 and above answer `body` (JSON) and stream nothing. */
  status?: number;
  body?: string;
  retry_after?: string;
  header?: Record<string, string>;
  /** Close the connection without answering. */
  drop?: boolean;
  header_delay_ms?: number;
  chunks?: Chunk[];
  /** Keep the stream open after the chunks until the client goes away. */
  hang_after?: boolean;
  /** Cut the connection after the chunks. */
  abort?: boolean;
  /** "" sends "stop" ("tool_calls" when a chunk had calls). */
  finish_reason?: string;
  usage?: Usage;
  omit_done?: boolean;
}

/** A request the provider received (what the backend sent the model). */
export interface ProviderRequest {
  model: string;
  stream: boolean;
  messages: { role: string; content: string; tool_call_id?: string }[];
  tools: string[];
  max_tokens?: number;
  authorization: string;
  body: unknown;
  abandoned: boolean;
  ended: boolean;
}

/** A turn streaming each piece as one token chunk, then finishing with "stop". */
export function text(...pieces: string[]): Turn {
  return { chunks: pieces.map((t) => ({ text: t })) };
}

/** An HTTP error answer with an OpenAI-style body. */
export function httpError(status: number, message: string, type = 'scripted_error'): Turn {
  return { status, body: JSON.stringify({ error: { message, type, code: null } }) };
}

/** A turn calling tools (each call streamed whole: id, name and arguments). */
export function toolCalls(...calls: { id: string; name: string; args: unknown }[]): Turn {
  return {
    chunks: calls.map((c, i) => ({
      tool_calls: [{ index: i, id: c.id, name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args) }],
    })),
    finish_reason: 'tool_calls',
  };
}

export class Provider {
  constructor(private readonly page: Page) {}

  /** The base URL the backend uses (…/v1). */
  readonly url = providerURL;

  private async post(path: string, body?: unknown): Promise<void> {
    const r = await this.page.request.post(controlURL + path, { data: body === undefined ? '' : JSON.stringify(body) });
    if (!r.ok()) throw new Error(`provider ${path}: ${r.status()} ${await r.text()}`);
  }

  /** Queues answers for the next chat streams, in order (then it echoes "You said: …"). */
  script(...turns: Turn[]): Promise<void> {
    return this.post('enqueue', turns);
  }

  /** Queues answers for the next non-streaming requests (session titles). */
  aux(...turns: Turn[]): Promise<void> {
    return this.post('aux', turns);
  }

  /** Lets streams held at `gate` go on. */
  release(gate: string): Promise<void> {
    return this.post('release', { gate });
  }

  /** What GET /v1/models lists. */
  models(...ids: string[]): Promise<void> {
    return this.post('models', ids);
  }

  reset(): Promise<void> {
    return this.post('reset');
  }

  /** Every request received since the test started (streams and titles). */
  async requests(): Promise<ProviderRequest[]> {
    const r = await this.page.request.get(controlURL + 'requests');
    return (await r.json()) as ProviderRequest[];
  }

  /** The chat streams only (title requests left out). */
  async streams(): Promise<ProviderRequest[]> {
    return (await this.requests()).filter((r) => r.stream);
  }
}

// ---- the window ---------------------------------------------------------------------

export class App {
  constructor(readonly page: Page) {}

  /** The message box. */
  get composer(): Locator {
    return this.page.getByLabel('Message', { exact: true });
  }

  /** Saved and live rows of the open chat, by role ("user" or "assistant"). */
  rows(role: 'user' | 'assistant'): Locator {
    return this.page.locator(`.row.${role}`);
  }

  assistant(): Locator {
    return this.rows('assistant');
  }

  /**
   * The answer being streamed (the live bubble) or, once saved, the last assistant row:
   * what the user reads as "the answer". Specs use this rather than classes of their
   * own, so a change of the message list's markup is fixed here once.
   */
  answer(): Locator {
    return this.page.locator('.live, .row.assistant').last();
  }

  /** Starts a new chat (the sidebar's New chat button) and waits for an empty composer. */
  async newChat(): Promise<void> {
    await this.page.getByRole('button', { name: /new chat/i }).first().click();
    // The new chat is open once no row of the previous one is shown (creating it is
    // asynchronous: typing before that would go to the chat that was open).
    await expect(this.page.locator('[data-message-id], .live')).toHaveCount(0);
    await expect(this.composer).toBeEnabled();
  }

  /** Types text into the composer and presses Enter. */
  async send(message: string): Promise<void> {
    await this.composer.fill(message);
    await this.composer.press('Enter');
  }

  /**
   * Calls a bound Go method directly, by name, on whichever service binds it (app.Services;
   * names are unique), e.g. `app.call('ListSessions')`; a Go error rejects with its message.
   */
  call<T = unknown>(method: string, ...args: unknown[]): Promise<T> {
    return this.page.evaluate(
      async ([m, a]) => {
        const w = window as unknown as { go: { app: Record<string, Record<string, (...x: unknown[]) => Promise<unknown>>> } };
        const svc = Object.values(w.go.app).find((s) => typeof s[m as string] === 'function');
        if (!svc) throw new Error(`no bound service has ${m}`);
        return (await svc[m as string](...(a as unknown[]))) as never;
      },
      [method, args] as const,
    ) as Promise<T>;
  }

  /**
   * Calls a bound Go method that should fail and returns what it rejected with, as the
   * window receives it ({code, message, hint, field}: backend.UserError); throws when
   * the call succeeds.
   */
  async callError(method: string, ...args: unknown[]): Promise<Rejection> {
    const r = await this.page.evaluate(
      async ([m, a]) => {
        const w = window as unknown as { go: { app: Record<string, Record<string, (...x: unknown[]) => Promise<unknown>>> } };
        const svc = Object.values(w.go.app).find((s) => typeof s[m as string] === 'function');
        if (!svc) throw new Error(`no bound service has ${m}`);
        try {
          await svc[m as string](...(a as unknown[]));
          return { ok: true as const };
        } catch (e) {
          return { ok: false as const, error: e };
        }
      },
      [method, args] as const,
    );
    if (r.ok) throw new Error(`${method} succeeded`);
    return r.error as Rejection;
  }
}

export interface Rejection {
  code: string;
  message: string;
  hint: string;
  field?: string;
}

/** Opens the window and waits until the frontend is bound to the backend. */
async function openApp(page: Page, ready = true): Promise<App> {
  await page.goto(appURL);
  await page.waitForFunction(() => {
    const w = window as unknown as { go?: { app?: { Chats?: unknown } } };
    return !!w.go?.app?.Chats;
  });
  if (ready) await expect(page.getByLabel('Message', { exact: true })).toBeVisible();
  return new App(page);
}

let configured = false;

export const test = base.extend<{ app: App; provider: Provider }>({
  provider: async ({ page }, use) => {
    const p = new Provider(page);
    await p.reset();
    await use(p);
    await p.reset();
  },
  app: async ({ page, provider }, use) => {
    page.on('pageerror', (e) => console.error('page error:', e.message));
    if (!configured) {
      // Once per run: point the backend at the scripted provider, then reload so the
      // window starts from that state (no first-run screen).
      const first = await openApp(page, false);
      await first.call('SaveSettings', {
        provider_name: 'scripted', base_url: provider.url, model: 'scripted-model', api_key: '', clear_api_key: false,
      });
      configured = true;
    }
    await use(await openApp(page));
  },
});
