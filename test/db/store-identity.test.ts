import { describe, expect, it } from 'vitest';
import { mirrorIdOf } from '../../src/db/store-identity.js';
import { STORE_KINDS, storeOpener, storeRows } from '../helpers/postgres.js';

describe.each(STORE_KINDS)('store_identity on %s', (kind) => {
  const opener = storeOpener(kind);

  it('keeps the first value asked for: later asks, and another connection asking at once, read that one', async () => {
    const store = await opener.open();
    const other = await opener.another(store);
    const made: string[] = [];
    const fresh = (value: string) => () => (made.push(value), value);
    const answers = await Promise.all([
      store.identityValue('mirror_id', fresh('first')),
      other.identityValue('mirror_id', fresh('second')),
    ]);
    expect(answers[0]).toBe(answers[1]);
    expect(await store.identityValue('mirror_id', fresh('third'))).toBe(answers[0]);
    expect(await other.identityValue('mirror_id', fresh('fourth'))).toBe(answers[0]);
    expect(made.length).toBeLessThanOrEqual(2);
    expect(await storeRows(store, 'select name, value from store_identity')).toEqual([
      { name: 'mirror_id', value: answers[0] },
    ]);
  });

  it("a database's mirror id is a random UUID, another database's another", async () => {
    const [a, b] = [await opener.open(), await opener.open()];
    const [idA, idB] = [await mirrorIdOf(a), await mirrorIdOf(b)];
    expect(idA).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(idB).not.toBe(idA);
    expect(await mirrorIdOf(a)).toBe(idA);
  });
});
