import type { ChangeRow } from '../schema.js';
import { insertWithIds } from './bulk.js';
import type { RunMemory } from './outbox.js';
import type { Tx } from './sql.js';

const CHANGE_COLUMNS = [
  { name: 'run_id', type: 'bigint' },
  { name: 'uuid', type: 'text' },
  { name: 'slot', type: 'int' },
  { name: 'kind', type: 'text' },
  { name: 'field', type: 'text' },
  { name: 'old_value', type: 'text' },
  { name: 'new_value', type: 'text' },
  { name: 'version_id', type: 'bigint' },
];

/** A change to insert: its values as readers see them, and the version holding its entry, if any. */
export type ChangeToInsert = Omit<ChangeRow, 'id'> & { versionId?: number | null };

/**
 * Inserts change rows and keeps them, as read, for the messages the run composes. A row with a
 * `versionId` stores null in place of the entry that version holds (migration body_once).
 */
export async function insertChanges(tx: Tx, rowsIn: ChangeToInsert[], memory: RunMemory): Promise<void> {
  const ids = await insertWithIds(
    tx.client,
    'changes',
    CHANGE_COLUMNS,
    rowsIn.map(({ versionId, ...c }) => {
      const ref = versionId ?? null;
      const removed = c.kind === 'removed';
      return [
        c.runId,
        c.uuid,
        c.slot,
        c.kind,
        c.field,
        ref !== null && removed ? null : c.oldValue,
        ref !== null && !removed ? null : c.newValue,
        ref,
      ];
    }),
  );
  rowsIn.forEach(({ versionId: _ref, ...c }, i) => memory.changes.push({ id: ids[i] ?? 0, ...c }));
}
