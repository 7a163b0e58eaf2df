import { describe, expect, it } from 'vitest';
import { bodyHash } from '../../src/sync/body-hash.js';
import {
  diffFields,
  diffListing as diffWith,
  type CurrentAppearance,
  type DiffInput,
  type ListingEntry,
} from '../../src/sync/diff.js';

const body = (uuid: string, name: string, post = 'Dev') => JSON.stringify({ uuid, name, post });
const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const C = 'c'.repeat(32);

// Version id → stored body, as the store would answer `bodyOf`.
const bodies = new Map<number, string>();
function current(...items: [string, number, string][]): CurrentAppearance[] {
  return items.map(([uuid, slot, json], i) => {
    bodies.set(i + 1, json);
    return { versionId: i + 1, uuid, slot, hash: bodyHash(json) };
  });
}
const listing = (...items: [string, string][]): ListingEntry[] =>
  items.map(([uuid, json]) => ({ uuid, json, hash: bodyHash(json) }));
const diffListing = (input: Omit<DiffInput, 'bodyOf'>) =>
  diffWith({ ...input, bodyOf: (id) => bodies.get(id) ?? '' });

describe('diffListing', () => {
  it('first run: everyone added, each appearance of a repeated uuid in its own slot', () => {
    const result = diffListing({
      current: [],
      known: new Map(),
      listing: listing([A, body(A, 'Ann')], [B, body(B, 'Bo')], [A, body(A, 'Ann', 'Lead')]),
    });
    expect(result.counts).toEqual({ added: 3, changed: 0, removed: 0, returned: 0, unchanged: 0 });
    expect(result.newCoworkers).toEqual([A, B]);
    expect(result.placements).toEqual([
      { kind: 'new', uuid: A, slot: 0, body: body(A, 'Ann'), hash: bodyHash(body(A, 'Ann')), replaces: null },
      { kind: 'new', uuid: B, slot: 0, body: body(B, 'Bo'), hash: bodyHash(body(B, 'Bo')), replaces: null },
      {
        kind: 'new',
        uuid: A,
        slot: 1,
        body: body(A, 'Ann', 'Lead'),
        hash: bodyHash(body(A, 'Ann', 'Lead')),
        replaces: null,
      },
    ]);
    expect(result.events.map((e) => [e.uuid, e.slot, e.kind])).toEqual([
      [A, 0, 'added'],
      [B, 0, 'added'],
      [A, 1, 'added'],
    ]);
  });

  it('a reordering alone, even of a repeated uuid, is no change', () => {
    const cur = current([A, 0, body(A, 'Ann')], [B, 0, body(B, 'Bo')], [A, 1, body(A, 'Ann', 'Lead')]);
    const result = diffListing({
      current: cur,
      known: new Map([
        [A, false],
        [B, false],
      ]),
      listing: listing([A, body(A, 'Ann', 'Lead')], [B, body(B, 'Bo')], [A, body(A, 'Ann')]),
    });
    expect(result.events).toEqual([]);
    expect(result.counts.unchanged).toBe(3);
    expect(result.placements).toEqual([
      { kind: 'keep', versionId: 3 },
      { kind: 'keep', versionId: 2 },
      { kind: 'keep', versionId: 1 },
    ]);
  });

  it('identical appearances match first, the rest in listing order', () => {
    const cur = current([A, 0, body(A, 'Ann')], [A, 1, body(A, 'Ann', 'Lead')]);
    const result = diffListing({
      current: cur,
      known: new Map([[A, false]]),
      // slot 1 moved first and changed its post; slot 0 is unchanged but now second
      listing: listing([A, body(A, 'Ann', 'CTO')], [A, body(A, 'Ann')]),
    });
    expect(result.events).toEqual([
      { uuid: A, slot: 1, kind: 'changed', field: 'post', oldValue: '"Lead"', newValue: '"CTO"' },
    ]);
    expect(result.closedVersionIds).toEqual([2]);
    expect(result.counts).toEqual({ added: 0, changed: 1, removed: 0, returned: 0, unchanged: 1 });
  });

  it('appearances that swap places while their keys are reordered are matched by content: no field change', () => {
    const a = JSON.stringify({ uuid: A, name: 'Ann', post: 'Dev' });
    const b = JSON.stringify({ uuid: A, name: 'Ann', post: 'Lead' });
    const bReordered = JSON.stringify({ post: 'Lead', name: 'Ann', uuid: A });
    const aReordered = JSON.stringify({ post: 'Dev', name: 'Ann', uuid: A });
    const result = diffListing({
      current: current([A, 0, a], [A, 1, b]),
      known: new Map([[A, false]]),
      listing: listing([A, bReordered], [A, aReordered]),
    });
    expect(result.events).toEqual([]);
    expect(result.counts).toEqual({ added: 0, changed: 0, removed: 0, returned: 0, unchanged: 2 });
    expect(result.placements).toMatchObject([
      { kind: 'new', slot: 1, body: bReordered },
      { kind: 'new', slot: 0, body: aReordered },
    ]);
  });

  it('removal of a uuid tombstones it; its return is one returned event', () => {
    const removed = diffListing({
      current: current([A, 0, body(A, 'Ann')], [B, 0, body(B, 'Bo')]),
      known: new Map([
        [A, false],
        [B, false],
      ]),
      listing: listing([B, body(B, 'Bo')]),
    });
    expect(removed.removedCoworkers).toEqual([A]);
    expect(removed.events).toEqual([
      { uuid: A, slot: 0, kind: 'removed', field: null, oldValue: body(A, 'Ann'), newValue: null },
    ]);
    const back = diffListing({
      current: current([B, 0, body(B, 'Bo')]),
      known: new Map([
        [A, true],
        [B, false],
      ]),
      listing: listing([A, body(A, 'Ann')], [B, body(B, 'Bo')]),
    });
    expect(back.returnedCoworkers).toEqual([A]);
    expect(back.newCoworkers).toEqual([]);
    expect(back.events.map((e) => e.kind)).toEqual(['returned']);
    expect(back.counts).toEqual({ added: 0, changed: 0, removed: 0, returned: 1, unchanged: 1 });
  });

  it('one appearance of a repeated uuid removed: a removed event for that appearance only', () => {
    const result = diffListing({
      current: current([A, 0, body(A, 'Ann')], [C, 0, body(C, 'Cy')], [A, 1, body(A, 'Ann', 'Lead')]),
      known: new Map([
        [A, false],
        [C, false],
      ]),
      listing: listing([A, body(A, 'Ann')], [C, body(C, 'Cy')]),
    });
    expect(result.removedCoworkers).toEqual([]);
    expect(result.events).toEqual([
      { uuid: A, slot: 1, kind: 'removed', field: null, oldValue: body(A, 'Ann', 'Lead'), newValue: null },
    ]);
  });
});

describe('diffFields', () => {
  it.each([
    ['same', '{"a":1,"b":[1]}', '{"a":1,"b":[1]}', []],
    ['value changed', '{"a":1}', '{"a":2}', [{ field: 'a', oldValue: '1', newValue: '2' }]],
    [
      'array changed',
      '{"i":["x"]}',
      '{"i":["x","y"]}',
      [{ field: 'i', oldValue: '["x"]', newValue: '["x","y"]' }],
    ],
    ['field appeared', '{"a":1}', '{"a":1,"n":null}', [{ field: 'n', oldValue: null, newValue: 'null' }]],
    ['field vanished', '{"a":1,"n":true}', '{"a":1}', [{ field: 'n', oldValue: 'true', newValue: null }]],
    ['key order only', '{"a":1,"b":2}', '{"b":2,"a":1}', []],
  ])('%s', (_name, before, after, expected) => {
    expect(diffFields(before, after)).toEqual(expected);
  });
});
