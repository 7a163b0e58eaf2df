import { mediaChangeRows, mediaVersionWrites } from '../commit-plans.js';
import type { MediaCommit } from '../run-commit.js';
import { insertMany, insertWithIds, setWhereIds } from './bulk.js';
import type { RunMemory } from './outbox.js';
import { insertChanges } from './change-rows.js';
import { run, tuples, type Tx } from './sql.js';

// A run's media rows on PostgreSQL, inside its commit: the twin of src/db/sqlite/media-commit.ts.

export async function writeMediaRows(
  tx: Tx,
  runId: number,
  at: string,
  media: MediaCommit,
  memory: RunMemory,
): Promise<void> {
  await writeBlobs(tx, runId, media);
  const open = new Map(
    (
      await tuples<[string, number, string]>(
        tx.client,
        'select url, id, sha256 from media_versions where valid_to_run is null order by id',
      )
    ).map(([url, id, sha256]) => [url, { id, sha256 }]),
  );
  const writes = mediaVersionWrites(open, media);
  await setWhereIds(tx.client, 'media_versions', 'valid_to_run', runId, writes.close);
  await insertWithIds(
    tx.client,
    'media_versions',
    [
      { name: 'url', type: 'text' },
      { name: 'sha256', type: 'text' },
      { name: 'valid_from_run', type: 'bigint' },
    ],
    writes.open.map(([url, sha256]) => [url, sha256, runId]),
  );
  await writeUrlStates(tx, runId, media);
  if (writes.changed.length > 0) {
    const entries = await entriesNaming(
      tx,
      writes.changed.map((c) => c.url),
    );
    const rows = mediaChangeRows(entries, writes.changed, media.refsOf);
    await insertChanges(
      tx,
      rows.map(([uuid, slot, field, oldValue, newValue]) => ({
        runId,
        at,
        uuid,
        slot,
        kind: 'media_changed' as const,
        field,
        oldValue,
        newValue,
      })),
      memory,
    );
  }
  await run(
    tx.client,
    'insert into media_runs (run_id, fetched, revalidated, failed, bytes) values ($1, $2, $3, $4, $5)',
    [runId, media.counts.fetched, media.counts.revalidated, media.counts.failed, media.counts.bytes],
  );
}

async function writeBlobs(tx: Tx, runId: number, { items }: MediaCommit): Promise<void> {
  // One row per sha256, the first's (a statement's ON CONFLICT may not touch one row twice).
  const blobs = new Map<string, unknown[]>();
  for (const { result } of items) {
    if (result.kind === 'fetched' && !blobs.has(result.sha256)) {
      blobs.set(result.sha256, [result.sha256, result.size, result.contentType, runId]);
    }
  }
  // A file retention dropped and a later run fetched again is live once more.
  await insertMany(
    tx.client,
    'media_blobs',
    [
      { name: 'sha256', type: 'text' },
      { name: 'size', type: 'bigint' },
      { name: 'content_type', type: 'text' },
      { name: 'created_run', type: 'bigint' },
    ],
    [...blobs.values()],
    `on conflict (sha256) do update set dropped_at = null where media_blobs.dropped_at is not null`,
  );
}

async function writeUrlStates(tx: Tx, runId: number, { items }: MediaCommit): Promise<void> {
  // The last attempt of a URL counts, as the SQLite store's row-by-row upserts leave it.
  const last = new Map(items.map((item) => [item.url, item.result]));
  const ok: unknown[][] = [];
  const failed: unknown[][] = [];
  for (const [url, result] of last) {
    if (result.kind === 'failed') failed.push([url, runId, result.code, result.message]);
    else ok.push([url, result.etag, result.lastModified, runId]);
  }
  await insertMany(
    tx.client,
    'media_urls',
    [
      { name: 'url', type: 'text' },
      { name: 'etag', type: 'text' },
      { name: 'last_modified', type: 'text' },
      { name: 'checked_run', type: 'bigint' },
    ],
    ok,
    `on conflict (url) do update set etag = excluded.etag, last_modified = excluded.last_modified,
       checked_run = excluded.checked_run, failure_code = null, failure_message = null`,
  );
  // The validators of the last good bytes are kept: they still describe what is served.
  await insertMany(
    tx.client,
    'media_urls',
    [
      { name: 'url', type: 'text' },
      { name: 'checked_run', type: 'bigint' },
      { name: 'failure_code', type: 'text' },
      { name: 'failure_message', type: 'text' },
    ],
    failed,
    `on conflict (url) do update set checked_run = excluded.checked_run,
       failure_code = excluded.failure_code, failure_message = excluded.failure_message`,
  );
}

/** LIKE's wildcards and escape taken literally. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/** The current listing's entries whose text names one of these URLs, in listing order. */
async function entriesNaming(tx: Tx, urls: readonly string[]): Promise<[string, number, string][]> {
  const patterns = urls.map((url) => `%${likeLiteral(JSON.stringify(url).slice(1, -1))}%`);
  return tuples<[string, number, string]>(
    tx.client,
    `select v.uuid, v.slot, v.body from listing_positions lp join versions v on v.id = lp.version_id
      where lp.valid_to_run is null and v.body like any($1::text[])
      order by lp.position`,
    [patterns],
  );
}
