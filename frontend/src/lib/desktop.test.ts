import { describe, expect, it, vi } from 'vitest';
import { answered, until } from '../test/until';
import { formatBuildDate, groupLibraries, normaliseAbout, normaliseAutostart, watchLaunchActions } from './desktop';


describe('watchLaunchActions', () => {
  it('takes what was queued before the window listened, then each later action once', async () => {
    const queue = ['new_chat'];
    let fire = () => {};
    const api = {
      takeLaunchActions: vi.fn(async () => queue.splice(0)),
      onLaunchAction: vi.fn((cb: () => void) => ((fire = cb), () => {})),
    };
    const newChat = vi.fn(async () => {});
    watchLaunchActions(api, { newChat });
    await until(() => expect(newChat).toHaveBeenCalledTimes(1));

    queue.push('new_chat', 'something_newer');
    fire();
    fire(); // two events for the same batch: the second take finds nothing
    // Takes run one after another: the third starts once the second's actions ran.
    await until(() => expect(api.takeLaunchActions).toHaveBeenCalledTimes(3));
    await answered(api.takeLaunchActions);
    expect(newChat).toHaveBeenCalledTimes(2);
  });

  it('ignores a host without launch actions', async () => {
    const api = {
      takeLaunchActions: vi.fn(async () => {
        throw new Error('TakeLaunchActions is not a function');
      }),
      onLaunchAction: () => () => {},
    };
    const newChat = vi.fn();
    watchLaunchActions(api, { newChat });
    await until(() => expect(api.takeLaunchActions).toHaveBeenCalled());
    await answered(api.takeLaunchActions);
    expect(newChat).not.toHaveBeenCalled();
  });
});

describe('About data', () => {
  it('normalises what an older or partial host sends', () => {
    const a = normaliseAbout({ version: '1', libraries: [{ name: 'x' } as never, null as never] });
    expect(a.commit).toBe('');
    expect(a.paths.log_dir).toBe('');
    expect(a.libraries).toEqual([{ name: 'x', version: '', license: '', ecosystem: '' }]);
    expect(normaliseAutostart(null)).toEqual({ enabled: false, where: '', command: '', error: '' });
  });

  it('groups libraries Go, npm, then C, sorted by name', () => {
    const g = groupLibraries([
      { name: 'svelte', version: '5', license: 'MIT', ecosystem: 'npm' },
      { name: 'SQLite', version: '3', license: 'blessing', ecosystem: 'c' },
      { name: 'z/mod', version: 'v1', license: 'MIT', ecosystem: 'go' },
      { name: 'a/mod', version: 'v1', license: 'MIT', ecosystem: 'go' },
    ]);
    expect(g.map((x) => x.ecosystem)).toEqual(['go', 'npm', 'c']);
    expect(g[0].libraries.map((l) => l.name)).toEqual(['a/mod', 'z/mod']);
  });

  it('formats the build date in UTC', () => {
    expect(formatBuildDate('2026-12-01T10:05:00Z')).toBe('1 December 2026, 10:05 UTC');
    expect(formatBuildDate('yesterday')).toBe('yesterday');
  });
});
