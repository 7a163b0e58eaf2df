import type { ChangeFilter, ChangeLines } from './store.js';
import { isUtf8 } from 'node:buffer';
import { CHANGE_VERSION_JOIN } from './change-columns.js';
import { runTimeSql } from './run-times.js';
import { changeFilterSql } from './change-filter.js';
import type { SqlPort } from './sql-port.js';

const NO_LINES: ChangeLines = { text: new Uint8Array(0), count: 0, lastId: undefined };

/**
 * The one writer of a change's line: the database joins it, and a batch of lines comes back as one
 * value, its bytes handed over as they are. Reading each row's cells into JS strings to join them
 * here cost several times the sqlite3 shell's whole export (each cell decoded, each line encoded).
 *
 * It is the line `stringifyJson(changeView(row))` writes, the history API's change, because of what
 * the sync stores: an entry as `stringifyJson` of its lossless parse (src/upstream/validate.ts), a
 * field's value as `canonicalValue` of it, both texts that parse and write again as themselves
 * (test/export/export-lines.test.ts holds this for odd upstream entries on both stores). The texts
 * are spliced; the database quotes only the head's strings, as V8 does. An added, returned or
 * removed change's entry is its version's (migration body_once); its time is its run's.
 */
function changeLineSql(quote: (text: string) => string): string {
  const head = `'{"id":' || c.id || ',"run":' || c.run_id || ',"at":' || ${quote(runTimeSql('c.run_id'))} ||
    ',"uuid":' || ${quote('c.uuid')} || ',"appearance":' || c.slot || ',"kind":' || ${quote('c.kind')}`;
  return `${head} || case
      when c.kind in ('changed', 'media_changed')
        then ',"field":' || ${quote(`coalesce(c.field, '')`)} || ',"old":' || coalesce(c.old_value, 'null')
          || ',"new":' || coalesce(c.new_value, 'null')
      when c.kind = 'removed' then ',"old":' || coalesce(c.old_value, v.body, 'null')
      else ',"new":' || coalesce(c.new_value, v.body, 'null')
    end || '}'`;
}

/**
 * The lines of the changes `where` matches, newest first, at most `?` of them, as one row: how many,
 * the last (lowest) id, the lines as bytes. SQLite's blob and PostgreSQL's bytea come to JS as
 * Buffers, never decoded; each aggregate names its order.
 */
const LINES_SQL = {
  sqlite: (
    where: string,
  ) => `select count(*), min(id), cast(group_concat(line || char(10), '' order by id desc) as blob)
    from (select c.id as id, ${changeLineSql((text) => `json_quote(${text})`)} as line
          from changes c ${CHANGE_VERSION_JOIN} ${where} order by c.id desc limit ?)`,
  postgres: (
    where: string,
  ) => `select count(*)::int, min(id), convert_to(string_agg(line || E'\\n', '' order by id desc), 'UTF8')
    from (select c.id as id, ${changeLineSql((text) => `coalesce(to_json((${text})::text)::text, 'null')`)} as line
          from changes c ${CHANGE_VERSION_JOIN} ${where} order by c.id desc limit ?) lines`,
};

/** Each database's refusal of a value past its largest (SQLite's billion bytes, PostgreSQL's 1 GB). */
const TOO_BIG = { sqlite: 'SQLITE_TOOBIG', postgres: '54000' } as const;

/**
 * `Store.changeLines`. A batch the database refuses as too big for one value is read as two halves,
 * one after the other: a batch is a count of rows, and a few rows can be whole entries.
 */
export async function changeLines(port: SqlPort, filter: ChangeFilter): Promise<ChangeLines> {
  const where = await changeFilterSql(port, filter);
  if (where === null) return NO_LINES;
  let found: [count: number, lastId: number | null, text: Buffer | null] | undefined;
  try {
    [found] = await port.rows<[number, number | null, Buffer | null]>(LINES_SQL[port.dialect](where.sql), [
      ...where.params,
      filter.limit,
    ]);
  } catch (error) {
    if ((error as { code?: unknown }).code !== TOO_BIG[port.dialect] || filter.limit <= 1) throw error;
    return halves(port, filter);
  }
  const [count, lastId, text] = found ?? [0, null, null];
  if (count === 0 || lastId === null || text === null) return NO_LINES;
  // SQLite keeps what it was given: a lone surrogate bound from JS is stored as bytes that are no
  // UTF-8. They go out as reading them as text gives them (U+FFFD), never as they are.
  return { text: isUtf8(text) ? text : Buffer.from(text.toString('utf8')), count: Number(count), lastId };
}

/** `changeLines` read in two halves, the second keyset after the first. */
async function halves(port: SqlPort, filter: ChangeFilter): Promise<ChangeLines> {
  const half = Math.ceil(filter.limit / 2);
  const first = await changeLines(port, { ...filter, limit: half });
  if (first.count < half || first.lastId === undefined) return first;
  const second = await changeLines(port, {
    ...filter,
    beforeId: first.lastId,
    limit: filter.limit - first.count,
  });
  if (second.count === 0) return first;
  return {
    text: Buffer.concat([first.text, second.text]),
    count: first.count + second.count,
    lastId: second.lastId,
  };
}
