import { styleText } from 'node:util';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import { cellWidth, relativeTime, table } from '../../src/cli/terminal.js';

/** Every UTF-16 unit that `cellWidth` counts by length, and a few it must hand to string-width. */
const COUNTED = [
  [0x20, 0x7e],
  [0xa0, 0xa8],
  [0xaa, 0xac],
  [0xaf, 0x2ff],
  [0x21ba, 0x21ba],
] as const;

describe('cellWidth: the width string-width gives, without its cost for plain Latin text', () => {
  it('agrees with string-width on every character it counts by length', () => {
    const differing: string[] = [];
    for (const [from, to] of COUNTED) {
      for (let code = from; code <= to; code++) {
        const char = String.fromCharCode(code);
        if (cellWidth(char) !== stringWidth(char)) differing.push(char);
      }
    }
    expect(differing).toEqual([]);
  });

  it.each([
    ['plain', 'succeeded'],
    ['coloured', styleText('red', 'failed')],
    ['coloured and dim', `${styleText('bold', 'RUN')} ${styleText('dim', '(5 min. ago)')}`],
    ['soft hyphen', 'co\u00adworker'],
    ['copyright and registered signs', '© ®'],
    ['wide', '山田太郎'],
    ['emoji', 'Ada 👩‍💻'],
    ['combining', 'Zoe\u0308'],
    ['drawn control', '^[[2J'],
  ])('%s text', (_name, text) => {
    expect(cellWidth(text)).toBe(stringWidth(text));
  });

  it('aligns a table of mixed cells as string-width would', () => {
    expect(
      table([
        ['山田', 'x'],
        ['Ada', 'y'],
        [styleText('bold', 'RUN'), 'z'],
      ]),
    ).toEqual(['山田  x', 'Ada   y', `${styleText('bold', 'RUN')}   z`]);
  });
});

describe('relativeTime: what Intl.RelativeTimeFormat writes, without loading its locale data', () => {
  const intl = new Intl.RelativeTimeFormat('en', { numeric: 'auto', style: 'short' });
  const values = [
    0, -0, 1, -1, 2, -2, 9, -23, 59, -59, 100, -999, 1000, -1059, 12_345, -1_234_567, 98_765_432,
  ];

  it.each(['day', 'hour', 'minute', 'second'] as const)('%s, past and future', (unit) => {
    expect(values.map((v) => relativeTime(v, unit))).toEqual(values.map((v) => intl.format(v, unit)));
  });
});
