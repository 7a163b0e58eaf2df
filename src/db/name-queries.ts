import type { MirrorDatabase } from './open.js';
import { jsonField } from './json-field.js';

/** A coworker as a person looks for one: by the name its latest version carries. */
export interface NamedCoworker {
  uuid: string;
  name: string;
  post: string;
  removed: boolean;
}

const NAME = jsonField('v.body', '$.name');
const LATEST = `select v.uuid as uuid, ${NAME} as name,
         ${jsonField('v.body', '$.post')} as post, c.removed_run is not null as removed
    from versions v join coworkers c on c.uuid = v.uuid
   where v.id = (select max(id) from versions where uuid = v.uuid)`;

function named(row: { uuid: string; name: unknown; post: unknown; removed: number }): NamedCoworker {
  // ->> gives text for strings; anything else (a drifted upstream) is shown as JSON.
  const text = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  return { uuid: row.uuid, name: text(row.name), post: text(row.post), removed: row.removed === 1 };
}

/** The latest name of each uuid asked for (absent when the uuid was never stored). */
export function namesOf(store: MirrorDatabase, uuids: Iterable<string>): Map<string, string> {
  const statement = store.sqlite.prepare(`${LATEST} and v.uuid = ?`);
  const names = new Map<string, string>();
  for (const uuid of new Set(uuids)) {
    const row = statement.get(uuid) as Parameters<typeof named>[0] | undefined;
    if (row) names.set(uuid, named(row).name);
  }
  return names;
}

/** Coworkers whose latest name contains `text`, case-insensitively (ASCII), present ones first. */
export function findByName(store: MirrorDatabase, text: string, limit = 50): NamedCoworker[] {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const rows = store.sqlite
    .prepare(`${LATEST} and ${NAME} like ? escape '\\' order by removed, name limit ?`)
    .all(pattern, limit) as Parameters<typeof named>[0][];
  return rows.map(named);
}

/** Field names the change feed holds, for telling a typo from a field that never changed. */
export function changedFields(store: MirrorDatabase): string[] {
  return store.sqlite
    .prepare('select distinct field from changes where field is not null order by field')
    .pluck()
    .all() as string[];
}
