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
