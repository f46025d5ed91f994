import { describe, expect, it } from 'vitest';
import type { AcpApi, AgentState } from './acp';
import { AgentStateStore } from './agentstate.svelte';
import type { Frame } from './protocol';

const empty: AgentState = { agent_session_id: 'a1', modes: null, models: null, options: [], commands: [] };
const withCommands: AgentState = { ...empty, commands: [{ name: 'init', description: 'set up' }] as unknown as AgentState['commands'] };

describe('AgentStateStore', () => {
  it('keeps the state a frame brought when an older read answers after it', async () => {
    let answer: (s: AgentState) => void = () => {};
    const api = { state: () => new Promise<AgentState>((r) => (answer = r)) } as unknown as AcpApi;
    const store = new AgentStateStore(api);
    const read = store.load('s1'); // a slow agent start
    store.onFrame({ event: 'agent_state', session_id: 's1', data: withCommands } as unknown as Frame);
    answer(empty); // the read's snapshot, taken before the turn's commands
    await read;
    expect(store.states.s1.commands).toHaveLength(1);
  });

  it('takes a read that nothing newer overtook', async () => {
    const api = { state: async () => withCommands } as unknown as AcpApi;
    const store = new AgentStateStore(api);
    await store.load('s1');
    expect(store.states.s1.commands).toHaveLength(1);
  });

  it('takes the state the agent gives between turns, over an older read', async () => {
    let answer: (s: AgentState) => void = () => {};
    const api = { state: () => new Promise<AgentState>((r) => (answer = r)) } as unknown as AcpApi;
    const store = new AgentStateStore(api);
    const read = store.load('s1');
    store.onState('s1', withCommands); // OpenCode's commands, told after the first answer
    answer(empty);
    await read;
    expect(store.states.s1.commands).toHaveLength(1);
  });
});
