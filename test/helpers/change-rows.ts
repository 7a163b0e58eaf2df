import type { MirrorDatabase } from '../../src/db/open.js';

const KINDS = ['added', 'changed', 'changed', 'changed', 'removed', 'returned'] as const;

/**
 * Writes one succeeded run and `count` invented change rows straight into the schema (ids 1..count,
 * one transaction): what an export reads, without syncing a history that long. Values carry what a
 * CSV must quote (commas, quotes, line breaks) and non-ASCII text.
 */
export function writeChangeRows(store: MirrorDatabase, count: number): void {
  const at = '2025-03-01T10:00:00.000Z';
  const run = store.sqlite.prepare(
    `insert into runs (id, status, started_at, finished_at, upstream, pages, entries, page_size)
     values (1, 'succeeded', ?, ?, 'http://127.0.0.1:8000', 1, 0, 8)`,
  );
  const change = store.sqlite.prepare(
    `insert into changes (run_id, uuid, slot, kind, field, old_value, new_value) values (1, ?, 0, ?, ?, ?, ?)`,
  );
  store.sqlite.transaction(() => {
    run.run(at, at);
    for (let i = 0; i < count; i++) {
      const kind = KINDS[i % KINDS.length] ?? 'changed';
      const uuid = `0000${String(i % 5000).padStart(4, '0')}-0000-4000-8000-000000000000`;
      const entry = JSON.stringify({ uuid, name: `Zoë "Test" ${i}`, post: 'Dev, ops\nand more' });
      const field = kind === 'changed' ? 'name' : null;
      const oldValue = kind === 'changed' ? JSON.stringify(`Name ${i}`) : kind === 'removed' ? entry : null;
      const newValue =
        kind === 'changed' ? JSON.stringify(`Name, ${i}+1`) : kind === 'removed' ? null : entry;
      change.run(uuid, kind, field, oldValue, newValue);
    }
  })();
}
