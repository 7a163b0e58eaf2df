import { describe, expect, it } from 'vitest';
import {
  countChanges,
  describeChange,
  runTitle,
  sentenceText,
  type ChangeFacts,
} from '../../src/notify/describe-change.js';
import { isolatedText } from '../../src/text/bidi.js';

const base: ChangeFacts = {
  kind: 'added',
  field: null,
  old: null,
  new: null,
  uuid: 'u1',
  slot: 0,
  name: 'Zoë Dvořák',
  post: 'QA engineer',
};

describe('describeChange: one wording for every surface (issue 22)', () => {
  it.each<[Partial<ChangeFacts>, string]>([
    [{}, 'Zoë Dvořák joined as QA engineer'],
    [{ post: '' }, 'Zoë Dvořák joined'],
    [{ kind: 'removed', name: 'Kate' }, 'Kate left'],
    [{ kind: 'returned', name: 'Seán' }, 'Seán returned as QA engineer'],
    [
      { kind: 'changed', field: 'post', old: 'qa engineer', new: 'QA lead', name: 'José Álvarez' },
      "José Álvarez: post 'qa engineer' → 'QA lead'",
    ],
    [{ kind: 'changed', field: 'show_image', old: true, new: false }, "Zoë Dvořák: show image 'yes' → 'no'"],
    [
      {
        kind: 'changed',
        field: 'images',
        old: [],
        new: ['https://media.example.com/team/a%20b.jpg', 'https://media.example.com/team/c.png'],
      },
      "Zoë Dvořák: images 'none' → 'a b.jpg, c.png'",
    ],
    [
      {
        kind: 'media_changed',
        field: 'emoji_file_webm',
        old: { url: 'https://m.example.com/e/party.webm', sha256: 'aa' },
        new: { url: 'https://m.example.com/e/party.webm', sha256: 'bb' },
      },
      'Zoë Dvořák: new emoji file webm bytes at the same address (party.webm)',
    ],
    [{ name: '  ', post: '' }, 'u1 joined'],
    [{ slot: 1, kind: 'removed' }, 'Zoë Dvořák (appearance 2) left'],
  ])('%o → %s', (facts, sentence) => {
    expect(sentenceText(describeChange({ ...base, ...facts }), isolatedText)).toBe(sentence);
  });

  it('bounds a 1 MB name to 200 bytes and says it was cut', () => {
    const words = describeChange({ ...base, name: 'é'.repeat(500_000) });
    expect(Buffer.byteLength(words.who)).toBeLessThanOrEqual(203);
    expect(words.who.endsWith('…')).toBe(true);
  });

  it('titles a run by people: joined, left, returned, changed (one person with two fields once)', () => {
    const changes: ChangeFacts[] = [
      { ...base, uuid: 'a' },
      { ...base, uuid: 'b' },
      { ...base, uuid: 'c', kind: 'removed' },
      { ...base, uuid: 'd', kind: 'changed', field: 'post' },
      { ...base, uuid: 'd', kind: 'changed', field: 'name' },
      { ...base, uuid: 'd', slot: 1, kind: 'media_changed', field: 'images' },
      { ...base, uuid: 'e', kind: 'changed', field: 'post' },
    ];
    expect(runTitle(countChanges(changes))).toBe('Team page: 2 joined, 1 left, 3 changed');
    expect(runTitle(countChanges([]))).toBe('Team page: no changes');
  });
});
