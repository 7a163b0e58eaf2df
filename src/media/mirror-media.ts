import type { HeldMedia, MediaCounts } from '../db/store.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../logger.js';
import { USER_AGENT } from '../version.js';
import {
  MediaFetcher,
  RunBudget,
  type FetchOutcome,
  type MediaFailureCode,
  type Validators,
} from './fetch-media.js';
import { claimFolderFor, logSharedFolder, type FolderClaim } from './claim-folder.js';
import { isAllowedMediaUrl, mediaRefs } from './media-refs.js';
import { MediaStore } from './media-store.js';
import type { MediaSettings } from './settings.js';

/** One distinct media URL of the listing and what this run got for it. */
export interface MediaItem {
  url: string;
  /** The sha256 held for this URL before the run (its latest version with a live file), if any. */
  heldSha256: string | null;
  result: FetchOutcome;
}

/** What a run's media phase hands to the commit: every file it names is already durable. */
export interface MediaOutcome {
  items: MediaItem[];
  /** Every allowed media URL the listing names. */
  listed: ReadonlySet<string>;
  counts: MediaCounts;
  /** The media folder as this run claimed it: only an owned one has anything deleted. */
  folder: FolderClaim;
}

export interface MirrorMediaDeps {
  store: Store;
  logger: Logger;
  signal?: AbortSignal;
}

/**
 * The media phase of a run, between a validated listing and its commit: claims the media folder
 * for this database (a folder of another throws MEDIA_DIR_FOREIGN), collects what a killed run
 * left (in a folder this database owns), then downloads (or revalidates) every allowed media URL the listing names, with bounded
 * concurrency and a byte budget. A URL that fails is an item with a reason, never a thrown error;
 * only the run's own abort throws.
 */
export async function mirrorMedia(
  settings: MediaSettings,
  /** The listing's entry texts, read once (the sync streams them from its stage). */
  entryTexts: Iterable<string> | AsyncIterable<string>,
  deps: MirrorMediaDeps,
): Promise<MediaOutcome> {
  const log = deps.logger.child({ module: 'media' });
  const mediaStore = new MediaStore(settings.dir);
  const folder = await claimFolderFor(settings, deps.store, log);
  await collectLeftovers(deps.store, mediaStore, folder, log);
  const listed = await listedUrls(entryTexts, settings.origins, log);
  // Bytes the database holds need no local copy to be revalidated: any instance may run the sync.
  const held = heldValidators(await deps.store.heldMedia(), deps.store.holdsBlobs ? null : mediaStore);
  const fetcher = new MediaFetcher({
    origins: settings.origins,
    store: mediaStore,
    maxBytes: settings.maxBytes,
    timeoutMs: settings.timeoutMs,
    connectTimeoutMs: settings.connectTimeoutMs,
    concurrency: settings.concurrency,
    userAgent: USER_AGENT,
    ...(deps.signal ? { signal: deps.signal } : {}),
  });
  const budget = new RunBudget(settings.runMaxBytes);
  const urls = [...listed];
  const items: MediaItem[] = new Array<MediaItem>(urls.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < urls.length) {
      const index = next++;
      const url = urls[index] ?? '';
      const known = held.get(url) ?? null;
      const result = await fetcher.fetch(url, known?.validators ?? null, budget);
      // One line per URL only at debug: a host that is down fails every URL, and the run's summary says so.
      if (result.kind === 'failed') {
        log.debug({ media: { url }, code: result.code, reason: result.message }, 'media URL not mirrored');
      }
      items[index] = { url, heldSha256: known?.sha256 ?? null, result };
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(settings.concurrency, urls.length) }, worker));
  } finally {
    await fetcher.close();
    // Even on abort: no file handle or rename may outlive the phase.
    await settleFiles(items, log);
  }
  await mediaStore.flushDirectories();
  if (deps.store.holdsBlobs) await storeBlobs(items, { store: deps.store, mediaStore, log, settings });
  const counts = countOutcomes(items);
  logFailures(items, log);
  log.info(counts, 'media mirrored');
  return { items, listed, counts, folder };
}

/**
 * Deletes what a killed run left: temp files, files and stored bytes no kept row names. In a folder
 * this database does not own, files stay: they may be another database's.
 */
async function collectLeftovers(
  store: Store,
  mediaStore: MediaStore,
  folder: FolderClaim,
  log: Logger,
): Promise<void> {
  const live = await store.liveMediaObjects();
  const collected =
    folder.kind === 'owned'
      ? mediaStore.collectGarbage((sha) => live.has(sha), folder.owner)
      : { temps: 0, objects: [] };
  if (folder.kind === 'shared') logSharedFolder(mediaStore.dir, folder.unreferenced, log);
  const blobs = await store.dropUnreferencedBlobs();
  if (collected.temps > 0 || collected.objects.length > 0 || blobs > 0) {
    log.info(
      { temps: collected.temps, objects: collected.objects.length, blobs },
      'collected media files no row references',
    );
  }
}

/**
 * Copies every fetched file into the database before the run commits (so every instance can serve
 * it), `concurrency` at a time; a file that cannot be copied becomes a failed item, as a file that
 * cannot be written to disk does.
 */
