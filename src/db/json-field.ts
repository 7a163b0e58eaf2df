import type { SqlPort } from './sql-port.js';

/**
 * SQL for `body ->> path`, or null when SQLite cannot read `body` as JSON (nested past its 1,000
 * levels): one such row, stored before entry depth was bounded or written by hand, must never fail
 * a whole query, and with it a page or the server's start.
 */
export function jsonField(body: string, path: `$.${string}`): string {
  return `(case when json_valid(${body}) then ${body} ->> '${path}' end)`;
}

/** The name, post and entry of `nameAndPostSql` as read: the entry where they are to be read here. */
export type NameAndPost = [name: string | number | null, post: string | number | null, body: string | null];

/**
 * The name and post of the entry text `body`, each dialect's way, as three columns: name, post, and
 * the entry itself where they are to be read in TypeScript. SQLite's `->>` (`jsonField`), cut to
 * `chars` characters when given. PostgreSQL's entry function (migration entry_field_function), its
 * `n` and `p` the text of a JSON string, else `other` and the entry travels whole, to be read as
 * SQLite's `->>` would read it: PostgreSQL's json operators would fail a whole query on one
 * malformed row. `lateral` goes after the table `body` is read from.
 */
export function nameAndPostSql(
  dialect: SqlPort['dialect'],
  body: string,
  chars?: number,
): { columns: string; lateral: string } {
  if (dialect === 'postgres') {
    return {
      columns: `n.value, p.value, case when n.other or p.other then ${body} end`,
      lateral: `cross join lateral coworker_mirror_entry_field(${body}, 'name') n
                cross join lateral coworker_mirror_entry_field(${body}, 'post') p`,
    };
  }
  const field = (path: `$.${string}`) =>
    chars === undefined ? jsonField(body, path) : `substr(${jsonField(body, path)}, 1, ${chars})`;
  return { columns: `${field('$.name')}, ${field('$.post')}, null`, lateral: '' };
}
