import { canonicalEnd, isScannable } from '../json/canonical-json.js';
import { changeViewJson } from './history-views.js';
import type { BatchEnds } from './change-batches.js';
import type { ChangeRow } from './schema.js';

/**
 * A batch of the JSON Lines export (`changes --json`, `/api/mirror/changes/export.jsonl`): the rows'
 * lines as UTF-8, each as `changeViewJson` writes it and ended by a newline, with how many rows
 * they are and the last (oldest) row's id, where the next keyset batch starts.
 */
export interface ChangeLines extends BatchEnds {
  text: Uint8Array;
}

export const NO_LINES: ChangeLines = { text: new Uint8Array(0), count: 0, lastId: undefined };

/** The lines of rows read as `ChangeRow`s: the way every batch could go, and the one a refused batch goes. */
export function changeLinesOf(rows: readonly ChangeRow[]): ChangeLines {
  if (rows.length === 0) return NO_LINES;
  const lines = rows.map(changeViewJson);
  lines.push(''); // join then ends the last line too, in the one copy it makes
  return { text: Buffer.from(lines.join('\n')), count: rows.length, lastId: rows.at(-1)?.id };
}

/**
 * A change's line built by the database, the same texts `changeViewJson` joins: turning every
 * row into JS strings, building each line from them and encoding the lines again kept an export
 * far from the sqlite3 shell's time; the database writes them as one blob a batch.
 * `c`, `v` and `r` name the change, its version (the entry of an added, returned or removed change,
 * migration body_once) and its run (the time, migration change_time_from_run); `quote` is the
 * dialect's JSON string writer. Nothing trusts the result: `checkedLines` reads it back.
 */
export function changeLineSql(c: string, v: string, r: string, quote: (text: string) => string): string {
  const head = `'{"id":' || ${c}.id || ',"run":' || ${c}.run_id || ',"at":' || ${quote(`${r}.finished_at`)} ||
    ',"uuid":' || ${quote(`${c}.uuid`)} || ',"appearance":' || ${c}.slot || ',"kind":' || ${quote(`${c}.kind`)}`;
  return `${head} || case
      when ${c}.kind in ('changed', 'media_changed')
        then ',"field":' || ${quote(`coalesce(${c}.field, '')`)} || ',"old":' || coalesce(${c}.old_value, 'null')
          || ',"new":' || coalesce(${c}.new_value, 'null')
      when ${c}.kind = 'removed' then ',"old":' || coalesce(${c}.old_value, ${v}.body, 'null')
      else ',"new":' || coalesce(${c}.new_value, ${v}.body, 'null')
    end || '}'`;
}

/**
 * The one row a dialect's lines query answers over its batch of `changeLineSql` lines (`inner`,
 * which selects `id` and `line`): how many rows, the last (lowest) id, and the lines, each ended,
 * as bytes.
 */
export type FoundLines = readonly [count: number, lastId: number | null, text: Buffer | null];

/**
 * The lines query of each dialect. SQLite's `group_concat` is cast to a blob: better-sqlite3 hands
 * the bytes over as they are, with no UTF-8 decoding. It takes the rows in the order the ordered
 * subquery yields them: an `order by` of its own sorted every batch again and doubled the read.
 * SQLite does not promise that order, so `checkedLines` checks it (ids falling line by line) and a
 * batch out of order is refused. PostgreSQL's `string_agg` says its order, at no such cost.
 */
export const LINES_QUERY = {
  sqlite: (inner: string) =>
    `select count(*), min(id), cast(group_concat(line || char(10), '') as blob) from (${inner})`,
  postgres: (inner: string) =>
    `select count(*), min(id), convert_to(string_agg(line || E'\\n', '' order by id desc), 'UTF8') from (${inner}) lines`,
};

/** The lines query refused for the batch's size: the batch is written from its rows instead. */
export const TOO_BIG = Symbol('lines past the largest value of the database');

/** What the lines query gave: its row, none, or `TOO_BIG`. */
export type LinesAnswer = FoundLines | undefined | typeof TOO_BIG;

/**
 * `TOO_BIG` where `error` is the database's "past its largest value" (`code`: SQLite's
 * SQLITE_TOOBIG, a billion bytes; PostgreSQL's 54000, 1 GB), which the rows one by one are not;
 * any other error is thrown again. Never an empty batch: that would lose the batch's rows.
 */
export function tooBig(error: unknown, code: 'SQLITE_TOOBIG' | '54000'): typeof TOO_BIG {
  if ((error as { code?: unknown }).code !== code) throw error;
  return TOO_BIG;
}

