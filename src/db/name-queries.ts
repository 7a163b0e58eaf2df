import type { NamedCoworker } from './store.js';
import { entryField } from './entry-fields.js';
import { jsonField, nameAndPostSql, type NameAndPost } from './json-field.js';
import type { SqlPort } from './sql-port.js';

// Coworkers by name, read once for both dialects over the port: the names are extracted in SQL (only
// the matches travel, never every entry), each dialect's way, and ordered here as SQLite orders them.

/**
 * The latest version of each appearance (slot) of each uuid: a uuid listed twice has two names, and
 * either finds it. An appearance that left a listing still showing it is no longer its name.
 */
const LATEST_EACH = `select v.uuid, v.slot, v.body, case when c.removed_run is null then 0 else 1 end as removed
    from versions v join coworkers c on c.uuid = v.uuid
   where v.id = (select max(w.id) from versions w where w.uuid = v.uuid and w.slot = v.slot)
     and (v.valid_to_run is null or c.removed_run is not null)`;

/**
 * The LIKE on `l.body`'s name (`?`, escaped by backslash), folding ASCII letters only: SQLite's LIKE
 * does; lower() of a C-collated text does. PostgreSQL's entry read here matches in TypeScript.
 */
const NAME_LIKE = {
  sqlite: `${jsonField('l.body', '$.name')} like ? escape '\\'`,
  postgres: `(n.other or lower(n.value collate "C") like ?)`,
};

type FoundName = [uuid: string, slot: number, ...fields: NameAndPost, removed: number];

function named(row: { uuid: string; name: unknown; post: unknown; removed: number }): NamedCoworker {
  // ->> gives text for strings; anything else (a drifted upstream) is shown as JSON.
  const text = (value: unknown) => (typeof value === 'string' ? value : (JSON.stringify(value) ?? ''));
  return { uuid: row.uuid, name: text(row.name), post: text(row.post), removed: row.removed === 1 };
}

/** The latest appearances `where` (one `?`, `param`) picks, by uuid and appearance. */
function latestNamed(port: SqlPort, where: string, param: unknown): Promise<FoundName[]> {
  const { columns, lateral } = nameAndPostSql(port.dialect, 'l.body');
  return port.rows<FoundName>(
    `select l.uuid, l.slot, ${columns}, l.removed from (${LATEST_EACH}) l ${lateral}
      where ${where} order by l.uuid, l.slot`,
    [param],
  );
}

/** A row's name and post, read from its entry where the database left them to be. */
function fieldsOf([uuid, , name, post, body, removed]: FoundName) {
  return body === null
    ? { uuid, name, post, removed }
    : { uuid, name: entryField(body, 'name'), post: entryField(body, 'post'), removed };
}

/** The latest name of each uuid asked for (absent when the uuid was never stored). */
export async function namesOf(port: SqlPort, uuids: Iterable<string>): Promise<Map<string, string>> {
  const wanted = [...new Set(uuids)];
  if (wanted.length === 0) return new Map();
  const asked = port.oneOf('l.uuid', 'text', wanted);
  const found = await latestNamed(port, asked.sql, asked.param);
  // The first appearance names the uuid.
  const first = new Map<string, FoundName>();
  for (const row of found) if (!first.has(row[0])) first.set(row[0], row);
  const names = new Map<string, string>();
  for (const uuid of wanted) {
    const row = first.get(uuid);
    if (row) names.set(uuid, named(fieldsOf(row)).name);
  }
  return names;
}

/** SQLite's LIKE: case-insensitive for ASCII letters only. */
const asciiLower = (text: string): string => text.replace(/[A-Z]/g, (c) => c.toLowerCase());
/** SQLite compares text by its UTF-8 bytes. */
const byBytes = (a: string, b: string): number => Buffer.compare(Buffer.from(a), Buffer.from(b));

/**
 * Coworkers whose latest name (of any appearance) contains `text`, case-insensitively (ASCII),
 * present ones first, then by name as SQLite orders it (a number before any text, texts by their
 * bytes), then by uuid; one row per uuid, with the name that matched (the first appearance's if both).
 */
export async function findByName(port: SqlPort, text: string, limit = 50): Promise<NamedCoworker[]> {
  const needle = asciiLower(text);
  const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const found = await latestNamed(port, NAME_LIKE[port.dialect], pattern);
  const byUuid = new Map<string, { coworker: NamedCoworker; number: number | null }>();
  for (const row of found) {
    if (byUuid.has(row[0])) continue;
    const fields = fieldsOf(row);
    // The entry read here matches as SQLite's LIKE reads a text: as C does, up to its first NUL.
    const name = String(fields.name).split('\0', 1)[0] ?? '';
    if (fields.name === null || !asciiLower(name).includes(needle)) continue;
    byUuid.set(row[0], {
      coworker: named(fields),
      number: typeof fields.name === 'number' ? fields.name : null,
    });
  }
  return [...byUuid.values()]
    .sort(
      (a, b) =>
        Number(a.coworker.removed) - Number(b.coworker.removed) ||
        (a.number === null ? 1 : 0) - (b.number === null ? 1 : 0) ||
        (a.number ?? 0) - (b.number ?? 0) ||
        (a.number === null ? byBytes(a.coworker.name, b.coworker.name) : 0) ||
        byBytes(a.coworker.uuid, b.coworker.uuid),
    )
    .slice(0, limit)
    .map((c) => c.coworker);
}