async function storeBlobs(
  items: MediaItem[],
  {
    store,
    mediaStore,
    log,
    settings,
  }: { store: Store; mediaStore: MediaStore; log: Logger; settings: MediaSettings },
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      const item = items[index];
      if (item?.result.kind === 'revalidated' && item.heldSha256 !== null) {
        await backfill(store, mediaStore, item.heldSha256, log);
        continue;
      }
      if (item?.result.kind !== 'fetched') continue;
      try {
        await store.putBlob(item.result.sha256, mediaStore.pathOf(item.result.sha256));
      } catch (error) {
        const message = `cannot store the file in the database: ${(error as Error).message}`;
        log.debug({ media: { url: item.url }, err: error }, 'media file not stored');
        items[index] = {
          ...item,
          result: { kind: 'failed', code: 'MEDIA_STORE_FAILED', message, bytes: item.result.bytes },
        };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(settings.concurrency, items.length) }, worker));
}

/**
 * Bytes mirrored before the database held them (a PostgreSQL store from before media_blob_chunks)
 * are copied in by the instance whose folder has them, so the others can serve them too. Checked per
 * revalidated URL (putBlob asks one indexed row first); a failure is logged and tried next run.
 */
async function backfill(store: Store, mediaStore: MediaStore, sha256: string, log: Logger): Promise<void> {
  if (!mediaStore.has(sha256)) return;
  try {
    if (await store.putBlob(sha256, mediaStore.pathOf(sha256))) {
      log.info({ sha256 }, 'media file copied into the database');
    }
  } catch (err) {
    log.warn({ err, sha256 }, 'media file not copied into the database; tried again next run');
  }
}

/** Waits for every file to be durable; one that could not be stored becomes a failed item. */
async function settleFiles(items: (MediaItem | undefined)[], log: Logger): Promise<void> {
  await Promise.all(
    items.map(async (item, index) => {
      if (item?.result.kind !== 'fetched') return;
      try {
        await item.result.durable;
      } catch (error) {
        const message = (error as Error).message;
        log.debug({ media: { url: item.url }, err: error }, 'media file not stored');
        items[index] = {
          ...item,
          result: { kind: 'failed', code: 'MEDIA_STORE_FAILED', message, bytes: item.result.bytes },
        };
      }
    }),
  );
}

/** How many failed URLs the run's summary line names; the rest are counted. */
export const FAILURES_NAMED = 5;

/**
 * One line for every URL the run could not mirror: the count by code and the first few URLs (the
 * upstream's data, under their own key). An error when the mirror could not store a file (its own
 * disk or database), a warning when hosts did not answer as asked; nothing when none failed.
 */
function logFailures(items: readonly MediaItem[], log: Logger): void {
  const codes: Partial<Record<MediaFailureCode, number>> = {};
  const named: { url: string; code: MediaFailureCode; reason: string }[] = [];
  let failed = 0;
  for (const { url, result } of items) {
    if (result.kind !== 'failed') continue;
    failed += 1;
    codes[result.code] = (codes[result.code] ?? 0) + 1;
    if (named.length < FAILURES_NAMED) named.push({ url, code: result.code, reason: result.message });
  }
  if (failed === 0) return;
  const level = codes.MEDIA_STORE_FAILED !== undefined ? 'error' : 'warn';
  log[level]({ failed, of: items.length, codes, media: { failures: named } }, 'media not mirrored this run');
}

function countOutcomes(items: readonly MediaItem[]): MediaCounts {
  const counts: MediaCounts = { fetched: 0, revalidated: 0, failed: 0, bytes: 0 };
  for (const { result } of items) {
    counts[result.kind] += 1;
    counts.bytes += result.bytes;
  }
  return counts;
}

async function listedUrls(
  entryTexts: Iterable<string> | AsyncIterable<string>,
  origins: readonly string[],
  log: Logger,
): Promise<Set<string>> {
  const allowed = new Set(origins);
  const listed = new Set<string>();
  const refused = new Set<string>();
  for await (const text of entryTexts) {
    for (const { url } of mediaRefs(JSON.parse(text))) {
      if (isAllowedMediaUrl(url, allowed)) listed.add(url);
      else refused.add(url);
    }
  }
  if (refused.size > 0) {
    log.info(
      { refused: refused.size, example: { media: [...refused][0] }, origins },
      'media URLs outside MEDIA_ORIGINS are left to their host',
    );
  }
  return listed;
}

/** Per URL, the bytes held (latest version whose file is live) and the validators that vouch for them. */
function heldValidators(
  rows: readonly HeldMedia[],
  mediaStore: MediaStore | null,
): Map<string, { sha256: string; validators: Validators }> {
  const held = new Map<string, { sha256: string; validators: Validators }>();
  for (const { url, sha256, etag, lastModified } of rows) {
    // A file lost outside the mirror's control is fetched again in full rather than revalidated.
    if (mediaStore !== null && !mediaStore.has(sha256)) continue;
    held.set(url, { sha256, validators: { etag, lastModified } });
  }
  return held;
}
