import { entryOfChange } from '../commit-plans.js';
import { coworkerTimesSql } from '../run-times.js';
import { asText, DIRECTORY_TEXT_CHARS, firstCodePoints, shownField } from '../entry-fields.js';
import type { ChangeSubject, DirectoryEntry } from '../page-queries.js';
import type { ChangeRow } from '../schema.js';
import type { PgContext } from './context.js';
import { entryFieldSql } from '../name-queries.js';
import { tuples, type Queryable } from './sql.js';

// Reads for the people-facing pages on PostgreSQL (the twin of src/db/page-queries.ts's); names
// and posts of changes' subjects are read from the entry texts in TypeScript (src/db/entry-fields.ts
// says why), the directory's in SQL by a function that never fails a query (entryFieldSql).

type DirectoryRow = [
  uuid: string,
  slot: number,
  name: string | null,
  post: string | null,
  body: string | null,
  removedRun: number | null,
  removedAt: string | null,
  firstSeenAt: string,
];

/** A field as a page shows it: the database's string, or the entry read here when it is not one. */
const shown = (value: string | null, body: string | null, key: string): string =>
  body !== null ? shownField(body, key) : asText(firstCodePoints(value ?? '', DIRECTORY_TEXT_CHARS + 1));

/** A coworker's times, from its runs (migration coworker_times_from_runs). */
const TIMES = coworkerTimesSql('c');

/**
 * Every coworker by its latest name and post, one row per appearance (in uuid, appearance order).
 * Names and posts are extracted in SQL (migration entry_field_function): only they travel, not
 * every entry; an entry whose name or post is not a plain string travels whole and is read here.
 */
export async function coworkerDirectory(ctx: PgContext): Promise<DirectoryEntry[]> {
  const fields = `n.value, p.value, case when n.other or p.other then v.body end`;
  const lateral = `${entryFieldSql('v.body', 'name', 'n')} ${entryFieldSql('v.body', 'post', 'p')}`;
  const found = await tuples<DirectoryRow>(
    ctx.pool,
    `select v.uuid, v.slot, ${fields}, c.removed_run, ${TIMES.removedAt}, ${TIMES.firstSeenAt}
       from versions v join coworkers c on c.uuid = v.uuid ${lateral}
      where v.valid_to_run is null
     union all
     select v.uuid, v.slot, ${fields}, c.removed_run, ${TIMES.removedAt}, ${TIMES.firstSeenAt}
       from coworkers c join versions v on v.uuid = c.uuid and v.valid_to_run = c.removed_run ${lateral}
      where c.removed_run is not null
     order by 1, 2`,
  );
  return found.map(([uuid, appearance, name, post, body, removedRun, removedAt, firstSeenAt]) => ({
    uuid,
    appearance,
    name: shown(name, body, 'name'),
    post: shown(post, body, 'post'),
    removedRun,
    removedAt,
    firstSeenAt,
  }));
}

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

/**
 * The directory and the run it belongs to. Two pool queries may see different commits, so the run
 * id is read before and after: equal ids mean no commit came between (a commit always moves it).
 */
export async function directoryWithRun(
  ctx: PgContext,
  latestRunId: () => Promise<number | null>,
): Promise<{ runId: number | null; entries: DirectoryEntry[] }> {
  for (;;) {
    const before = await latestRunId();
    const entries = await coworkerDirectory(ctx);
    if ((await latestRunId()) === before) return { runId: before, entries };
  }
}
