// DEV ONLY: steering in the fake backend. Every running turn has a queue of steers
// (Steer, WithdrawSteer, SteerNow, PendingSteers) announced as steer_queue frames;
// a turn takes the queue at its next step (steer_consumed, and a user row in the saved
// transcript at that point); a cancel hands the untaken texts back (cancel's
// unsent_steers); a turn that ends with steers left over gets one follow-up turn, as on
// the host. `?scenario=steer` (runSteerTurn) is a turn that is steered twice at load and
// then waits on a provider's rate limit with two messages still queued.

import { fail } from './fail';
import type { MessageView, SessionInfo, SteerInfo, SteerNowResult, SteerOutcome, ToolCall } from '../lib/protocol';
import type { AgentHost } from './agent';

type Consumed = (s: SteerInfo) => void;

const queues = new Map<string, SteerInfo[]>(); // stream id → untaken steers, oldest first
const consumed = new Map<string, Set<string>>(); // stream id → ids the agent read
const listeners = new Map<string, Consumed>(); // stream id → the turn's "read here" hook
let counter = 0;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function queueOf(streamId: string): SteerInfo[] {
  let q = queues.get(streamId);
  if (!q) queues.set(streamId, (q = []));
  return q;
}

function announce(host: AgentHost, sid: string, streamId: string) {
  host.push(sid, streamId, 'steer_queue', { steers: queueOf(streamId).map((s) => ({ ...s })) });
}

function consume(host: AgentHost, sid: string, streamId: string, s: SteerInfo) {
  const q = queueOf(streamId);
  const i = q.findIndex((x) => x.id === s.id);
  if (i >= 0) q.splice(i, 1);
  let seen = consumed.get(streamId);
  if (!seen) consumed.set(streamId, (seen = new Set()));
  seen.add(s.id);
  listeners.get(streamId)?.(s);
  host.push(sid, streamId, 'steer_consumed', { id: s.id, text: s.text });
}

/** A running turn registers where its answer is, so a read steer splits it there. */
export function onConsumed(streamId: string, fn: Consumed): void {
  listeners.set(streamId, fn);
}

export function steer(host: AgentHost, sid: string, streamId: string, text: string): SteerOutcome {
  const s: SteerInfo = { id: `steer-${++counter}`, text, created_at: Date.now() };
  queueOf(streamId).push(s);
  announce(host, sid, streamId);
  return { steer_id: s.id, stream_id: streamId, delivery: 'queued' };
}

export function withdraw(host: AgentHost, sid: string, streamId: string, id: string): string {
  const q = queueOf(streamId);
  const i = q.findIndex((x) => x.id === id);
  if (i < 0) {
    if (consumed.get(streamId)?.has(id)) throw fail('steer_gone', 'the agent already read this message; it cannot be withdrawn');
    throw fail('steer_gone', 'this queued message is no longer pending');
  }
  const [s] = q.splice(i, 1);
  host.push(sid, streamId, 'steer_withdrawn', { id });
  announce(host, sid, streamId);
  return s.text;
}

export function steerNow(host: AgentHost, sid: string, streamId: string, id: string): SteerNowResult {
  const s = queueOf(streamId).find((x) => x.id === id);
  if (!s) throw fail('steer_gone', 'this queued message is no longer pending');
  consume(host, sid, streamId, s);
  announce(host, sid, streamId);
  return { withdrawn: true, redirected: true, delivery: 'steer', requeued: false };
}

export function pending(streamId: string): SteerInfo[] {
  return queueOf(streamId).map((s) => ({ ...s }));
}

/** The agent's next step: it reads every queued steer. */
export function takeAll(host: AgentHost, sid: string, streamId: string): void {
  const q = [...queueOf(streamId)];
  if (q.length === 0) return;
  for (const s of q) consume(host, sid, streamId, s);
  announce(host, sid, streamId);
}

/** The turn is over: the untaken texts, once (the queue is closed). */
export function leftovers(streamId: string): string[] {
  const texts = queueOf(streamId).map((s) => s.text);
  queues.delete(streamId);
  listeners.delete(streamId);
  return texts;
}

/**
 * An answer that a read steer can split: text and tool calls are collected per step,
 * and a steer read in between becomes a user row at that point of the saved rows.
 */
export class SteeredAnswer {
  rows: MessageView[] = [];
  private text = '';
  private calls: ToolCall[] = [];
  private results: MessageView[] = [];
  private readonly host: AgentHost;
  private readonly sid: string;
  private readonly streamId: string;

  constructor(host: AgentHost, sid: string, streamId: string) {
    this.host = host;
    this.sid = sid;
    this.streamId = streamId;
    onConsumed(streamId, (s) => {
      this.close();
      this.rows.push(host.row(sid, 'user', s.text, { stream_id: streamId }));
    });
  }

