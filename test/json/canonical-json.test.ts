import { describe, expect, it } from 'vitest';
import { isCanonicalJson } from '../../src/json/canonical-json.js';
import { stringifyJson } from '../../src/json/safe-json.js';

/** What the scan stands for: V8's own round trip gives the text back. */
function roundTrips(text: string): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === text;
  } catch {
    return false;
  }
}

/** A small seeded generator (mulberry32): the same texts on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Pieces a stored value may hold, canonical or not: every one is a way the scan could be wrong. */
const ATOMS = [
  '0',
  '-0',
  '7',
  '-12',
  '01',
  '1.0',
  '1.5',
  '1e3',
  '1E3',
  '123456789012345',
  '1234567890123456',
  '12345678901234567890',
  'true',
  'false',
  'null',
  'nul',
  '""',
  '"a"',
  '"Zoë"',
  '"\\u00e9"',
  '"\\n"',
  '"\\/"',
  '"\\u001f"',
  '"\\b\\f\\r\\t\\"\\\\"',
  '"\u2028"',
  '"\u007f"',
  '"\ud83d\ude00"',
  '"\ud83d"',
  '"\ude00"',
  '"\\ud83d"',
  '"\u0001"',
  '"a\nb"',
  ' 1',
  '1 ',
  '"x',
  '[]',
  '{}',
  '[ ]',
];
const KEYS = ['"a"', '"b"', '"1"', '"10"', '"-1"', '"__proto__"', '"é"', '"a\\"b"', '"x y"', '""'];

function value(next: () => number, depth: number): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const roll = next();
  if (depth > 3 || roll < 0.5) return pick(ATOMS);
  const count = Math.floor(next() * 4);
  const items = Array.from({ length: count }, () => value(next, depth + 1));
  if (roll < 0.7) return `[${items.join(next() < 0.05 ? ', ' : ',')}]`;
  const members = items.map((item) => `${pick(KEYS)}${next() < 0.05 ? ' :' : ':'}${item}`);
  return `{${members.join(',')}}`;
}

describe('isCanonicalJson: true only when V8 writes the text back as it is (exports, issue 21)', () => {
  it.each([
    ['"Dev"', true],
    ['{"uuid":"u1","name":"Zoë \\"Test\\" 1","post":"Dev, ops\\nand more","n":-12,"ok":true}', true],
    ['[1,[2,[]],{},null,false,"\ud83d\ude00"]', true],
    ['{"a":1,"a":2}', false],
    ['{"b":1,"1":2}', false],
    ['{ "a":1}', false],
    ['"\\u00e9"', false],
    ['"\\/"', false],
    ['1.0', false],
    ['-0', false],
    ['12345678901234567890', false],
    ['"\\ud83d"', false],
    ['', false],
    ['"a"x', false],
    ['[1,]', false],
    ['[tru', false],
    ['{"a":1}\n', false],
    ['{"a":{"b":1,"b":2}}', false],
    ['{"a":{"b":1},"b":2}', true],
  ])('%j → %s', (text, expected) => {
    expect(isCanonicalJson(text)).toBe(expected);
    if (expected) expect(roundTrips(text)).toBe(true);
  });

  it('never says yes to a text the round trip changes (20,000 generated texts)', () => {
    const next = random(21);
    const wrong: string[] = [];
    let accepted = 0;
    for (let n = 0; n < 20_000; n++) {
      const text = value(next, 0);
      if (!isCanonicalJson(text)) continue;
      accepted += 1;
      if (!roundTrips(text)) wrong.push(text);
    }
    expect(wrong).toEqual([]);
    expect(accepted).toBeGreaterThan(2_000);
  });

  it('says yes to what the sync writes: entries as stringifyJson writes them', () => {
    const next = random(7);
    for (let n = 0; n < 2_000; n++) {
      const entry = {
        uuid: `u-${n}`,
        name: `Zoë "${String.fromCharCode(32 + Math.floor(next() * 95))}" ${n}`,
        post: next() < 0.5 ? 'Dev, ops\nand more' : '',
        photo: next() < 0.5 ? null : `https://example.com/${n}.jpg`,
        tags: ['a', n, n % 2 === 0],
        team: { id: n, lead: next() < 0.5 },
      };
      expect(isCanonicalJson(stringifyJson(entry))).toBe(true);
    }
  });

  it('leaves nesting past its depth to the round trip', () => {
    expect(isCanonicalJson(`${'['.repeat(600)}${']'.repeat(600)}`)).toBe(false);
    expect(isCanonicalJson(`${'['.repeat(500)}${']'.repeat(500)}`)).toBe(true);
  });
});
