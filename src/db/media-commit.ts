import { jsonSpelling, mediaChangeRows, mediaVersionWrites, type MediaChange } from './commit-plans.js';
import { columns } from './port-shapes.js';
import type { MediaCommit } from './run-commit.js';
import type { SqlPort } from './sql-port.js';

/**
 * Blobs, versions per URL, the URL's last attempt, media_changed changes and the run's figures,
 * written inside the run's own transaction after its listing: the listing and the media it
 * references appear together or not at all. Once for both dialects over the port.
 */
export async function writeMediaRows(tx: SqlPort, runId: number, media: MediaCommit): Promise<void> {
  await writeBlobs(tx, runId, media);
  const sql = 'select url, id, sha256 from media_versions where valid_to_run is null order by id';
  const open = await tx.rows<[string, number, string]>(sql);
  const writes = mediaVersionWrites(new Map(open.map(([url, id, sha256]) => [url, { id, sha256 }])), media);
  if (writes.close.length > 0) {
    const ids = tx.oneOf('id', 'bigint', writes.close);
    await tx.run(`update media_versions set valid_to_run = ? where ${ids.sql}`, [runId, ids.param]);
  }
  const opened = writes.open.map(([url, sha256]) => [url, sha256, runId]);
  await tx.insert('media_versions', columns('url text, sha256 text, valid_from_run bigint'), opened);
  await writeUrlStates(tx, runId, media);
  await writeMediaChanges(tx, runId, writes.changed, media.refsOf);
  await tx.run(
    'insert into media_runs (run_id, fetched, revalidated, failed, bytes) values (?, ?, ?, ?, ?)',
    [runId, media.counts.fetched, media.counts.revalidated, media.counts.failed, media.counts.bytes],
  );
}

async function writeBlobs(tx: SqlPort, runId: number, { items }: MediaCommit): Promise<void> {
  // One row per sha256, the first's (a statement's ON CONFLICT may not touch one row twice).
  const blobs = new Map<string, unknown[]>();
  for (const { result } of items) {
    if (result.kind === 'fetched' && !blobs.has(result.sha256)) {
      blobs.set(result.sha256, [result.sha256, result.size, result.contentType, runId]);
    }
  }
  // A file retention dropped and a later run fetched again is live once more.
  await tx.insert(
    'media_blobs',
    columns('sha256 text, size bigint, content_type text, created_run bigint'),
    [...blobs.values()],
    'on conflict (sha256) do update set dropped_at = null where media_blobs.dropped_at is not null',
  );
}

async function writeUrlStates(tx: SqlPort, runId: number, { items }: MediaCommit): Promise<void> {
  // The last attempt of a URL counts (one row per URL: ON CONFLICT may not touch one row twice).
  const last = new Map(items.map((item) => [item.url, item.result]));
  const rows = [...last].map(([url, result]) =>
    result.kind === 'failed'
      ? [url, null, null, runId, result.code, result.message]
      : [url, result.etag, result.lastModified, runId, null, null],
  );
  // A failure keeps the validators of the last good bytes: they still describe what is served.
  await tx.insert(
    'media_urls',
    URL_COLUMNS,
    rows,
    `on conflict (url) do update set
       etag = case when excluded.failure_code is null then excluded.etag else media_urls.etag end,
       last_modified = case when excluded.failure_code is null then excluded.last_modified
                            else media_urls.last_modified end,
       checked_run = excluded.checked_run, failure_code = excluded.failure_code,
       failure_message = excluded.failure_message`,
  );
}

const URL_COLUMNS = columns(
  'url text, etag text, last_modified text, checked_run bigint, failure_code text, failure_message text',
);

/** LIKE's wildcards and escape taken literally. */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * The current listing's entries, in listing order, that may name one of these URLs. PostgreSQL
 * sends only those whose text holds a URL as JSON spells it (the test mediaChangeRows makes
 * first), not every entry text over the wire; SQLite reads them in process.
 */
async function entriesNaming(tx: SqlPort, urls: readonly string[]): Promise<[string, number, string][]> {
  const sql = `select v.uuid, v.slot, v.body from listing_positions lp join versions v on v.id = lp.version_id
      where lp.valid_to_run is null`;
  if (tx.dialect === 'sqlite') return tx.rows(`${sql} order by lp.position`);
  const patterns = urls.map((url) => `%${likeLiteral(jsonSpelling(url))}%`);
  return tx.rows(`${sql} and v.body like any(?::text[]) order by lp.position`, [patterns]);
}

/** One `media_changed` change per appearance and field that names a URL whose bytes changed. */
async function writeMediaChanges(
  tx: SqlPort,
  runId: number,
  changed: readonly MediaChange[],
  refsOf: MediaCommit['refsOf'],
): Promise<void> {
  if (changed.length === 0) return;
  const urls = changed.map((c) => c.url);
  const rows = mediaChangeRows(await entriesNaming(tx, urls), changed, refsOf);
  await tx.insert(
    'changes',
    columns('run_id bigint, uuid text, slot int, kind text, field text, old_value text, new_value text'),
    rows.map(([uuid, slot, ...values]) => [runId, uuid, slot, 'media_changed', ...values]),
  );
}