  addText(t: string): void {
    if (this.calls.length) this.close();
    this.text += t;
  }

  addTool(call: ToolCall, result: MessageView): void {
    this.calls.push(call);
    this.results.push(result);
  }

  get streamed(): string {
    return this.text;
  }

  close(): MessageView[] {
    if (this.text || this.calls.length) {
      this.rows.push(
        this.host.row(this.sid, 'assistant', this.text, { tool_calls: this.calls.length ? this.calls : undefined, stream_id: this.streamId }),
        ...this.results,
      );
    }
    this.text = '';
    this.calls = [];
    this.results = [];
    return this.rows;
  }
}

const controls = new Map<string, { stopped: boolean }>();

/** Stops the scripted steer turn; false when the stream is not one. */
export function cancelSteerTurn(streamId: string): boolean {
  const c = controls.get(streamId);
  if (!c || c.stopped) return false;
  c.stopped = true;
  return true;
}

/** The steering scenario: read, edit and test a config loader while being steered. */
export async function runSteerTurn(host: AgentHost, session: SessionInfo, streamId: string, user: MessageView, answer: SteeredAnswer): Promise<boolean> {
  const sid = session.id;
  const ctl = { stopped: false };
  controls.set(streamId, ctl);
  const push = (event: string, data: unknown) => {
    if (!ctl.stopped) host.push(sid, streamId, event, data);
  };
  let out = 0;
  const say = async (s: string) => {
    for (const part of s.match(/[\s\S]{1,9}/g) ?? []) {
      if (ctl.stopped) return;
      push('token', { text: part });
      answer.addText(part);
      out += 2;
      await sleep(22);
    }
  };
  let n = 0;
  const tool = async (name: string, command: string, preview: string, ms = 400) => {
    if (ctl.stopped) return;
    const tid = `steer_call_${streamId}_${++n}`;
    push('tool', { tid, name, args: { command }, key_arg: command });
    await sleep(ms);
    if (ctl.stopped) return;
    push('tool_complete', { tid, name, preview, raw_result: { exit_code: 0 }, is_error: false, duration: ms / 1000 });
    answer.addTool(
      { id: tid, type: 'function', function: { name, arguments: JSON.stringify({ command }) } },
      host.row(sid, 'tool', JSON.stringify({ output: preview, exit_code: 0 }), { tool_call_id: tid, name, stream_id: streamId }),
    );
  };
  const meter = (input: number, cost: number, estimated: boolean) =>
    push('metering', { usage: { input_tokens: input, output_tokens: out, cache_read_tokens: 4096, cache_write_tokens: 0, estimated_cost: cost }, tps: 34.2, estimated });

  push('user_message', { message: user });
  push('run_status', { status: 'working' });
  push('reasoning', { text: 'The loader lives in config/load.go; read it, then change the parsing.' });
  await sleep(150);
  await say("I'll start by reading the current loader and its tests.");
  await tool('read_file', 'config/load.go', 'package config\n\nfunc Load(path string) (*Config, error) {\n\t// …\n}', 300);
  meter(6200, 0.0041, true);
  // The user steers while the tool runs; the agent reads it at its next step.
  steer(host, sid, streamId, 'Keep the YAML format backwards compatible, please.');
  await sleep(400);
  takeAll(host, sid, streamId);
  await say('Understood: old YAML files keep loading unchanged. I will add the new keys as optional fields.');
  await tool('terminal', 'go test ./config/...', 'ok  \ttalaria/config\t0.41s', 600);
  meter(9800, 0.0087, false);
  steer(host, sid, streamId, 'Also add a test for an empty config file.');
  steer(host, sid, streamId, 'And use the new errors package for the messages.');
  await sleep(200);
  if (ctl.stopped) return false;
  // The provider asks to wait: the queued messages stay queued meanwhile.
  push('run_status', { status: 'rate_limit_wait', until: Date.now() + 25_000, provider: 'openrouter' });
  push('warning', { type: 'retry', message: 'openrouter answered 429 Too Many Requests; retrying when the limit resets.' });
  await sleep(25_000);
  if (ctl.stopped) return false;
  push('run_status', { status: 'working' });
  takeAll(host, sid, streamId);
  await say('Adding `TestLoadEmpty` and switching the messages to the new errors package.');
  await tool('terminal', 'go test ./config/...', 'ok  \ttalaria/config\t0.44s', 500);
  if (ctl.stopped) return false;
  await say('\n\nDone: the loader accepts the new keys, old files load as before, and empty files have a test.');
  meter(14_200, 0.0131, false);
  push('done', {
    usage: { input_tokens: 14_200, output_tokens: out, cache_read_tokens: 4096, cache_write_tokens: 0, estimated_cost: 0.0131 },
    duration_seconds: 31.8, tps: 34.2, terminal_state: 'completed', tool_limit_reached: false,
  });
  controls.delete(streamId);
  return true;
}
