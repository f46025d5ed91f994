// @vitest-environment jsdom
// Live turns through App with a fake backend: steering while a turn runs (queued
// rows with Edit, Cancel and Send now; a consumed steer as a user bubble between the
// texts around it), Stop keeping the partial answer, unsent steers back in the
// composer, the run footer and the status bar.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import App from '../App.svelte';
import { initialStreamState, reduceAll } from '../lib/reducer';
import { SILENT_MS } from '../lib/stream.svelte';
import { fakeApi, frame, message, session, usage0 } from '../test/fakeApi';
import LiveBubble from './LiveBubble.svelte';
import StatusBar from './StatusBar.svelte';
import TurnFooter from './TurnFooter.svelte';

afterEach(() => {
  vi.useRealTimers();
});

async function busyApp() {
  const f = fakeApi();
  f.sessions.set('s', session('s', 1, { active_stream_id: 'st' }));
  f.transcripts.set('s', [message('u1', 'user', 'Refactor the parser', { stream_id: 'st' })]);
  f.journals.set('st', [
    frame('s', 'st', 1, 'run_status', { status: 'working' }),
    frame('s', 'st', 2, 'token', { text: 'Looking at the parser.' }),
  ]);
  const r = render(App, { backend: f.api, armDelayMs: 0 });
  // Up: the busy chat is open, its stream replayed and the host's cards read.
  await waitFor(() => {
    expect(screen.getByText('Looking at the parser.')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    expect(f.api.getPending).toHaveBeenCalledWith('s');
  });
  const composer = screen.getByLabelText('Message') as HTMLTextAreaElement;
  return { f, r, composer };
}

const queue = () => screen.queryByRole('region', { name: 'Queued messages' });

describe('steering through the window', () => {
  it('Enter while the agent works queues the text; the row offers Edit, Cancel and Send now', async () => {
    const user = userEvent.setup();
    const { f, composer } = await busyApp();
    expect(composer.disabled).toBe(false);
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    await user.type(composer, 'use the new API{Enter}');
    await waitFor(() => {
      expect(f.api.steer).toHaveBeenCalledWith('s', 'use the new API');
      expect(composer.value).toBe('');
      expect(queue()).not.toBeNull();
    });
    const row = within(queue()!).getByText('use the new API').closest('li')!;
    expect(within(row).getByText('queued')).toBeTruthy();
    await user.click(within(row).getByRole('button', { name: /^Send now/ }));
    await waitFor(() => expect(f.api.steerNow).toHaveBeenCalledWith('s', 'steer1'));
    await user.click(within(row).getByRole('button', { name: /^Edit/ }));
    await waitFor(() => {
      expect(f.api.withdrawSteer).toHaveBeenCalledWith('s', 'steer1');
      expect(composer.value).toBe('use the new API');
      expect(queue()).toBeNull();
      expect(document.activeElement).toBe(composer);
    });
  });

  it('Cancel drops a queued message without touching the composer', async () => {
    const user = userEvent.setup();
    const { f, composer } = await busyApp();
    await user.type(composer, 'drop me{Enter}');
    await waitFor(() => expect(queue()).not.toBeNull());
    await user.type(composer, 'still typing');
    await user.click(within(queue()!).getByRole('button', { name: /^Cancel/ }));
    await waitFor(() => {
      expect(f.api.withdrawSteer).toHaveBeenCalledWith('s', 'steer1');
      expect(queue()).toBeNull();
    });
    expect(composer.value).toBe('still typing');
  });

  it('the queue follows steer_queue frames from any window', async () => {
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 3, 'steer_queue', { steers: [{ id: 'x1', text: 'from the other window', created_at: 1 }] }));
    await waitFor(() => expect(queue()).not.toBeNull());
    expect(within(queue()!).getByText('from the other window')).toBeTruthy();
    f.emit(frame('s', 'st', 4, 'steer_withdrawn', { id: 'x1' }));
    await waitFor(() => expect(queue()).toBeNull());
  });

  it('a consumed steer is a user bubble between the assistant text before and after it', async () => {
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 3, 'steer_queue', { steers: [{ id: 'x1', text: 'use the new API', created_at: 1 }] }));
    f.emit(frame('s', 'st', 4, 'steer_consumed', { id: 'x1', text: 'use the new API' }));
    f.emit(frame('s', 'st', 5, 'steer_queue', { steers: [] }));
    f.emit(frame('s', 'st', 6, 'token', { text: 'Switching to the new API.' }));
    await waitFor(() => expect(screen.getByText('Switching to the new API.')).toBeTruthy());
    const before = screen.getByText('Looking at the parser.');
    const steer = document.querySelector('[data-steer]') as HTMLElement;
    const after = screen.getByText('Switching to the new API.');
    expect(steer.textContent).toContain('use the new API');
    expect(before.compareDocumentPosition(steer) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(steer.compareDocumentPosition(after) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(queue()).toBeNull();
  });

  it('Stop keeps the partial answer and finished tools with the stopped marker; unsent steers come back', async () => {
    const user = userEvent.setup();
    const { f, composer } = await busyApp();
    f.emit(frame('s', 'st', 3, 'tool', { tid: 't1', name: 'terminal', args: { command: 'ls' }, key_arg: 'ls' }));
    f.emit(frame('s', 'st', 4, 'tool_complete', { tid: 't1', name: 'terminal', preview: 'a.go' }));
    await user.click(screen.getByRole('button', { name: 'Stop' }));
    await waitFor(() => expect(f.api.cancel).toHaveBeenCalledWith('st'));
    f.emit(frame('s', 'st', 5, 'cancel', { partial: true, unsent_steers: ['and the tests'] }));
    await waitFor(() => expect(screen.getByText('Stopped')).toBeTruthy());
    expect(screen.getByText('Looking at the parser.')).toBeTruthy();
    expect(screen.getByText('ls')).toBeTruthy();
    await waitFor(() => {
      expect(composer.value).toBe('and the tests');
      expect(f.api.saveDraft).toHaveBeenCalledWith('s', 'and the tests');
    });
  });

  it('shows the run status in the status bar and the figures under the turn', async () => {
    // The countdown reads the clock: it stands still here, so it shows 12 s however long
    // the machine takes to draw it.
    vi.useFakeTimers({ toFake: ['Date'] });
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 3, 'metering', { usage: { ...usage0, input_tokens: 2400, output_tokens: 180, cache_read_tokens: 1000, estimated_cost: 0.0123 }, tps: 31.5, estimated: true }));
    f.emit(frame('s', 'st', 4, 'run_status', { status: 'rate_limit_wait', until: Date.now() + 12_000, provider: 'openrouter' }));
    await waitFor(() => expect(screen.getByText("Waiting for openrouter's rate limit, 12 s")).toBeTruthy());
    expect(document.querySelector('[data-turn-footer]')!.textContent).toContain('2.4k in · ~180 out · 1k cached · $0.01 · 32 tok/s');
    f.emit(frame('s', 'st', 5, 'warning', { type: 'retry', message: 'Retrying after a 503 (attempt 2)' }));
    await waitFor(() => expect(screen.getByText('Retrying after a 503 (attempt 2)')).toBeTruthy());
  });
});

