import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REMOVED_APPEARANCES_SQL } from '../../src/db/removed-appearances.js';
import type { Store } from '../../src/db/store.js';
import { bodyHash } from '../../src/sync/body-hash.js';
import { STORE_KINDS, storeMaker, storeRows, type StoreKind } from '../helpers/postgres.js';
import { cleanupScope } from '../helpers/scope.js';
import { commitListing } from '../helpers/store-runs.js';

// removedAppearances answers, for uuids a run's diff may give back, each slot whose newest version
// is closed. A run that changes every entry adds a version to each slot, so the answer must be
// found by slot (versions_slot_idx) without reading the versions a slot has had: the query read
// every closed version of the uuid, each with a subquery over them all, and a run's commit grew
// with the history it kept.

const uuid = (n: number): string => n.toString(36).padStart(32, '0');
const body = (n: number, state: string): string => JSON.stringify({ uuid: uuid(n), state });

/** Runs of history: deep enough that reading a uuid's versions shows in what a query reads. */
const RUNS = 30;
/** Uuids listed in every run, each changed every run. */
const KEPT = Array.from({ length: 20 }, (_, i) => 10 + i);

/**
 * Uuid 1 listed twice in run 1, once in another state after (a slot of its own: both first slots
 * removed); uuid 2 removed in run 2; uuid 3 removed in run 2, back in another state (a slot of its
 * own) in the run before the last and removed again in the last.
 */
async function deepHistory(store: Store): Promise<void> {
  await commitListing(store, [
    body(1, 'x'),
    body(1, 'y'),
    body(2, 'a'),
    body(3, 'a'),
    ...KEPT.map((n) => body(n, 'r1')),
  ]);
  for (let run = 2; run <= RUNS; run++) {
    const returning = run === RUNS - 1 ? [body(3, 'back')] : [];
    await commitListing(store, [body(1, `r${run}`), ...returning, ...KEPT.map((n) => body(n, `r${run}`))]);
  }
}

interface VersionRow {
  id: number;
  uuid: string;
  slot: number;
  body: string;
  closed: number;
}

/** The answer read the plain way: every version, the newest of each slot, kept when closed. */
async function expectedRemoved(store: Store, uuids: readonly string[]): Promise<unknown[]> {
  const all = (await storeRows(
    store,
    `select id, uuid, slot, body, case when valid_to_run is null then 0 else 1 end as closed
       from versions order by id`,
  )) as unknown as VersionRow[];
  const newest = new Map<string, VersionRow>();
  for (const row of all) newest.set(`${row.uuid} ${row.slot}`, { ...row, id: Number(row.id) });
  return uuids.flatMap((u) =>
    [...newest.values()]
      .filter((v) => v.uuid === u && v.closed === 1)
      .sort((a, b) => a.slot - b.slot)
      .map((v) => ({ versionId: v.id, uuid: u, slot: v.slot, hash: bodyHash(v.body), body: v.body })),
  );
}

/** A statement with its uuids written in, for EXPLAIN on a connection of the test's own. */
function withUuids(kind: StoreKind, uuids: readonly string[]): string {
  if (kind === 'sqlite') return REMOVED_APPEARANCES_SQL.sqlite.replaceAll('?', `'${uuids[0] ?? ''}'`);
  return REMOVED_APPEARANCES_SQL.postgres.replace(
    '?::text[]',
    `array[${uuids.map((u) => `'${u}'`).join(', ')}]`,
  );
}

interface PlanNode {
  'Relation Name'?: string;
  'Index Name'?: string;
  'Node Type': string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Rows PostgreSQL read of `versions` in an EXPLAIN ANALYZE, and the ways it read them. */
function versionReads(node: PlanNode): { rows: number; ways: string[] } {
  const own =
    node['Relation Name'] === 'versions'
      ? {
          rows:
            (node['Actual Rows'] +
              (node['Rows Removed by Filter'] ?? 0) +
              (node['Rows Removed by Index Recheck'] ?? 0)) *
            node['Actual Loops'],
          ways: [`${node['Node Type']} ${node['Index Name'] ?? ''}`.trim()],
        }
      : { rows: 0, ways: [] };
  return (node.Plans ?? [])
    .map(versionReads)
    .reduce((sum, r) => ({ rows: sum.rows + r.rows, ways: [...sum.ways, ...r.ways] }), own);
}

describe.each(STORE_KINDS)('the removed appearances of a deep history, on %s', (kind) => {
  const fresh = storeMaker(kind);
  const scope = cleanupScope();
  let store: Store;

  beforeAll(async () => {
    store = await fresh(scope.defer);
    await deepHistory(store);
  }, 120_000);
  afterAll(() => scope.close());

  it('answers each slot whose newest version is closed, the newest of them, in the order asked', async () => {
    const asked = [uuid(3), uuid(1), uuid(10), uuid(2), uuid(99)];
    const found = await store.removedAppearances(asked, bodyHash);
    expect(found).toEqual(await expectedRemoved(store, asked));
    expect(found.map((r) => [r.uuid, r.slot, r.body])).toEqual([
      [uuid(3), 0, body(3, 'a')],
      [uuid(3), 1, body(3, 'back')],
      [uuid(1), 0, body(1, 'x')],
      [uuid(1), 1, body(1, 'y')],
      [uuid(2), 0, body(2, 'a')],
    ]);
    expect(await store.removedAppearances([], bodyHash)).toEqual([]);
  });

  it('finds them by slot, never reading the versions a slot has had', async () => {
    const asked = [uuid(1), ...KEPT.map(uuid)];
    if (kind === 'sqlite') {
      const plan = await storeRows(store, `explain query plan ${withUuids(kind, asked)}`);
      // Each search of versions seeks one slot's first or newest entry, or one row by id.
      expect(plan.map((step) => step.detail)).toEqual([
        'CO-ROUTINE slots',
        'SETUP',
        'SEARCH versions USING COVERING INDEX versions_slot_idx (uuid=?)',
        'RECURSIVE STEP',
        'SCAN slots',
        'CORRELATED SCALAR SUBQUERY 2',
        'SEARCH w USING COVERING INDEX versions_slot_idx (uuid=? AND slot>?)',
        'SCAN slots',
        'SEARCH v USING INTEGER PRIMARY KEY (rowid=?)',
        'CORRELATED SCALAR SUBQUERY 4',
        'SEARCH w USING COVERING INDEX versions_slot_idx (uuid=? AND slot=?)',
        'USE TEMP B-TREE FOR ORDER BY',
      ]);
      return;
    }
    await storeRows(store, 'analyze versions');
    const [explained] = await storeRows(store, `explain (analyze, format json) ${withUuids(kind, asked)}`);
    const [top] = explained?.['QUERY PLAN'] as [{ Plan: PlanNode }];
    const reads = versionReads(top.Plan);
    expect(reads.ways.every((way) => way.endsWith('versions_slot_idx'))).toBe(true);
    // Per uuid: its first slot, the slot after (uuid 1 has two), the newest version of each.
    expect(reads.rows).toBeLessThanOrEqual(asked.length * 3 + 2);
  });
});
