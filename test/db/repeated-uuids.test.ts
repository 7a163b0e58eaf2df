import { describe, expect, it } from 'vitest';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import { stagedEntries } from '../helpers/store-runs.js';

// RunStage.repeatedUuids answers how many uuids the staged listing repeats and the first few of
// them in listing order, from one grouping of the stage (the count rides on a window over the
// groups). The count must not be cut by the limit, and a listing without repeats answers 0.

const uuid = (n: number): string => n.toString(36).padStart(32, '0');
const body = (n: number, name = `Person ${n}`): string => JSON.stringify({ uuid: uuid(n), name });

describe.each(STORE_KINDS)('the repeated uuids of a stage, on %s', (kind) => {
  const fresh = storeMaker(kind);

  async function repeated(bodies: string[], limits: number[]): Promise<unknown[]> {
    const store = await fresh();
    const run = await store.beginRun('http://upstream.invalid');
    const stage = await store.openStage(run.id);
    try {
      await stage.append(stagedEntries(bodies, 8));
      const answers = [];
      for (const limit of limits) answers.push(await stage.repeatedUuids(limit));
      return answers;
    } finally {
      await stage.close();
      await store.releaseRun(run.id);
    }
  }

  it('counts every repeated uuid and lists the first ones by their first appearance', async () => {
    // 25 uuids listed twice, interleaved with uuids listed once; uuid 30 + i first appears before
    // uuid 30 + j when i < j, whatever their order as text.
    const once = Array.from({ length: 40 }, (_, i) => body(1000 + i));
    const twice = Array.from({ length: 25 }, (_, i) => 54 - i);
    const bodies = [
      ...twice.flatMap((n, i) => [body(n), once[i] ?? body(2000 + i)]),
      ...once.slice(25),
      ...twice.map((n) => body(n, 'Moved')),
    ];
    const inOrder = twice.map(uuid);
    expect(await repeated(bodies, [20, 0, 100, 1])).toEqual([
      { count: 25, first: inOrder.slice(0, 20) },
      { count: 25, first: [] },
      { count: 25, first: inOrder },
      { count: 25, first: inOrder.slice(0, 1) },
    ]);
  });

  it('answers none for a listing without repeats, or an empty one', async () => {
    const none = { count: 0, first: [] };
    expect(await repeated([body(1), body(2), body(3)], [20, 0])).toEqual([none, none]);
    expect(await repeated([], [20])).toEqual([none]);
  });
});
