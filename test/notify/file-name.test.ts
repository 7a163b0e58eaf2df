import { describe, expect, it } from 'vitest';
import { fileNameOf, parsedFileNameOf } from '../../src/notify/describe-change.js';

/** A small seeded generator: the same texts every run. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const SCHEMES = ['http://', 'https://', 'HTTP://', 'Https://', 'ftp://', 'http:/', 'http:'];
const HOSTS = [
  'media.example.test',
  '127.0.0.1',
  '255.255.255.255',
  '256.1.1.1',
  '1.2.3',
  '1.2.3.4.5',
  '010.0.0.1',
  '0x7f.0.0.1',
  'a..b',
  '-a-',
  'x1',
  '1x',
  'a.1',
  'a.b.',
  '',
  'a b',
  'ex%41mple',
  'exämple.test',
  '[::1]',
  'user@host',
];
const PORTS = ['', ':80', ':8766', ':9999', ':65535', ':65536', ':', ':x'];
const SEGMENTS = [
  'photo.jpg',
  'a',
  '',
  '.',
  '..',
  '.hidden',
  '..x',
  'x..',
  '%2e',
  '%2E%2e',
  'a%20b.png',
  '%E2%82%AC.png',
  '%ZZ',
  'a b',
  "it's(1)!*,;=:@~$&+",
  'é.png',
  'a\\b',
  'x?y=1',
  'x#frag',
  'tab\there',
  'q^',
  'Ω',
];

describe('fileNameOf', () => {
  it('names the file the WHATWG parser finds, for every URL, plain or not (2,000 seeded texts)', () => {
    const next = rng(21);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    for (let i = 0; i < 2000; i++) {
      const segments = Array.from({ length: Math.floor(next() * 4) }, () => pick(SEGMENTS));
      const path = segments.map((s) => `/${s}`).join('') + (next() < 0.2 ? '/' : '');
      const text = `${pick(SCHEMES)}${pick(HOSTS)}${pick(PORTS)}${path}`;
      expect(fileNameOf(text), text).toBe(parsedFileNameOf(text));
    }
  });

  it('reads a media URL without the parser, and leaves anything else to it', () => {
    expect(fileNameOf('http://127.0.0.1:8766/media/emoji/abc-31.png')).toBe('abc-31.png');
    expect(fileNameOf('https://cdn.example.test/a/b/')).toBe('b');
    expect(fileNameOf('https://cdn.example.test/')).toBeNull();
    expect(fileNameOf('https://cdn.example.test')).toBeNull();
    expect(fileNameOf('https://cdn.example.test/a%20b.png')).toBe('a b.png');
    expect(fileNameOf('https://cdn.example.test/a/..')).toBeNull();
    expect(fileNameOf('not a url')).toBeNull();
  });
});
