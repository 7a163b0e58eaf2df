import { describe, expect, it } from 'vitest';
import { filepathToUri, slugify } from '../../src/simulated-upstream/media-url.js';
import { generateCoworkers } from '../../src/simulated-upstream/index.js';
import { coworkerSchema } from '../../src/upstream/contract.js';

const FIELD_ORDER = ['uuid', 'name', 'post', 'emoji_file', 'emoji_file_webm', 'show_image', 'images'];

describe('generateCoworkers', () => {
  it('is deterministic: same seed, same rows; another seed, other rows', () => {
    expect(generateCoworkers(42, 200)).toEqual(generateCoworkers(42, 200));
    expect(generateCoworkers(43, 200)).not.toEqual(generateCoworkers(42, 200));
    // A longer listing starts with the shorter one: counts do not reshuffle the data.
    expect(generateCoworkers(42, 300).slice(0, 200)).toEqual(generateCoworkers(42, 200));
  });

  it('makes rows that pass the contract schema, in the serializer field order', () => {
    for (const seed of [1, 2, 3, 99]) {
      for (const row of generateCoworkers(seed, 500)) {
        expect(() => coworkerSchema.parse(row)).not.toThrow();
        expect(Object.keys(row)).toEqual(FIELD_ORDER);
        expect(row.emoji_file_webm).toBeNull();
        expect(row.images.length).toBeLessThanOrEqual(2);
      }
    }
  });

  it('covers the awkward cases the contract allows', () => {
    const rows = generateCoworkers(1, 2000);
    const names = rows.map((row) => row.name);
    const posts = new Set(rows.map((row) => row.post));
    expect(names.some((name) => !name.includes(' '))).toBe(true);
    expect(names.some((name) => /[^\x20-\x7e]/.test(name))).toBe(true);
    expect(names.some((name) => /\p{Script=Han}/u.test(name))).toBe(true);
    expect(names.some((name) => /\p{Extended_Pictographic}/u.test(name))).toBe(true);
    expect(names.some((name) => name.includes('"'))).toBe(true);
    expect(names.some((name) => name.includes("'"))).toBe(true);
    for (const post of ['QA Engineer', 'qa engineer', 'HEAD OF DESIGN', 'Head of "Fun"', '']) {
      expect(posts.has(post), post).toBe(true);
    }
    const emoji = rows.map((row) => row.emoji_file);
    expect(emoji.some((url) => url?.endsWith('.png'))).toBe(true);
    expect(emoji.some((url) => url?.endsWith('.mp4'))).toBe(true);
    expect(emoji.some((url) => url === null)).toBe(true);
    expect(new Set(rows.map((row) => row.images.length))).toEqual(new Set([0, 1, 2]));
    expect(new Set(rows.map((row) => row.show_image))).toEqual(new Set([true, false]));
    expect(
      rows.every((row) =>
        (row.emoji_file ?? 'http://127.0.0.1:8766/media/').startsWith('http://127.0.0.1:8766/media/'),
      ),
    ).toBe(true);
  });

  it.each([
    { dupRate: 0, repeated: 0 },
    { dupRate: 0.15, repeated: [200, 400] },
    { dupRate: 0.5, repeated: [800, 1200] },
  ])('repeats uuids at about dupRate $dupRate, with differing fields', ({ dupRate, repeated }) => {
    const rows = generateCoworkers(5, 2000, { dupRate });
    const distinct = new Set(rows.map((row) => row.uuid)).size;
    if (typeof repeated === 'number') expect(rows.length - distinct).toBe(repeated);
    else {
      expect(rows.length - distinct).toBeGreaterThanOrEqual(repeated[0] ?? 0);
      expect(rows.length - distinct).toBeLessThanOrEqual(repeated[1] ?? 0);
    }
    const seen = new Map<string, string>();
    for (const row of rows) {
      const json = JSON.stringify(row);
      const earlier = seen.get(row.uuid);
      if (earlier !== undefined) expect(json).not.toBe(earlier);
      seen.set(row.uuid, json);
    }
  });

  it('puts media under the given base URL', () => {
    const rows = generateCoworkers(1, 300, { mediaBaseUrl: 'https://cdn.example/m' });
    const urls = rows.flatMap((row) => [row.emoji_file, ...row.images]).filter((url) => url !== null);
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.every((url) => url.startsWith('https://cdn.example/m/team/'))).toBe(true);
  });
});

describe('media names as Django writes them', () => {
  it.each([
    ["team/emoji/Seán O'Brien.png", "team/emoji/Se%C3%A1n%20O'Brien.png"],
    ['team/images/Kate 🌸 photo 1.jpg', 'team/images/Kate%20%F0%9F%8C%B8%20photo%201.jpg'],
    ['team/images/José Álvarez photo 2.jpg', 'team/images/Jos%C3%A9%20%C3%81lvarez%20photo%202.jpg'],
    ['a~b!c*(d)#e?f&g', 'a~b!c*(d)%23e%3Ff%26g'],
  ])('filepathToUri(%j) = %j', (input, expected) => {
    expect(filepathToUri(input)).toBe(expected);
  });

  it.each([
    ['Łukasz Wiśniewski', 'ukasz-wisniewski'],
    ['José Álvarez', 'jose-alvarez'],
    ["Seán O'Brien", 'sean-obrien'],
    ['王雨桐', ''],
    ['Kate 🌸', 'kate'],
  ])('slugify(%j) = %j', (input, expected) => {
    expect(slugify(input)).toBe(expected);
  });
});
