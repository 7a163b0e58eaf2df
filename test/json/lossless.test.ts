import { describe, expect, it } from 'vitest';
import { pyJsonDumps, type JsonValue } from '../../src/drf/python-json.js';
import { parseJson } from '../../src/json/lossless.js';
import { validatePage } from '../../src/upstream/validate.js';
import { canonicalJson, stringifyJson } from '../../src/json/safe-json.js';

// The numbers the upstream may send in fields the contract does not name, and what Python's json
// module (the reference DRF site's) writes after reading each.
const cases: [text: string, python: string][] = [
  ['9007199254740993', '9007199254740993'],
  ['12345678901234567890', '12345678901234567890'],
  ['-12345678901234567890', '-12345678901234567890'],
  ['100.0', '100.0'],
  ['-0.0', '-0.0'],
  ['-0', '0'],
  ['1e+16', '1e+16'],
  ['1e16', '1e+16'],
  ['1.5E-7', '1.5e-07'],
  ['0.1', '0.1'],
  ['42', '42'],
  ['1e400', 'Infinity'],
  ['123456789012345678901234567890.5', '1.2345678901234568e+29'],
];

describe('numbers keep the text the upstream sent', () => {
  it.each(cases)('%s is stored as sent and served as Python writes it (%s)', (text, python) => {
    const body = `{"uuid":"a","extra":${text},"list":[${text}],"nested":{"n":${text}}}`;
    const value = parseJson(body);
    expect(stringifyJson(value)).toBe(body);
    expect(pyJsonDumps(value as JsonValue)).toBe(
      `{"uuid":"a","extra":${python},"list":[${python}],"nested":{"n":${python}}}`,
    );
  });

  it('a text without numbers is the native parse, untouched', () => {
    expect(parseJson('{"a":"1.0","b":[true,null]}')).toEqual({ a: '1.0', b: [true, null] });
  });

  it('canonical JSON sorts keys and keeps number texts', () => {
    expect(canonicalJson('{"b":100.0,"a":1e+16}')).toBe('{"a":1e+16,"b":100.0}');
  });

  it('a text nested past the lossless parser’s depth still parses', () => {
    const deep = `${'['.repeat(5000)}1.0${']'.repeat(5000)}`;
    expect(() => parseJson(deep)).not.toThrow();
  });
});

// A key written twice in one object, as Python's json module (DRF's) reads it: the last value at the
// key's first place. Each `python` is `json.dumps(json.loads(text), separators=(',', ':'))`.
const duplicates: [text: string, stored: string, python: string][] = [
  ['{"a":1.0,"a":2.0}', '{"a":2.0}', '{"a":2.0}'],
  [
    '{"dup":1,"b":9007199254740993,"dup":2}',
    '{"dup":2,"b":9007199254740993}',
    '{"dup":2,"b":9007199254740993}',
  ],
  ['{"z":-0.0,"z":100.0,"e":1e400}', '{"z":100.0,"e":1e400}', '{"z":100.0,"e":Infinity}'],
  // Values lossless-json deems equal (its equality ignores key order, and an array is equal to an
  // object with its indexes as keys): the last is still the one kept.
  [
    '{"a":{"x":1,"y":2.0},"b":0,"a":{"y":2.0,"x":1}}',
    '{"a":{"y":2.0,"x":1},"b":0}',
    '{"a":{"y":2.0,"x":1},"b":0}',
  ],
  [
    '{"a":{"m":{"x":1.0,"y":[]},"n":2},"a":{"n":2,"m":{"y":{},"x":1.0}}}',
    '{"a":{"n":2,"m":{"y":{},"x":1.0}}}',
    '{"a":{"n":2,"m":{"y":{},"x":1.0}}}',
  ],
  ['{"a":[],"a":{}}', '{"a":{}}', '{"a":{}}'],
  ['{"a":{},"a":[]}', '{"a":[]}', '{"a":[]}'],
  ['{"a":[1.0],"a":{"0":1.0}}', '{"a":{"0":1.0}}', '{"a":{"0":1.0}}'],
  ['{"a":{"0":1.0},"a":[1.0]}', '{"a":[1.0]}', '{"a":[1.0]}'],
  [
    '{"a":1.0,"a":{"isLosslessNumber":true,"value":"1.0"}}',
    '{"a":{"isLosslessNumber":true,"value":"1.0"}}',
    '{"a":{"isLosslessNumber":true,"value":"1.0"}}',
  ],
  ['{"a":{"value":"1.0","isLosslessNumber":true},"a":1.0}', '{"a":1.0}', '{"a":1.0}'],
  ['{"__proto__":1.5,"__proto__":-0.0}', '{"__proto__":-0.0}', '{"__proto__":-0.0}'],
  ['[{"k":100.0,"k":100.0},{"k":-0.0,"k":0.0}]', '[{"k":100.0},{"k":0.0}]', '[{"k":100.0},{"k":0.0}]'],
];

describe('a duplicate key keeps the last value and every number its text', () => {
  it.each(duplicates)('%s is stored as %s and served as %s', (text, stored, python) => {
    const value = parseJson(text);
    expect(stringifyJson(value)).toBe(stored);
    expect(pyJsonDumps(value as JsonValue)).toBe(python);
  });

  it('a page with one entry holding a duplicate key keeps every other entry’s numbers', () => {
    const entry = (letter: string, extra: string) =>
      `{"uuid":"${letter.repeat(32)}","name":"N","post":"P","emoji_file":null,"emoji_file_webm":null,"show_image":true,"images":[]${extra}}`;
    const entries = [
      entry('a', ',"dup":1,"dup":2'),
      entry('b', ',"big":9007199254740993,"ratio":100.0,"zero":-0.0'),
      entry('c', ',"huge":[12345678901234567890],"far":1e400,"nested":{"n":1.0}'),
    ];
    const page = validatePage(
      parseJson(`{"count":3,"next":null,"previous":null,"results":[${entries.join(',')}]}`, 'count'),
      1,
    );
    expect(page.entries).toEqual([
      { index: 0, uuid: 'a'.repeat(32), json: entry('a', ',"dup":2') },
      { index: 1, uuid: 'b'.repeat(32), json: entries[1] },
      { index: 2, uuid: 'c'.repeat(32), json: entries[2] },
    ]);
  });
});
