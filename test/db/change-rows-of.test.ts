import { desc, eq, sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { describe, expect, it } from 'vitest';
import { changeFieldsSql } from '../../src/db/change-columns.js';
import { changes, versions } from '../../src/db/schema.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

// drizzle's own read of the change rows, the raw read's reference: drizzle names a joined query's
// columns by table.
const fields = changeFieldsSql('"changes"', '"versions"');
const changeRowSelection = {
  id: changes.id,
  runId: changes.runId,
  at: sql<string>`${sql.raw(fields.at)}`,
  uuid: changes.uuid,
  slot: changes.slot,
  kind: changes.kind,
  field: changes.field,
  oldValue: sql<string | null>`${sql.raw(fields.oldValue)}`,
  newValue: sql<string | null>`${sql.raw(fields.newValue)}`,
};

// Regression (issue 21): exports mapped each row through drizzle and looked up each CSV row's name alone.
describe('change rows read raw, and their subjects read per batch', () => {
  it('listChanges gives what drizzle’s own read gives, and each subject is what a lone read gives', async () => {
    const db = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 4, count: 30 });
    await sync(db, upstream);
    for (let i = 0; i < 3; i++) {
      for (let n = 0; n < 5; n++) upstream.data.mutateRandomly();
      await sync(db, upstream);
    }
    const orm = drizzle(db.sqlite)
      .select(changeRowSelection)
      .from(changes)
      .leftJoin(versions, eq(versions.id, changes.versionId))
      .orderBy(desc(changes.id))
      .all();
    const raw = await db.listChanges({ limit: 10_000 });
    expect(raw).toEqual(orm);
    expect(new Set(raw.map((r) => r.kind)).size).toBeGreaterThan(2);
    expect(await db.listChanges({ limit: 7, beforeId: 20, kind: 'changed' })).toEqual(
      orm.filter((r) => r.id < 20 && r.kind === 'changed').slice(0, 7),
    );

    const batched = await db.changeSubjects(raw);
    // A row the database does not hold under its id is read alone, from its own values.
    const alone = await Promise.all(
      raw.map(async (row) => (await db.changeSubjects([{ ...row, id: -row.id }])).get(-row.id)),
    );
    expect(raw.map((row) => batched.get(row.id))).toEqual(alone);
    expect(alone.every((s) => s !== undefined && s.name !== '')).toBe(true);
  });
});

describe('the CSV export’s one-statement read, over entries SQLite cannot read as JSON', () => {
  it('gives the subjects the careful read gives: none for such an entry, the rest as stored', async () => {
    const db = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 6, count: 12 });
    await sync(db, upstream);
    for (let n = 0; n < 6; n++) upstream.data.mutateRandomly();
    await sync(db, upstream);
    const ids = db.sqlite.prepare('select id from versions order by id').pluck().all() as number[];
    // Written by hand or before entries were bounded: not JSON, and JSON nested past SQLite's depth.
    const broken = db.sqlite.prepare('update versions set body = ? where id = ?');
    broken.run('{"name": "Cut', ids[0]);
    broken.run(`${'['.repeat(1100)}${']'.repeat(1100)}`, ids[ids.length - 1]);
    const rows = await db.listChanges({ limit: 10_000 });
    const careful = await db.changeSubjects(rows);
    const exported = new Map<number, unknown>();
    for await (const batch of db.changesWithSubjects({}, 5))
      for (const [id, subject] of batch.subjects) exported.set(id, subject);
    expect(exported).toEqual(careful);
    expect([...careful.values()].some((s) => s.name === '')).toBe(true);
    expect([...careful.values()].some((s) => s.name !== '')).toBe(true);
  });
});
