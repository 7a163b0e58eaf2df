import { CHANGE_ROWS_SQL } from '../../src/db/change-columns.js';
import { expect } from 'vitest';
import type { ChangeRow, RunRow } from '../../src/db/schema.js';
import type { CrashStore } from './crash-store.js';

/**
 * The store is sound: a SQLite file passes its integrity and foreign key checks (PostgreSQL
 * enforces its foreign keys as it writes, and its pages are the server's), one run at most holds
 * the lock, only succeeded runs left data, and the current listing is whole.
 */
export async function expectSoundDatabase(db: CrashStore): Promise<void> {
  if (db.kind === 'sqlite') {
    expect(await db.all('pragma integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    expect(await db.all('pragma foreign_key_check')).toEqual([]);
  }
  const [running] = await db.all<{ n: number }>("select count(*) as n from runs where status = 'running'");
  expect(running?.n).toBeLessThanOrEqual(1);
  expect(await leftoversOfUnfinishedRuns(db), 'rows written by runs that did not succeed').toEqual([]);
  // The current listing is made of current versions, one position each, and of all of them.
  const [current] = await db.all<{ positions: number; versions: number; listedVersions: number }>(
    `select (select count(*) from listing_positions where valid_to_run is null) as positions,
            (select count(*) from versions where valid_to_run is null) as versions,
            (select count(*) from listing_positions lp join versions v on v.id = lp.version_id
              where lp.valid_to_run is null and v.valid_to_run is null) as "listedVersions"`,
  );
  expect(current).toEqual({
    positions: current?.positions,
    versions: current?.positions,
    listedVersions: current?.positions,
  });
}

/** Data rows that name a run which is not `succeeded`: what a half-applied commit would leave. */
async function leftoversOfUnfinishedRuns(
  db: CrashStore,
): Promise<{ table: string; column: string; rows: number }[]> {
  const columns: [string, string][] = [
    ['coworkers', 'first_seen_run'],
    ['coworkers', 'removed_run'],
    ['coworkers', 'last_seen_run'],
    ['coworkers', 'last_returned_run'],
    ['versions', 'valid_from_run'],
    ['versions', 'valid_to_run'],
    ['listing_positions', 'valid_from_run'],
    ['listing_positions', 'valid_to_run'],
    ['changes', 'run_id'],
  ];
  // One query at a time: on PostgreSQL `db.all` is one client, which runs one query at a time.
  const leftovers: { table: string; column: string; rows: number }[] = [];
  for (const [table, column] of columns) {
    const [found] = await db.all<{ n: number }>(
      `select count(*) as n from ${table} where ${column} is not null and ${column} not in (select id from runs where status = 'succeeded')`,
    );
    if ((found?.n ?? 0) > 0) leftovers.push({ table, column, rows: found?.n ?? 0 });
  }
  return leftovers;
}

/** What a reader is served now: the listing of the latest successful run (exact JSON texts). */
export async function servedListing(db: CrashStore): Promise<{ runId: number; entries: string[] }> {
  const run = await db.store.latestSucceededRun();
  return run
    ? { runId: run.id, entries: (await db.store.listingAt(run)).entries }
    : { runId: 0, entries: [] };
}

/** What the campaigns read of a run: its row as stored (a dead holder's run is not shown aborted). */
export type RunRecord = Pick<
  RunRow,
  'id' | 'status' | 'holderPid' | 'errorCode' | 'errorMessage' | 'added' | 'removed' | 'returned' | 'changed'
>;

export function runsAfter(db: CrashStore, runId: number): Promise<RunRecord[]> {
  return db.all<RunRecord>(
    `select id, status, holder_pid as "holderPid", error_code as "errorCode", error_message as "errorMessage",
            added, removed, returned, changed
       from runs where id > ? order by id`,
    runId,
  );
}

export function changesAfter(db: CrashStore, runId: number): Promise<ChangeRow[]> {
  // Through the store's one reading of change rows: an added entry's body lives in its version.
  return db.all<ChangeRow>(`${CHANGE_ROWS_SQL} where c.run_id > ? order by c.id`, runId);
}

interface Appearance {
  uuid: string;
  slot: number;
  body: string;
}

/** Every appearance current after run `runId` (none for 0), keyed by uuid and slot. */
function appearancesAt(db: CrashStore, runId: number): Promise<Appearance[]> {
  return db.all<Appearance>(
    `select uuid, slot, body from versions
      where valid_from_run <= ? and (valid_to_run is null or valid_to_run > ?)`,
    runId,
    runId,
  );
}

type Fields = Record<string, unknown>;
const keyOf = (uuid: string, slot: number) => `${uuid}#${slot}`;

/** Field order is not a change (the diff compares fields), so states compare with sorted keys. */
function canonical(fields: Fields): string {
  return JSON.stringify(
    Object.fromEntries(Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  );
}

const sortedCanonical = (bodies: readonly string[]) =>
  bodies.map((b) => canonical(JSON.parse(b) as Fields)).sort();

/**
 * Replays the recorded changes, in id order, on the appearances current after `fromRun`; each row
 * must apply to exactly the state it claims to change (an event recorded twice, or a field change
 * whose old value is not what was stored, fails here). The result must be the listing `expected`.
 */
export async function expectChangesReplayTo(
  db: CrashStore,
  fromRun: number,
  fromListing: readonly string[],
  recorded: readonly ChangeRow[],
  toRun: number,
  expected: readonly string[],
): Promise<void> {
  const start = await appearancesAt(db, fromRun);
  expectSameStates(
    'versions current at the verified run vs the verified listing',
    sortedCanonical(start.map((a) => a.body)),
    sortedCanonical(fromListing),
  );
  const state = new Map<string, Fields>(
    start.map((a) => [keyOf(a.uuid, a.slot), JSON.parse(a.body) as Fields]),
  );
  for (const change of recorded) applyChange(state, change);
  expectSameStates(
    'replayed changes vs the upstream listing',
    [...state.values()].map(canonical).sort(),
    sortedCanonical(expected),
  );
  // And slot by slot, the replayed state is what the mirror holds as current.
  const current = await appearancesAt(db, toRun);
  const held = new Map(current.map((a) => [keyOf(a.uuid, a.slot), canonical(JSON.parse(a.body) as Fields)]));
  expect(held.size, 'two current versions for one appearance (uuid, slot)').toBe(current.length);
  const replayed = new Map([...state].map(([key, fields]) => [key, canonical(fields)]));
  const differing = [...new Set([...held.keys(), ...replayed.keys()])].filter(
    (key) => held.get(key) !== replayed.get(key),
  );
  expect(
    differing.slice(0, 3).map((key) => ({ key, replayed: replayed.get(key), held: held.get(key) })),
    `${differing.length} appearance(s) differ between the replay and the mirror's current versions`,
  ).toEqual([]);
}

/** Two sorted lists of states are equal; on failure, says how many differ and shows a few. */
function expectSameStates(what: string, got: readonly string[], want: readonly string[]): void {
  const remaining = new Map<string, number>();
  for (const state of want) remaining.set(state, (remaining.get(state) ?? 0) + 1);
  const extra: string[] = [];
  for (const state of got) {
    const n = remaining.get(state) ?? 0;
    if (n === 0) extra.push(state);
    else remaining.set(state, n - 1);
  }
  const missing = [...remaining].flatMap(([state, n]) => Array<string>(n).fill(state));
  expect(
    { extra: extra.slice(0, 3), missing: missing.slice(0, 3) },
    `${what}: ${got.length} vs ${want.length} states, ${extra.length} unexpected, ${missing.length} missing`,
  ).toEqual({ extra: [], missing: [] });
}

function applyChange(state: Map<string, Fields>, change: ChangeRow): void {
  const key = keyOf(change.uuid, change.slot);
  const current = state.get(key);
  const where = `change ${change.id} (run ${change.runId}, ${change.kind} ${key}${change.field ? ` .${change.field}` : ''})`;
  switch (change.kind) {
    case 'added':
    case 'returned':
      if (current) throw new Error(`${where}: the appearance already exists`);
      state.set(key, JSON.parse(change.newValue ?? 'null') as Fields);
      return;
    case 'removed':
      if (!current) throw new Error(`${where}: no such appearance`);
      if (canonical(current) !== canonical(JSON.parse(change.oldValue ?? 'null') as Fields)) {
        throw new Error(`${where}: old value is not the state held`);
      }
      state.delete(key);
      return;
    case 'changed': {
      if (!current || change.field === null) throw new Error(`${where}: no such appearance or no field`);
      const held = Object.hasOwn(current, change.field) ? JSON.stringify(current[change.field]) : null;
      if (held !== change.oldValue)
        throw new Error(`${where}: old value ${change.oldValue} but ${held} was held`);
      const next = { ...current };
      if (change.newValue === null) delete next[change.field];
      else next[change.field] = JSON.parse(change.newValue);
      state.set(key, next);
      return;
    }
  }
}

/**
 * Per uuid, the events a diff of the two listings calls for, computed here independently of
 * src/sync/diff.ts: `added` / `returned` / `removed` per appearance, `changed:<field>` per field.
 * A uuid listed more than once on both sides with a changed set of appearances, or back with several,
 * is left to the replay (which appearance matches which is the diff's own choice); its value here is
 * null.
 */
export function expectedEvents(
  before: readonly string[],
  after: readonly string[],
  everSeen: ReadonlySet<string>,
): Map<string, string[] | null> {
  const old = bodiesByUuid(before);
  const next = bodiesByUuid(after);
  const out = new Map<string, string[] | null>();
  for (const uuid of new Set([...old.keys(), ...next.keys()])) {
    const o = old.get(uuid) ?? [];
    const n = next.get(uuid) ?? [];
    if (JSON.stringify([...o].sort()) === JSON.stringify([...n].sort())) continue;
    // A coworker back with several appearances: each identical to one removed before returned, the
    // others are new (or the first returned): that takes the removed bodies, which are the replay's.
    if (o.length === 0 && everSeen.has(uuid) && n.length > 1) out.set(uuid, null);
    else if (o.length === 0)
      out.set(
        uuid,
        n.map((_, i) => (i === 0 && everSeen.has(uuid) ? 'returned' : 'added')),
      );
    else if (n.length === 0)
      out.set(
        uuid,
        o.map(() => 'removed'),
      );
    else if (o.length === 1 && n.length === 1)
      out.set(
        uuid,
        changedFields(o[0] ?? '{}', n[0] ?? '{}').map((f) => `changed:${f}`),
      );
    else out.set(uuid, null);
  }
  return out;
}

/** The recorded events per uuid, in the same vocabulary as expectedEvents. */
export function recordedEvents(recorded: readonly ChangeRow[]): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const c of recorded) {
    const token = c.kind === 'changed' ? `changed:${c.field ?? ''}` : c.kind;
    out.set(c.uuid, [...(out.get(c.uuid) ?? []), token]);
  }
  return out;
}

/** Each uuid's recorded events equal the expected ones exactly (as multisets); ambiguous uuids skipped. */
export function expectEventsMatch(
  expected: Map<string, string[] | null>,
  recorded: Map<string, string[]>,
): void {
  const sorted = (tokens: readonly string[]) => [...tokens].sort().join(' ');
  const wrong: { uuid: string; expected: string; recorded: string }[] = [];
  // A uuid whose appearances did not change at all must have no event.
  for (const uuid of new Set([...expected.keys(), ...recorded.keys()])) {
    const want = expected.get(uuid);
    if (want === null) continue;
    const got = sorted(recorded.get(uuid) ?? []);
    if (got !== sorted(want ?? [])) wrong.push({ uuid, expected: sorted(want ?? []), recorded: got });
  }
  expect(
    wrong.slice(0, 5),
    `${wrong.length} uuid(s) whose recorded events are not the upstream's change`,
  ).toEqual([]);
}

function bodiesByUuid(listing: readonly string[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const body of listing) {
    const uuid = String((JSON.parse(body) as Fields).uuid);
    map.set(uuid, [...(map.get(uuid) ?? []), body]);
  }
  return map;
}

function changedFields(oldBody: string, newBody: string): string[] {
  const a = JSON.parse(oldBody) as Fields;
  const b = JSON.parse(newBody) as Fields;
  const fields = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...fields].filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));
}

/** Each succeeded run's counters agree with the change rows it wrote. */
export function expectRunCountersMatchChanges(
  runRows: readonly RunRecord[],
  recorded: readonly ChangeRow[],
): void {
  for (const run of runRows.filter((r) => r.status === 'succeeded')) {
    const own = recorded.filter((c) => c.runId === run.id);
    const of = (kind: string) => own.filter((c) => c.kind === kind).length;
    const changedAppearances = new Set(
      own.filter((c) => c.kind === 'changed').map((c) => keyOf(c.uuid, c.slot)),
    ).size;
    expect({
      run: run.id,
      added: run.added,
      removed: run.removed,
      returned: run.returned,
      changed: run.changed,
    }).toEqual({
      run: run.id,
      added: of('added'),
      removed: of('removed'),
      returned: of('returned'),
      changed: changedAppearances,
    });
  }
}
