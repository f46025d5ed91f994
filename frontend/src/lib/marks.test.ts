import { describe, expect, it } from 'vitest';
import { splitMarks, stripMarks } from './marks';

const S = '\u0002';
const E = '\u0003';

describe('splitMarks', () => {
  it('splits marked and plain runs', () => {
    expect(splitMarks(`…read a ${S}file${E} line by ${S}line${E}`)).toEqual([
      { text: '…read a ', mark: false },
      { text: 'file', mark: true },
      { text: ' line by ', mark: false },
      { text: 'line', mark: true },
    ]);
  });

  it('keeps HTML as text (never markup)', () => {
    const runs = splitMarks(`<img src=x onerror=alert(1)> ${S}<b>bold</b>${E}`);
    expect(runs).toEqual([
      { text: '<img src=x onerror=alert(1)> ', mark: false },
      { text: '<b>bold</b>', mark: true },
    ]);
  });

  it('drops unpaired markers', () => {
    expect(splitMarks(`a${E}b`)).toEqual([{ text: 'ab', mark: false }]);
    expect(splitMarks(`a${S}b`)).toEqual([{ text: 'ab', mark: false }]);
    expect(splitMarks(`${S}${S}x${E}${E}`)).toEqual([{ text: 'x', mark: true }]);
    expect(splitMarks('')).toEqual([]);
  });

  it('strips the markers', () => {
    expect(stripMarks(`${S}Go${E} files`)).toBe('Go files');
  });
});
