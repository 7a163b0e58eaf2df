import type { MirrorDatabase } from '../open.js';
import { mediaChangeRows, mediaVersionWrites, type MediaChange } from '../commit-plans.js';
import type { MediaCommit } from '../run-commit.js';

/**
 * Blobs, versions per URL, the URL's last attempt, media_changed changes and the run's figures,
 * written inside the run's own transaction after its listing: the listing and the media it
 * references appear together or not at all.
 */
export function writeMediaRows(store: MirrorDatabase, runId: number, media: MediaCommit): void {
  writeBlobs(store, runId, media);
  const changed = writeVersions(store, runId, media);
  writeUrlStates(store, runId, media);
  writeMediaChanges(store, runId, changed, media.refsOf);
  store.sqlite
    .prepare('insert into media_runs (run_id, fetched, revalidated, failed, bytes) values (?, ?, ?, ?, ?)')
    .run(runId, media.counts.fetched, media.counts.revalidated, media.counts.failed, media.counts.bytes);
}

function writeBlobs(store: MirrorDatabase, runId: number, { items }: MediaCommit): void {
  // A file retention dropped and a later run fetched again is live once more.
  const upsert = store.sqlite.prepare(
    `insert into media_blobs (sha256, size, content_type, created_run) values (?, ?, ?, ?)
     on conflict (sha256) do update set dropped_at = null where dropped_at is not null`,
  );
  for (const { result } of items) {
    if (result.kind === 'fetched') upsert.run(result.sha256, result.size, result.contentType, runId);
  }
}

/** Opens a version where the bytes behind a URL are new, closes those of URLs no longer listed. */
function writeVersions(store: MirrorDatabase, runId: number, media: MediaCommit): MediaChange[] {
  const open = new Map(
    (
      store.sqlite
        .prepare('select url, id, sha256 from media_versions where valid_to_run is null')
        .raw()
        .all() as [string, number, string][]
    ).map(([url, id, sha256]) => [url, { id, sha256 }]),
  );
  const close = store.sqlite.prepare('update media_versions set valid_to_run = ? where id = ?');
  const insert = store.sqlite.prepare(
    'insert into media_versions (url, sha256, valid_from_run) values (?, ?, ?)',
  );
  const writes = mediaVersionWrites(open, media);
  for (const id of writes.close) close.run(runId, id);
  for (const [url, sha256] of writes.open) insert.run(url, sha256, runId);
  return writes.changed;
}

function writeUrlStates(store: MirrorDatabase, runId: number, { items }: MediaCommit): void {
  const ok = store.sqlite.prepare(
    `insert into media_urls (url, etag, last_modified, checked_run, failure_code, failure_message)
     values (?, ?, ?, ?, null, null)
     on conflict (url) do update set etag = excluded.etag, last_modified = excluded.last_modified,
       checked_run = excluded.checked_run, failure_code = null, failure_message = null`,
  );
  // The validators of the last good bytes are kept: they still describe what is served.
  const failed = store.sqlite.prepare(
    `insert into media_urls (url, checked_run, failure_code, failure_message) values (?, ?, ?, ?)
     on conflict (url) do update set checked_run = excluded.checked_run,
       failure_code = excluded.failure_code, failure_message = excluded.failure_message`,
  );
  for (const { url, result } of items) {
    if (result.kind === 'failed') failed.run(url, runId, result.code, result.message);
    else ok.run(url, result.etag, result.lastModified, runId);
  }
}

/** One `media_changed` change per appearance and field that names a URL whose bytes changed. */
function writeMediaChanges(
  store: MirrorDatabase,
  runId: number,
  changed: MediaChange[],
  refsOf: MediaCommit['refsOf'],
): void {
  if (changed.length === 0) return;
  const rows = store.sqlite
    .prepare(
      `select v.uuid, v.slot, v.body from listing_positions lp join versions v on v.id = lp.version_id
        where lp.valid_to_run is null order by lp.position`,
    )
    .raw()
    .iterate() as IterableIterator<[string, number, string]>;
  // Collected before inserting: better-sqlite3 refuses writes while an iterator is open.
  const pending = mediaChangeRows(rows, changed, refsOf);
  const insert = store.sqlite.prepare(
    `insert into changes (run_id, uuid, slot, kind, field, old_value, new_value)
     values (?, ?, ?, 'media_changed', ?, ?, ?)`,
  );
  for (const row of pending) insert.run(runId, ...row);
}
