import { canonicalText, changeViewJson } from './history-views.js';
import type { BatchEnds } from './change-batches.js';
import type { ChangeKind, ChangeRow } from './schema.js';

/**
 * A batch of the JSON Lines export (`changes --json`, `/api/mirror/changes/export.jsonl`): the rows'
 * lines as UTF-8, each as `changeViewJson` writes it and ended by a newline, with how many rows
 * they are and the last (oldest) row's id, where the next keyset batch starts.
 */
export interface ChangeLines extends BatchEnds {
  text: Uint8Array;
}

export const NO_LINES: ChangeLines = { text: new Uint8Array(0), count: 0, lastId: undefined };

/**
 * The lines of a batch of rows, written here for every reader: each value the sync stored is spliced
 * as it is when it is already the JSON V8 writes (`changeViewJson`), and read and written again
 * when it is not, so a value stored otherwise never reaches a line as it was stored.
 */
export function changeLinesOf(rows: readonly ChangeRow[]): ChangeLines {
  if (rows.length === 0) return NO_LINES;
  const lines = rows.map(changeViewJson);
  lines.push(''); // join then ends the last line too, in the one copy it makes
  return { text: Buffer.from(lines.join('\n')), count: rows.length, lastId: rows.at(-1)?.id };
}

/**
 * A change as its line is read, `CHANGE_ROWS_SQL`'s raw row: id, run, at, uuid, appearance, kind,
 * field, old, new. (Reading SQLite's values as blobs, to splice their bytes, cost SQLite more than
 * the text it saved encoding.)
 */
export type LineRow = [
  id: number,
  runId: number,
  at: string,
  uuid: string,
  slot: number,
  kind: ChangeKind,
  field: string | null,
  oldValue: string | null,
  newValue: string | null,
];

/**
 * A stored value as its line holds it when it is already the JSON V8 writes for it (what the sync
 * stores); undefined when it must be read and written again.
 */
const spliced = (value: string | null): string | undefined =>
  value === null ? 'null' : canonicalText(value);

/** The output of a batch: UTF-8 written into one buffer, grown as needed (no string joined per batch). */
class LinesBuffer {
  #buffer: Buffer;
  #end = 0;
  constructor(size: number) {
    this.#buffer = Buffer.allocUnsafe(size);
  }
  #room(bytes: number): void {
    if (this.#end + bytes <= this.#buffer.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.#buffer.length * 2, this.#end + bytes));
    this.#buffer.copy(grown, 0, 0, this.#end);
    this.#buffer = grown;
  }
  write(part: string): void {
    this.#room(part.length * 3);
    this.#end += this.#buffer.write(part, this.#end);
  }
  get bytes(): Uint8Array {
    return this.#buffer.subarray(0, this.#end);
  }
}

/**
 * `changeLinesOf` of rows read as `LineRow`s, the same bytes: each line's head written here, each
 * stored value spliced as it is when it is canonical JSON (`spliced`), and a line holding any other
 * value written from its row by `changeViewJson`, the careful way.
 */
export function changeLinesOfRows(rows: readonly LineRow[]): ChangeLines {
  if (rows.length === 0) return NO_LINES;
  const out = new LinesBuffer(rows.length * 512);
  for (const row of rows) {
    const [id, runId, at, uuid, slot, kind, field, oldValue, newValue] = row;
    const head = `{"id":${id},"run":${runId},"at":${JSON.stringify(at)},"uuid":${JSON.stringify(uuid)},"appearance":${slot},"kind":${JSON.stringify(kind)}`;
    const both = kind === 'changed' || kind === 'media_changed';
    const removed = kind === 'removed';
    const first = spliced(both || removed ? oldValue : newValue);
    const second = both ? spliced(newValue) : '';
    if (first === undefined || second === undefined) {
      out.write(`${changeViewJson({ id, runId, at, uuid, slot, kind, field, oldValue, newValue })}\n`);
      continue;
    }
    if (both) {
      out.write(`${head},"field":${JSON.stringify(field ?? '')},"old":`);
      out.write(first);
      out.write(',"new":');
      out.write(second);
    } else {
      out.write(`${head},"${removed ? 'old' : 'new'}":`);
      out.write(first);
    }
    out.write('}\n');
  }
  return { text: out.bytes, count: rows.length, lastId: rows.at(-1)?.[0] };
}
