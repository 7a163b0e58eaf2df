import type { MirrorDatabase } from './open.js';
import { jsonField } from './json-field.js';
import { prepared } from './prepared.js';

/** A coworker as a person looks for one: by the name its latest version carries. */
export interface NamedCoworker {
  uuid: string;
  name: string;
  post: string;
  removed: boolean;
}

const NAME = jsonField('v.body', '$.name');
/**
 * The latest version of each appearance (slot) of each uuid: a uuid listed twice has two names, and
 * either finds it. An appearance that left a listing still showing it is no longer its name.
 */
const LATEST_EACH = `select v.uuid as uuid, v.slot as slot, ${NAME} as name,
         ${jsonField('v.body', '$.post')} as post, c.removed_run is not null as removed
    from versions v join coworkers c on c.uuid = v.uuid
   where v.id = (select max(id) from versions w where w.uuid = v.uuid and w.slot = v.slot)
     and (v.valid_to_run is null or c.removed_run is not null)`;

export function named(row: { uuid: string; name: unknown; post: unknown; removed: number }): NamedCoworker {
  // ->> gives text for strings; anything else (a drifted upstream) is shown as JSON.
  const text = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  return { uuid: row.uuid, name: text(row.name), post: text(row.post), removed: row.removed === 1 };
}

/** The latest name of each uuid asked for (absent when the uuid was never stored). */
export function namesOf(store: MirrorDatabase, uuids: Iterable<string>): Map<string, string> {
  // The first appearance names the uuid.
  const statement = prepared(store.sqlite, `${LATEST_EACH} and v.uuid = ? order by v.slot limit 1`);
  const names = new Map<string, string>();
  for (const uuid of new Set(uuids)) {
    const row = statement.get(uuid) as Parameters<typeof named>[0] | undefined;
    if (row) names.set(uuid, named(row).name);
  }
  return names;
}

/**
 * Coworkers whose latest name (of any appearance) contains `text`, case-insensitively (ASCII),
 * present ones first; one row per uuid, with the name that matched (the first appearance's if both).
 */
export function findByName(store: MirrorDatabase, text: string, limit = 50): NamedCoworker[] {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  // SQLite takes the bare columns of a min() aggregate from the row holding the minimum.
  const rows = prepared(
    store.sqlite,
    `select uuid, name, post, removed, min(slot) from (${LATEST_EACH}
         and ${NAME} like ? escape '\\') group by uuid order by removed, name limit ?`,
  ).all(pattern, limit) as Parameters<typeof named>[0][];
  return rows.map(named);
}

/** Field names the change feed holds, for telling a typo from a field that never changed. */
