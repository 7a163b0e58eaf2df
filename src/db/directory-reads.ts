import { asText, DIRECTORY_TEXT_CHARS, firstCodePoints, shownField } from './entry-fields.js';
import { nameAndPostSql, type NameAndPost } from './json-field.js';
import { latestSucceededRunId } from './run-reads.js';
import { coworkerTimesSql } from './run-times.js';
import type { SqlPort } from './sql-port.js';
import type { DirectoryEntry } from './store.js';

// The directory of the people-facing pages, read once for both dialects over the port.

type DirectoryRow = [
  uuid: string,
  slot: number,
  ...fields: NameAndPost,
  removedRun: number | null,
  removedAt: string | null,
  firstSeenAt: string,
];

/** `cross join` keeps SQLite from scanning every version for the departed: it walks the few removed first. */
const DEPARTED_JOIN = { sqlite: 'cross join', postgres: 'join' };

/** A coworker's times, from its runs (migration coworker_times_from_runs). */
const TIMES = coworkerTimesSql('c');

/** A field as a page shows it: the database's value, or the entry read here when it is left to be. */
const shown = (value: string | number | null, body: string | null, key: string): string =>
  body !== null
    ? shownField(body, key)
    : asText(typeof value === 'string' ? firstCodePoints(value, DIRECTORY_TEXT_CHARS + 1) : value);

/**
 * Every coworker by its latest name and post: present ones by their current appearances, departed
 * ones by the appearances they had when they left. One row per appearance, by uuid then appearance.
 */
export async function coworkerDirectory(port: SqlPort): Promise<DirectoryEntry[]> {
  const { columns, lateral } = nameAndPostSql(port.dialect, 'v.body', DIRECTORY_TEXT_CHARS + 1);
  const found = await port.rows<DirectoryRow>(
    `select v.uuid, v.slot, ${columns}, c.removed_run, ${TIMES.removedAt}, ${TIMES.firstSeenAt}
       from versions v join coworkers c on c.uuid = v.uuid ${lateral}
      where v.valid_to_run is null
     union all
     select v.uuid, v.slot, ${columns}, c.removed_run, ${TIMES.removedAt}, ${TIMES.firstSeenAt}
       from coworkers c ${DEPARTED_JOIN[port.dialect]} versions v on v.uuid = c.uuid and v.valid_to_run = c.removed_run ${lateral}
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

/**
 * The directory and the run it belongs to. Its two reads may see different commits (two pool
 * queries, or a sync committing on the same SQLite connection between them), so the run id is read
 * before and after: equal ids mean no commit came between (a commit always moves it).
 */
export async function directoryWithRun(
  port: SqlPort,
): Promise<{ runId: number | null; entries: DirectoryEntry[] }> {
  for (;;) {
    const before = await latestSucceededRunId(port);
    const entries = await coworkerDirectory(port);
    if ((await latestSucceededRunId(port)) === before) return { runId: before, entries };
  }
}