describe('a save failure', () => {
  it('keeps the streamed text on screen after the terminal frame, with the banner', async () => {
    const { f } = await busyApp();
    f.emit(frame('s', 'st', 3, 'token', { text: ' Precious words.' }));
    f.emit(frame('s', 'st', 4, 'apperror', {
      type: 'error', label: 'Could not save the answer', message: 'database or disk is full',
      hint: 'The answer is still on screen; copy what you need.',
    }));
    f.sessions.get('s')!.active_stream_id = '';
    f.emit(frame('s', 'st', 5, 'stream_end'));
    await waitFor(() => expect(f.api.getTranscriptFrom).toHaveBeenCalledTimes(1));
    const kept = await screen.findByText('Looking at the parser. Precious words.');
    expect(document.querySelector('[aria-busy="true"]')).toBeNull();
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('Could not save the answer');
    expect(alert.textContent).toContain('database or disk is full');
    // It stays after its question.
    const q = screen.getByText('Refactor the parser');
    expect(q.compareDocumentPosition(kept) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Send' })).toBeTruthy();
  });
});

describe('LiveBubble, TurnFooter, StatusBar', () => {
  const ST = 'st';
  const f = (seq: number, event: string, data: unknown) => frame('s', ST, seq, event, data);

  it('renders a stream that ends with a steer with the typing dots after it', async () => {
    const s = reduceAll(initialStreamState(ST, 's'), [
      f(1, 'token', { text: 'Before' }),
      f(2, 'steer_consumed', { id: 'a', text: 'Now this' }),
    ]);
    render(LiveBubble, { stream: s });
    expect(await screen.findByText('Before')).toBeTruthy();
    expect(screen.getByText('Now this')).toBeTruthy();
    expect(screen.getByLabelText('The agent is answering')).toBeTruthy();
  });

  it('says so when the agent sends nothing for SILENT_MS while its answer is awaited', async () => {
    vi.useFakeTimers();
    const silentNote = () => screen.queryByText(/Nothing from the agent for 30 s/);
    const s1 = reduceAll(initialStreamState(ST, 's'), [f(1, 'run_status', { status: 'working' })]);
    const { rerender } = render(LiveBubble, { stream: s1 });
    expect(screen.getByLabelText('The agent is answering')).toBeTruthy();
    await vi.advanceTimersByTimeAsync(SILENT_MS - 1000);
    expect(silentNote()).toBeNull();
    // Any frame starts the wait again (here the model's reasoning).
    const s2 = reduceAll(s1, [f(2, 'reasoning', { text: 'Thinking' })]);
    await rerender({ stream: s2 });
    await vi.advanceTimersByTimeAsync(SILENT_MS - 1000);
    expect(silentNote()).toBeNull();
    await vi.advanceTimersByTimeAsync(1000);
    expect(silentNote()?.textContent).toMatch(/Wait, or Stop and check that server/);
    // The answer's first words take it away.
    await rerender({ stream: reduceAll(s2, [f(3, 'token', { text: 'Here it is.' })]) });
    expect(silentNote()).toBeNull();
    // A tool that runs long is not silence.
    const s4 = reduceAll(s2, [f(3, 'tool', { tid: 't1', name: 'terminal', args: {}, key_arg: 'make' })]);
    await rerender({ stream: s4 });
    await vi.advanceTimersByTimeAsync(2 * SILENT_MS);
    expect(silentNote()).toBeNull();
    // Nor is an agent waiting for the user's answer (an approval or a clarify).
    const approval = { approval_id: 'ap1', command: 'rm -rf build', description: 'delete', pending_count: 1 };
    await rerender({ stream: reduceAll(s2, [f(3, 'approval', approval)]) });
    await vi.advanceTimersByTimeAsync(2 * SILENT_MS);
    expect(silentNote()).toBeNull();
    await rerender({ stream: reduceAll(s2, [f(3, 'clarify', { clarify_id: 'c1', question: 'Which one?', choices: ['a', 'b'] })]) });
    await vi.advanceTimersByTimeAsync(2 * SILENT_MS);
    expect(silentNote()).toBeNull();
    // Nor a wait on purpose: a provider's rate limit, the conversation being compressed.
    await rerender({ stream: reduceAll(s2, [f(3, 'run_status', { status: 'rate_limit_wait', until: Date.now() / 1000 + 120 })]) });
    await vi.advanceTimersByTimeAsync(2 * SILENT_MS);
    expect(silentNote()).toBeNull();
    await rerender({ stream: reduceAll(s2, [f(3, 'run_status', { status: 'compressing' })]) });
    await vi.advanceTimersByTimeAsync(2 * SILENT_MS);
    expect(silentNote()).toBeNull();
  });

  it('shows a steer text as text, never HTML', () => {
    const s = reduceAll(initialStreamState(ST, 's'), [f(1, 'steer_consumed', { id: 'a', text: '<img src=x onerror=alert(1)>' })]);
    const { container } = render(LiveBubble, { stream: s });
    expect(container.querySelector('img')).toBeNull();
    expect(screen.getByText('<img src=x onerror=alert(1)>')).toBeTruthy();
  });

  it('footer: cost only when above zero, and the tool-limit note', () => {
    render(TurnFooter, { usage: { ...usage0, input_tokens: 10, output_tokens: 5 }, tps: 12, duration: 4.2, toolLimit: true });
    const el = document.querySelector('[data-turn-footer]')!;
    expect(el.textContent).toContain('10 in · 5 out · 12 tok/s · 4.2s');
    expect(el.textContent).not.toContain('$');
    expect(screen.getByText('The agent reached its tool-call limit for this turn.')).toBeTruthy();
  });

  it('status bar: restarting counts down and offers Restart agent; down shows the hint', async () => {
    // The countdown reads the clock: it stands still here (8 s announced 3 s ago: 5 s).
    vi.useFakeTimers({ toFake: ['Date'] });
    let restarted = 0;
    let diag = 0;
    const base = { runtime: 'hermes', agent_version: '0.9', sidecar_version: '1', error: '', hint: '', python: '', protocol: 1, pid: 0, restarts: 0, started_at: 0, runtime_id: 'builtin', sandbox: null, capabilities: [] };
    const r = render(StatusBar, {
      sidecar: { ...base, state: 'restarting', attempt: 2, next_retry_s: 8 },
      sidecarAt: Date.now() - 3000,
      runStatus: null,
      onrestart: () => restarted++,
      ondiagnostics: () => diag++,
    });
    const bar = () => within(document.querySelector('footer.status') as HTMLElement);
    expect(bar().getByText('Agent restarting, attempt 2, next try in 5 s')).toBeTruthy();
    // Screen readers hear the state, not every tick of the countdown.
    expect(screen.getByRole('status').textContent).toBe('Agent restarting, attempt 2…');
    await fireEvent.click(screen.getByRole('button', { name: 'Restart agent' }));
    expect(restarted).toBe(1);
    await r.rerender({
      sidecar: { ...base, state: 'down', attempt: 5, next_retry_s: 0, error: 'python3: not found', hint: 'Set the Hermes Python in Settings.' },
      sidecarAt: Date.now(),
      runStatus: null,
      onrestart: () => restarted++,
      ondiagnostics: () => diag++,
    });
    expect(bar().getByText('Agent down: python3: not found')).toBeTruthy();
    expect(screen.getByText('Set the Hermes Python in Settings.')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Diagnostics' }));
    expect(diag).toBe(1);
    await r.rerender({ sidecar: { ...base, state: 'ready', attempt: 0, next_retry_s: 0 }, sidecarAt: Date.now(), runStatus: null });
    expect(bar().getByText('Agent ready (hermes 0.9)')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Restart agent' })).toBeNull();
  });
});
