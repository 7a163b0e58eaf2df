import type { ChangeRow } from '../schema.js';
import { insertWithIds } from './bulk.js';
import type { RunMemory } from './outbox.js';
import type { Tx } from './sql.js';

const CHANGE_COLUMNS = [
  { name: 'run_id', type: 'bigint' },
  { name: 'at', type: 'text' },
  { name: 'uuid', type: 'text' },
  { name: 'slot', type: 'int' },
  { name: 'kind', type: 'text' },
  { name: 'field', type: 'text' },
  { name: 'old_value', type: 'text' },
  { name: 'new_value', type: 'text' },
];

/** Inserts change rows and keeps them, as stored, for the messages the run composes. */
export async function insertChanges(
  tx: Tx,
  rowsIn: Omit<ChangeRow, 'id'>[],
  memory: RunMemory,
): Promise<void> {
  const ids = await insertWithIds(
    tx.client,
    'changes',
    CHANGE_COLUMNS,
    rowsIn.map((c) => [c.runId, c.at, c.uuid, c.slot, c.kind, c.field, c.oldValue, c.newValue]),
  );
  rowsIn.forEach((c, i) => memory.changes.push({ id: ids[i] ?? 0, ...c }));
}
