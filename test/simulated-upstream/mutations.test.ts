import { describe, expect, it } from 'vitest';
import { SimulatedData, type SimulatedEntry } from '../../src/simulated-upstream/index.js';
import { coworkerSchema } from '../../src/upstream/contract.js';

function listing(seed = 11, count = 40): SimulatedData {
  return new SimulatedData({ seed, count });
}

const uuids = (rows: readonly SimulatedEntry[]): string[] => rows.map((row) => String(row.uuid));

describe('SimulatedData mutations describe exactly what they changed', () => {
  it.each(['start', 'end', 'random'] as const)('add(3, %s) inserts 3 new uuids where it says', (at) => {
    const data = listing();
    const before = data.entries();
    const change = data.add(3, at);
    if (change.kind !== 'add') throw new Error(change.kind);
    const after = data.entries();
    expect(change.count).toBe(43);
    expect(change.added).toHaveLength(3);
    for (const { index, entry } of change.added) {
      expect(after[index]).toBe(entry);
      expect(uuids(before)).not.toContain(entry.uuid);
      expect(() => coworkerSchema.parse(entry)).not.toThrow();
    }
    const addedIndexes = new Set(change.added.map((placed) => placed.index));
    expect(after.filter((_, i) => !addedIndexes.has(i))).toEqual(before);
    if (at === 'start') expect([...addedIndexes]).toEqual([0, 1, 2]);
    if (at === 'end') expect([...addedIndexes]).toEqual([40, 41, 42]);
  });

  it.each([undefined, 'name', 'post', 'emoji_file', 'show_image', 'images', 'emoji_file_webm'])(
    'edit(4, %s) changes exactly one field of 4 rows',
    (field) => {
      const data = listing();
      const before = data.entries();
      const change = data.edit(4, field);
      if (change.kind !== 'edit') throw new Error(change.kind);
      const after = data.entries();
      expect(change.edited).toHaveLength(4);
      const edited = new Set(change.edited.map((edit) => edit.index));
      after.forEach((row, i) => {
        if (!edited.has(i)) expect(row).toBe(before[i]);
      });
      for (const edit of change.edited) {
        if (field) expect(edit.field).toBe(field);
        const old = before[edit.index] ?? {};
        expect(edit.uuid).toBe(old.uuid);
        expect(edit.before).toEqual(old[edit.field]);
        expect(edit.after).not.toEqual(edit.before);
        expect(after[edit.index]).toEqual({ ...old, [edit.field]: edit.after });
        expect(Object.keys(after[edit.index] ?? {})).toEqual(Object.keys(old));
        expect(() => coworkerSchema.parse(after[edit.index])).not.toThrow();
      }
    },
  );

  it('remove(2) takes every appearance of 2 uuids, and restore brings them back unchanged', () => {
    const data = listing(11, 60);
    const before = data.entries();
    const change = data.remove(2);
    if (change.kind !== 'remove') throw new Error(change.kind);
    expect(change.removedUuids).toHaveLength(2);
    const gone = new Set(change.removedUuids);
    expect(change.removed).toEqual(
      before.flatMap((entry, index) => (gone.has(String(entry.uuid)) ? [{ index, entry }] : [])),
    );
    expect(data.entries()).toEqual(before.filter((entry) => !gone.has(String(entry.uuid))));
    expect(data.removedUuids()).toEqual(change.removedUuids);

    const [first, second] = change.removedUuids as [string, string];
    const restored = data.restore(first);
    if (restored.kind !== 'restore') throw new Error(restored.kind);
    expect(restored.restoredUuids).toEqual([first]);
    for (const { index, entry } of restored.restored) {
      expect(entry.uuid).toBe(first);
      expect(data.entries()[index]).toBe(entry);
    }
    const back = data.returnRemoved(5);
    if (back.kind !== 'restore') throw new Error(back.kind);
    expect(back.restoredUuids).toEqual([second]);
    expect(data.entries()).toEqual(before);
    expect(() => data.restore(first)).toThrow(RangeError);
  });

  it('reorder() keeps the rows and reports both orders', () => {
    const data = listing();
    const before = data.entries();
    const change = data.reorder();
    if (change.kind !== 'reorder') throw new Error(change.kind);
    expect(change.before).toEqual(uuids(before));
    expect(change.after).toEqual(uuids(data.entries()));
    expect(change.after).not.toEqual(change.before);
    expect([...change.after].sort()).toEqual([...change.before].sort());
  });

  it('duplicate(uuid) adds another appearance with the same uuid and name but differing fields', () => {
    const data = listing();
    const original = data.entries()[5] ?? {};
    const change = data.duplicate(String(original.uuid));
    if (change.kind !== 'duplicate') throw new Error(change.kind);
    const [placed] = change.added;
    expect(change.added).toHaveLength(1);
    expect(data.entries()[placed?.index ?? -1]).toBe(placed?.entry);
    expect(placed?.entry.uuid).toBe(original.uuid);
    expect(placed?.entry.name).toBe(original.name);
    expect(placed?.entry).not.toEqual(original);
    expect(data.count).toBe(41);
    expect(() => data.duplicate('z'.repeat(32))).toThrow(RangeError);
  });

  it('mutateRandomly() is deterministic per seed and always leaves a valid listing', () => {
    const a = listing(3, 30);
    const b = listing(3, 30);
    const kinds = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const change = a.mutateRandomly();
      expect(b.mutateRandomly()).toEqual(change);
      expect(change.count).toBe(a.count);
      kinds.add(change.kind);
    }
    expect(a.entries()).toEqual(b.entries());
    expect(kinds).toEqual(new Set(['add', 'edit', 'remove', 'restore', 'duplicate', 'reorder']));
    for (const row of a.entries()) expect(() => coworkerSchema.parse(row)).not.toThrow();
  });

  it('setEntries copies the given rows and bumps the version', () => {
    const data = listing();
    const rows = [{ uuid: 'x'.repeat(32), anything: ['goes'] }];
    const version = data.version;
    expect(data.setEntries(rows)).toEqual({ kind: 'set', count: 1 });
    rows[0]?.anything.push('mutated by caller');
    expect(data.entries()).toEqual([{ uuid: 'x'.repeat(32), anything: ['goes'] }]);
    expect(data.version).toBeGreaterThan(version);
  });
});
