import { describe, expect, it } from 'vitest';
import { validatePage } from '../../src/upstream/validate.js';
import { catchMirrorError } from './harness.js';
import { makeEntry } from './fake-drf.js';

function pageOf(results: unknown[], extra: Record<string, unknown> = {}): unknown {
  return { count: results.length, next: null, previous: null, results, ...extra };
}

const good = makeEntry(1);
const uuid = good.uuid;
const nameless = Object.fromEntries(Object.entries(good).filter(([key]) => key !== 'name'));

describe('validatePage', () => {
  it('keeps every entry as JSON in the upstream key order, with its uuid and index', () => {
    const reordered = {
      images: [],
      uuid,
      show_image: true,
      name: 'N',
      post: 'P',
      emoji_file_webm: null,
      emoji_file: null,
    };
    const page = validatePage(pageOf([good, reordered]), 3);
    expect(page.entries).toEqual([
      { index: 0, uuid, json: JSON.stringify(good) },
      { index: 1, uuid, json: JSON.stringify(reordered) },
    ]);
    expect(page.entries[1]?.json.startsWith('{"images":[],"uuid"')).toBe(true);
  });

  it('collects unknown entry fields once per page at their first entry, and envelope extras apart', () => {
    const results = [good, makeEntry(2, { team: 'a' }), makeEntry(3, { team: 'b', level: 2 })];
    const page = validatePage(pageOf(results, { page_size: 8 }), 4);
    expect(page.unknownFields).toEqual([
      { field: 'team', page: 4, index: 1 },
      { field: 'level', page: 4, index: 2 },
    ]);
    expect(page.unknownEnvelopeFields).toEqual(['page_size']);
    expect(JSON.parse(page.entries[2]?.json ?? '{}')).toMatchObject({ team: 'b', level: 2 });
  });

  // Each row: what is wrong, the bad entry, and the message the operator reads.
  const badEntries: [string, unknown, string][] = [
    ['wrong type', { ...good, show_image: 'yes' }, `field "show_image": expected boolean, received "yes"`],
    ['missing field', nameless, `field "name": expected string, received nothing (field missing)`],
    [
      'bad uuid',
      { ...good, uuid: 'ABC' },
      `entry 5 (uuid "ABC"): field "uuid": expected 32 lowercase letters or digits, received "ABC"`,
    ],
    [
      'relative image URL',
      { ...good, images: ['a.png', '/b.png'] },
      `field "images[0]": expected an absolute http(s) URL, received "a.png"`,
    ],
    [
      'emoji not a URL',
      { ...good, emoji_file: 'ftp://x/y' },
      `field "emoji_file": expected an absolute http(s) URL, received "ftp://x/y"`,
    ],
    ['entry not an object', 42, `entry 5: expected object, received 42`],
    [
      'long value truncated',
      { ...good, post: 7, name: 'x'.repeat(500) },
      `field "post": expected string, received 7`,
    ],
  ];

  it.each(badEntries)('names page, entry, field and value: %s', async (_label, bad, expected) => {
    const results = [good, good, good, good, good, bad];
    const error = await catchMirrorError(() => Promise.resolve(validatePage(pageOf(results), 3)));
    expect(error.code).toBe('UPSTREAM_SCHEMA');
    expect(error.message).toMatch(/^page 3, entry 5/);
    expect(error.message).toContain(expected);
    expect(error.details).toMatchObject({ page: 3, index: 5 });
  });

  it('truncates a long received value in the message', async () => {
    const error = await catchMirrorError(() =>
      Promise.resolve(validatePage(pageOf([{ ...good, show_image: 'y'.repeat(1000) }]), 1)),
    );
    expect(error.message.length).toBeLessThan(300);
    expect(error.message).toContain('(1002 chars)');
  });

  it.each([
    ['not an object', [], 'page 2: envelope expected object, received []'],
    [
      'count missing',
      { next: null, previous: null, results: [] },
      'page 2: envelope field "count": expected number, received nothing',
    ],
    [
      'negative count',
      { count: -1, next: null, previous: null, results: [] },
      'page 2: envelope field "count"',
    ],
    [
      'relative next',
      { count: 0, next: '?page=3', previous: null, results: [] },
      'field "next": expected an absolute http(s) URL, received "?page=3"',
    ],
    [
      'results not a list',
      { count: 0, next: null, previous: null, results: {} },
      'field "results": expected array',
    ],
  ])('rejects a bad envelope: %s', async (_label, body, expected) => {
    const error = await catchMirrorError(() => Promise.resolve(validatePage(body, 2)));
    expect(error.code).toBe('UPSTREAM_SCHEMA');
    expect(error.message).toContain(expected);
  });
});
