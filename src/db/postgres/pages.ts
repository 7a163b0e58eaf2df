import { entryOfChange } from '../commit-plans.js';
import { shownField } from '../entry-fields.js';
import type { ChangeSubject } from '../change-batches.js';
import type { ChangeRow } from '../schema.js';
import { tuples, type Queryable } from './sql.js';

// Changes' subjects on PostgreSQL (the twin of src/db/page-queries.ts's `changeSubjects`): names
// and posts read from the entry texts in TypeScript (src/db/entry-fields.ts says why).

export const subjectOf = (body: string | null): ChangeSubject => ({
  name: shownField(body, 'name'),
  post: shownField(body, 'post'),
});

/** The name of each change's coworker at its run: from its stored entry, or the version its run wrote. */
export async function changeSubjects(
  db: Queryable,
  changeRows: readonly ChangeRow[],
): Promise<Map<number, ChangeSubject>> {
  const asked = changeRows.filter((row) => entryOfChange(row) === null);
  const bodies = new Map<number, string>();
  if (asked.length > 0) {
    const found = await tuples<[number, string]>(
      db,
      `select a.id, (select v.body from versions v
                      where v.uuid = a.uuid and v.slot = a.slot and v.valid_from_run <= a.run_id
                      order by v.valid_from_run desc limit 1)
         from unnest($1::bigint[], $2::text[], $3::int[], $4::bigint[]) as a(id, uuid, slot, run_id)`,
      [asked.map((r) => r.id), asked.map((r) => r.uuid), asked.map((r) => r.slot), asked.map((r) => r.runId)],
    );
    for (const [id, body] of found) if (body !== null) bodies.set(id, body);
  }
  const out = new Map<number, ChangeSubject>();
  for (const row of changeRows) out.set(row.id, subjectOf(entryOfChange(row) ?? bodies.get(row.id) ?? null));
  return out;
}
