import { describe, expect, it } from 'vitest';
import { byteToIndex, commandSegments, hasHidden } from './commandview';

function utf8(s: string): number {
  return new TextEncoder().encode(s).length;
}

function shown(cmd: string, a = 0, b = 0): string {
  return commandSegments(cmd, a, b)
    .map((s) => (s.danger ? `[${s.text}]` : s.text))
    .join('');
}

describe('commandSegments', () => {
  it('marks the matched part by UTF-8 byte offsets', () => {
    const cmd = 'cd /tmp && rm -rf build && ls';
    const start = cmd.indexOf('rm');
    expect(shown(cmd, start, start + 'rm -rf build'.length)).toBe('cd /tmp && [rm -rf build] && ls');
    const uni = 'echo "héllo ✓" ; git push --force';
    const s = utf8(uni.slice(0, uni.indexOf('git')));
    expect(shown(uni, s, s + utf8('git push --force'))).toBe('echo "héllo ✓" ; [git push --force]');
  });

  it('collapses runs of white space into a marker that says what they were', () => {
    const cmd = 'echo hi' + ' '.repeat(300) + '; rm -rf ~/work';
    const out = shown(cmd);
    expect(out).toBe('echo hi⟨300 spaces⟩; rm -rf ~/work');
    const lines = 'ls' + '\n'.repeat(80) + 'curl x | sh';
    expect(shown(lines)).toBe('ls⟨80 newlines⟩\ncurl x | sh');
    expect(shown('a\tb\nc d')).toBe('a\tb\nc d'); // single tab, newline, space stay
    expect(shown('a \t b')).toBe('a⟨2 spaces, 1 tab⟩b');
    expect(shown('rm\u00a0-rf x')).toBe('rm⟨1 no-break space⟩-rf x');
    expect(hasHidden(commandSegments('a  b'))).toBe(true);
    expect(hasHidden(commandSegments('a b'))).toBe(false);
  });

  it('shows invisible and direction-changing characters', () => {
    expect(shown('echo \u202eevil\u202c')).toBe('echo ⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩evil⟨U+202C POP DIRECTIONAL FORMATTING⟩');
    expect(shown('r\u200bm -rf /')).toBe('r⟨U+200B ZERO WIDTH SPACE⟩m -rf /');
    expect(shown('x\u2066y\u2069')).toBe('x⟨U+2066 LEFT-TO-RIGHT ISOLATE⟩y⟨U+2069 POP DIRECTIONAL ISOLATE⟩');
    expect(shown('a\u001b[2Jb')).toBe('a⟨U+001B⟩[2Jb');
    expect(shown('tag\u{E0041}')).toBe('tag⟨U+E0041⟩');
    expect(shown('soft\u00adhyphen')).toBe('soft⟨U+00AD SOFT HYPHEN⟩hyphen');
  });

  it('keeps a mark exact across collapsed space and invisible characters', () => {
    const cmd = 'true;' + ' '.repeat(10) + 'r\u200bm -rf x' + ' '.repeat(5) + 'ok';
    const start = utf8('true;' + ' '.repeat(10));
    const end = start + utf8('r\u200bm -rf x');
    expect(shown(cmd, start, end)).toBe('true;⟨10 spaces⟩[r][⟨U+200B ZERO WIDTH SPACE⟩][m -rf x]⟨5 spaces⟩ok');
  });

  it('ignores spans out of range', () => {
    expect(shown('ls', 5, 9)).toBe('ls');
    expect(shown('ls', 2, 1)).toBe('ls');
    expect(byteToIndex('é', 1)).toBe(0);
    expect(byteToIndex('é', 2)).toBe(1);
  });
});
