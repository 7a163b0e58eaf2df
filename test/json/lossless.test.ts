import { describe, expect, it } from 'vitest';
import { pyJsonDumps, type JsonValue } from '../../src/drf/python-json.js';
import { parseJson } from '../../src/json/lossless.js';
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

  it('a duplicate key keeps the last value, as JSON.parse and Python do', () => {
    expect(stringifyJson(parseJson('{"a":1.0,"a":2.0}'))).toBe('{"a":2}');
  });

  it('a text nested past the lossless parser’s depth still parses', () => {
    const deep = `${'['.repeat(5000)}1.0${']'.repeat(5000)}`;
    expect(() => parseJson(deep)).not.toThrow();
  });
});
