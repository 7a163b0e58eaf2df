import { desc, eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { changeRowSelection } from '../../src/db/change-columns.js';
import { changeSubjects } from '../../src/db/page-queries.js';
import { changes, versions } from '../../src/db/schema.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

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
    const orm = db.db
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
    const alone = raw.map((row) => changeSubjects(db, [{ ...row, id: -row.id }]).get(-row.id));
    expect(raw.map((row) => batched.get(row.id))).toEqual(alone);
    expect(alone.every((s) => s !== undefined && s.name !== '')).toBe(true);
  });
});