/**
 * The batch the database wrote, when `checkedLines` vouches for it (`NO_LINES` when the filter
 * matched nothing); null when the batch is to be written from its rows (`changeLinesOf`): refused
 * by the check, or `TOO_BIG`.
 */
export function vouchedLines(found: LinesAnswer): ChangeLines | null {
  if (found === TOO_BIG) return null;
  const [count, lastId, text] = found ?? [0, null, null];
  if (count === 0 || text === null || lastId === null) return NO_LINES;
  return checkedLines(text, count) ? { text, count, lastId } : null;
}

/** The keys of a change's line, as `changeView` orders them, for each kind of change. */
const HEAD_KEYS = ['"id"', '"run"', '"at"', '"uuid"', '"appearance"', '"kind"'];
const SHAPES = [
  [...HEAD_KEYS, '"field"', '"old"', '"new"'],
  [...HEAD_KEYS, '"old"'],
  [...HEAD_KEYS, '"new"'],
];
const SHAPE_TEXTS = new Set(SHAPES.map((keys) => keys.join(',')));
const SHAPE_BYTES = SHAPES.map((keys) => keys.map((key) => Buffer.from(key)));

const NEWLINE = 0x0a;
/** Every line starts so: its id is next. */
const ID_PREFIX = Buffer.from('{"id":');

/**
 * Whether `text`, which the database wrote with `changeLineSql` (each line ended), is `count` lines
 * each exactly as `changeViewJson` writes its row, newest first. Each line must be one canonical
 * JSON object (`canonicalEnd`, or V8's own round trip where the scan does not judge) with the keys
 * of one of the three shapes, its id below the line's before: a stored value that is not one
 * canonical JSON value (whitespace, escapes V8 writes otherwise, lossy numbers, text that is no
 * JSON or that would add keys to the line) fails it, and its batch is written from its rows
 * instead, the careful way. So does a batch the database concatenated out of order.
 */
export function checkedLines(text: Buffer, count: number): boolean {
  if (!isScannable(text)) return false; // not UTF-8: reading it as text would change it
  const keys: number[] = [];
  let start = 0;
  let previousId = Number.POSITIVE_INFINITY;
  for (let n = 0; n < count; n++) {
    const end = text.indexOf(NEWLINE, start);
    if (end < 0) return false;
    const id = lineId(text, start, end);
    if (!(id < previousId)) return false;
    previousId = id;
    keys.length = 0;
    if (canonicalEnd(text, start, end, keys) !== end || !hasShape(text, keys)) {
      if (!roundTrips(text.toString('utf8', start, end))) return false;
    }
    start = end + 1;
  }
  return start === text.length;
}

/** The id a line starts with (NaN when it does not start with one). */
function lineId(text: Buffer, start: number, end: number): number {
  if (!startsWith(text, start, ID_PREFIX)) return NaN;
  let id = 0;
  let i = start + ID_PREFIX.length;
  for (; i < end; i++) {
    const digit = (text[i] as number) - 0x30;
    if (digit < 0 || digit > 9) break;
    id = id * 10 + digit;
  }
  return i > start + ID_PREFIX.length ? id : NaN;
}

function startsWith(text: Buffer, start: number, prefix: Buffer): boolean {
  if (start + prefix.length > text.length) return false;
  for (let k = 0; k < prefix.length; k++) if (text[start + k] !== prefix[k]) return false;
  return true;
}

/** Whether the root keys found at `keys` (start and end of each) are one shape's, in its order. */
function hasShape(text: Buffer, keys: readonly number[]): boolean {
  for (const shape of SHAPE_BYTES) {
    if (keys.length !== shape.length * 2) continue;
    let same = true;
    for (let k = 0; same && k < shape.length; k++) {
      same =
        startsWith(text, keys[2 * k] as number, shape[k] as Buffer) &&
        (keys[2 * k + 1] as number) - (keys[2 * k] as number) === (shape[k] as Buffer).length;
    }
    if (same) return true;
  }
  return false;
}

/** Whether V8 writes `line` back as it is, with one of the shapes' keys. */
function roundTrips(line: string): boolean {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
    const keys = Object.keys(value).map((key) => JSON.stringify(key));
    return SHAPE_TEXTS.has(keys.join(',')) && JSON.stringify(value) === line;
  } catch {
    return false; // not JSON, or deeper than V8 recurses
  }
}
