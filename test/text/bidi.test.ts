import { describe, expect, it } from 'vitest';
import { balancedBidi, isolatedText } from '../../src/text/bidi.js';
import { bidiLeaks, openControls } from '../helpers/bidi.js';

const [LRE, RLE, PDF, LRO, RLO] = ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e'];
const [LRI, RLI, FSI, PDI] = ['\u2066', '\u2067', '\u2068', '\u2069'];

/** Fields an attacker would write: overrides left open, a stray end before them, isolates, nesting. */
const HOSTILE = [
  `Ann${RLO}evil`,
  `Ann${PDI}${RLO}evil`,
  `Ann${PDF}${PDI}${PDF}${RLO}evil`,
  `${LRI}x`,
  `${RLI}${RLO}${LRE}deep`,
  `${FSI}a${PDI}${PDI}${RLO}b`,
  `${RLO.repeat(200)}many`,
  `first${RLO}line\nsecond${RLE}line`,
  `ok${RLO}a${PDF}b${LRO}c`,
  `${RLI}a${LRO}b${PDI}c${RLO}`,
];

describe('balancedBidi', () => {
  it.each<[string, string, string]>([
    ['text without controls, as it is', 'Zoë Dvořák', 'Zoë Dvořák'],
    ['an override left open, closed at the end', `Ann${RLO}evil`, `Ann${RLO}evil${PDF}`],
    ['a stray end before it, left out', `Ann${PDI}${RLO}evil`, `Ann${RLO}evil${PDF}`],
    ['balanced controls, kept', `a${RLE}b${PDF}c${RLI}d${PDI}`, `a${RLE}b${PDF}c${RLI}d${PDI}`],
    [
      'an isolate and an embedding in it, closed innermost first',
      `${RLI}a${LRO}b`,
      `${RLI}a${LRO}b${PDF}${PDI}`,
    ],
    ['a PDI closes the embeddings within its isolate', `${RLI}a${LRO}b${PDI}c`, `${RLI}a${LRO}b${PDI}c`],
    ['a PDF never closes past an isolate', `${RLO}${LRI}a${PDF}b`, `${RLO}${LRI}ab${PDI}${PDF}`],
    ['closed before a paragraph separator too', `a${RLO}b\nc${RLE}d`, `a${RLO}b${PDF}\nc${RLE}d${PDF}`],
  ])('%s', (_case, text, balanced) => {
    expect(balancedBidi(text)).toBe(balanced);
  });

  it.each(HOSTILE)('leaves nothing open after %j, in an isolate or not', (field) => {
    expect(bidiLeaks(`${balancedBidi(field)} joined`, ['joined'])).toEqual([]);
    expect(bidiLeaks(`${FSI}${balancedBidi(field)}${PDI} joined`, ['joined'])).toEqual([]);
    // The isolate around the field holds until the field's end (or its paragraph's): no stray end closes it early.
    if (field.includes('\n')) return;
    const open = openControls(`${FSI}${balancedBidi(field)}${PDI}`);
    expect(open.slice(1, -2).every((controls) => controls[0] === 'FSI' || controls.length === 0)).toBe(true);
  });
});

describe('isolatedText', () => {
  it.each<[string, string, string]>([
    ['Latin, digits and punctuation, as they are', 'José Álvarez (QA), 2nd', 'José Álvarez (QA), 2nd'],
    ['Greek, Cyrillic and CJK, as they are', 'Ζωή Жанна 王芳', 'Ζωή Жанна 王芳'],
    ['a right-to-left name, in an isolate', 'مريم الحسن', `${FSI}مريم الحسن${PDI}`],
    ['a Hebrew one too', 'דוד', `${FSI}דוד${PDI}`],
    ['an override, balanced in an isolate', `Ann${PDI}${RLO}evil`, `${FSI}Ann${RLO}evil${PDF}${PDI}`],
    ['a right-to-left mark alone', 'a\u200fb', `${FSI}a\u200fb${PDI}`],
    ['each paragraph in its own isolate', `a${RLO}b\r\nc`, `${FSI}a${RLO}b${PDF}${PDI}\r\n${FSI}c${PDI}`],
    ['an empty text, as it is', '', ''],
  ])('%s', (_case, text, isolated) => {
    expect(isolatedText(text)).toBe(isolated);
  });

  it.each(HOSTILE)('keeps %j to itself: nothing open at the words after it', (field) => {
    expect(
      bidiLeaks(`${isolatedText(field)} joined as ${isolatedText(field)} today`, ['joined', 'today']),
    ).toEqual([]);
  });
});
