import { describe, expect, it } from 'vitest';
import { describeCaps, joinArgs, matchCommands, normaliseState, splitArgs } from './acp';

describe('acp', () => {
  it('splits and joins arguments like a shell for plain words', () => {
    expect(splitArgs('acp')).toEqual(['acp']);
    expect(splitArgs('  --acp   --model "big model" \'x y\' a\\ b ""')).toEqual(['--acp', '--model', 'big model', 'x y', 'a b', '']);
    for (const args of [['acp'], ['-c', "it's here"], ['a b', '', 'plain']]) {
      expect(splitArgs(joinArgs(args))).toEqual(args);
    }
  });

  it('matches slash commands by prefix while only a word follows the slash', () => {
    const cmds = [{ name: 'init', description: 'set up' }, { name: 'review', description: 'review' }, { name: 'reset', description: 'clear' }];
    expect(matchCommands('/re', cmds).map((c) => c.name)).toEqual(['review', 'reset']);
    expect(matchCommands('/', cmds)).toHaveLength(3);
    expect(matchCommands('/init now', cmds)).toEqual([]);
    expect(matchCommands('hello /init', cmds)).toEqual([]);
  });

  it('normalises an agent state: pickers without choices are hidden', () => {
    const st = normaliseState({ agent_session_id: 's', modes: { id: 'mode', name: 'Mode', current: '', choices: [] }, models: null,
      options: null as never, commands: null as never });
    expect(st).toEqual({ agent_session_id: 's', modes: null, models: null, options: [], commands: [] });
  });

  it('keeps why the agent acts without asking in its mode', () => {
    const st = normaliseState({ agent_session_id: 's', modes: null, models: null, options: [], commands: [], self_approves: 'OpenCode edited a.txt without asking in this mode' });
    expect(st?.self_approves).toBe('OpenCode edited a.txt without asking in this mode');
  });

  it('describes capabilities', () => {
    expect(describeCaps({ load_session: true, resume_session: false, close_session: false, list_sessions: false, logout: false, images: true,
      audio: false, embedded_context: false, mcp_http: true, mcp_sse: false })).toEqual(['loads sessions', 'images', 'MCP servers (stdio, http)']);
  });
});
