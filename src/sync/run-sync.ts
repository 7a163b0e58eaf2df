import type { MediaCounts, RunStart, Store } from '../db/store.js';
import type { Config, NamedUpstream } from '../config/load-config.js';
import { CONTRACT_PAGE_SIZE } from '../config/settings.js';
import type { RunStage, StagedEntry } from '../db/run-commit.js';
import { MirrorError, toMirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createUpstreamClient, type PendingRequest, type UpstreamClient } from '../upstream/client.js';
import {
  crawlInto,
  driftSummary,
  type CrawlBounds,
  type CrawlSink,
  type CrawlSummary,
} from '../upstream/crawl.js';
import { USER_AGENT } from '../version.js';
import { failedRunOutbox, succeededRunOutbox } from '../webhooks/outbox.js';
import { notifyOutboxSettings, notifyRunOutbox } from '../notify/run-outbox.js';
import { mediaCommit } from '../media/commit-media.js';
import { mirrorMedia } from '../media/mirror-media.js';
import { applyMediaRetention } from '../media/retention.js';
import type { MediaSettings } from '../media/settings.js';
import { settingDuration } from '../time/duration.js';
import { bodyHash } from './body-hash.js';
import { confirmListing } from './confirm-listing.js';
import type { DiffCounts } from './diff.js';
import { diffStaged } from './stream-diff.js';
import { beginRun, releaseRun, startHeartbeat } from './run-lock.js';
import { pruneAfterSync, type PruneSummary } from './prune-history.js';

/** What a run reads of the configuration: a named upstream, the sync's bounds, media and webhooks. */
export type SyncConfig = Pick<Config, 'sync' | 'media' | 'webhooks'> &
  Partial<Pick<Config, 'notify' | 'server' | 'prune'>> & { upstream: NamedUpstream };

export interface SyncSummary {
  runId: number;
  pages: number;
  entries: number;
  counts: DiffCounts;
  unknownFields: string[];
  durationMs: number;
  /** Present when the run mirrored media. */
  media?: MediaCounts;
  /** Present when the settings asked for a prune after the sync and it ran. */
  pruned?: PruneSummary;
}

export interface SyncDependencies {
  store: Store;
  logger: Logger;
  signal?: AbortSignal;
  onProgress?: (pagesDone: number, pagesTotal: number) => void;
  /** What started the run and the tick it claims (default: a bare `sync`, no tick). */
  start?: RunStart;
  /** Called once the run row exists, so callers (the admin route) can answer with its id. */
  onRunStarted?: (runId: number) => void | Promise<void>;
  /** Injected for tests; defaults to a client built from the settings. */
  client?: UpstreamClient;
  /**
   * The clock a run is started by and judges a held drop's age by (SYNC_CONFIRM_DROP_AFTER);
   * injected by tests, so that time-based behaviour never waits.
   */
  now?: () => Date;
}

/** One run in flight: its row, its logger, its client, and its dependencies under its deadline. */
interface Run {
  id: number;
  /** The run's recorded start (ISO), by the injected clock when there is one. */
  startedAt: string;
  log: Logger;
  started: number;
  client: UpstreamClient;
  deps: SyncDependencies & { signal: AbortSignal };
  /** What a refused run saw, recorded with its failure: the next runs recognise the same drop by it. */
  seen?: { pages: number; entries: number };
}

/**
 * One sync run: take the lock, crawl, diff against what is stored, commit in one transaction.
 * Any failure leaves the stored state untouched and records the run as failed (or aborted) with
 * a code and a reason, then rethrows.
 */
export async function runSync(config: SyncConfig, outer: SyncDependencies): Promise<SyncSummary> {
  const started = Date.now();
  const { label } = config.upstream.target;
  const { id, startedAt, trigger, scheduledFor } = await beginRun(
    outer.store,
    label,
    outer.start,
    outer.now?.(),
  );
  const log = outer.logger.child({ runId: id });
  await outer.onRunStarted?.(id);
  log.info({ upstream: label, trigger, scheduledFor }, 'sync started');
  // Every wait has an end: past the run's deadline every request and sleep is cancelled.
  const deadline = new AbortController();
  const deps = {
    ...outer,
    signal: AbortSignal.any([outer.signal, deadline.signal].filter((s) => s !== undefined)),
  };
  const client = deps.client ?? buildUpstreamClient(config, log, deps.signal);
  const watchdog = startDeadline(config.sync.maxDurationMs, deadline, client);
  const stopHeartbeat = startHeartbeat(deps.store, id);
  const run: Run = { id, startedAt, log, started, client, deps };
  try {
    return await syncListing(config, run);
  } catch (thrown) {
    const error =
      deadline.signal.aborted && !outer.signal?.aborted
        ? runTimeoutError(config.sync.maxDurationMs, watchdog.stalled(), thrown)
        : deps.signal.aborted
          ? abortError(deps.signal, thrown)
          : toMirrorError(thrown);
    throw await recordFailure(config, run, error);
  } finally {
    watchdog.clear();
    await releaseRun(deps.store, id);
    stopHeartbeat();
    if (!deps.client) await client.close();
  }
}

/** Aborts the run past its deadline, noting first the request it was still waiting for. */
function startDeadline(
  maxDurationMs: number,
  deadline: AbortController,
  client: UpstreamClient,
): { stalled: () => PendingRequest | undefined; clear: () => void } {
  let stalled: PendingRequest | undefined;
  const timer = setTimeout(() => {
    // Read before aborting: cancelled requests leave the in-flight list.
    stalled = client.pending?.()[0];
    deadline.abort(new Error(`run deadline of ${maxDurationMs} ms passed`));
  }, maxDurationMs);
  timer.unref();
  return { stalled: () => stalled, clear: () => clearTimeout(timer) };
}

/**
 * The run's work once it holds the lock, over its stage: a confirmed listing, its media, one
 * commit. The stage is dropped whatever happens: a failed run leaves nothing but its run record.
 */
async function syncListing(config: SyncConfig, run: Run): Promise<SyncSummary> {
  const stage = await run.deps.store.openStage(run.id);
  try {
    return await syncStaged(config, run, stage);
  } finally {
    // A stage that cannot be dropped (a lost connection) died with its session anyway.
    await stage.close().catch((err: unknown) => run.log.warn({ err }, 'could not drop the run stage'));
  }
}

async function syncStaged(config: SyncConfig, run: Run, stage: RunStage): Promise<SyncSummary> {
  const { first, counts } = await crawlAndDiff(config, run, stage);
  const { deps, log } = run;
  // Media phase: every file is durable before the commit that references it; a media failure is
  // recorded per URL and never fails the run.
  const mediaSettings = mediaSettingsOf(config);
  const media = mediaSettings
    ? await mirrorMedia(mediaSettings, stage.texts(), { store: deps.store, logger: log, signal: deps.signal })
    : null;
  if (deps.signal.aborted) throw abortError(deps.signal);
  await stage.commit({
    runId: run.id,
    finishedAt: new Date().toISOString(),
    counts,
    pages: first.pages,
    pageSize: await observedPageSize(deps.store, first),
    optionsBody: first.optionsBody,
    // The first hundred say what drifted; thousands more would only grow every run's row.
    unknownFields: first.unknownFields.slice(0, 100),
    media: mediaCommit(media),
    outbox: succeededRunOutbox(config.webhooks, deps.store.endpointKeys),
    notify: notifyRunOutbox(notifyOutboxSettings(config, deps.store.endpointKeys)),
  });
  if (mediaSettings && media) await applyMediaRetention(deps.store, mediaSettings, media.folder, log);
  const pruned = await pruneAfterSync(
    config,
    deps.store,
    { runId: run.id, folder: media?.folder ?? null },
    log,
  );
  const summary: SyncSummary = {
    runId: run.id,
    pages: first.pages,
    entries: first.count,
    counts,
    unknownFields: [...new Set(first.unknownFields.map((u) => u.field))],
    durationMs: Date.now() - run.started,
    ...(media ? { media: media.counts } : {}),
    ...(pruned ? { pruned } : {}),
  };
  const { runId: _runId, pruned: _pruned, ...figures } = summary;
  log.info(figures, 'sync succeeded');
  return summary;
}

/**
 * Crawls into the stage, diffs it against what is stored, and confirms what a single crawl cannot
 * be trusted with.
 */
async function crawlAndDiff(
  config: SyncConfig,
  run: Run,
  stage: RunStage,
): Promise<{ first: CrawlSummary; counts: DiffCounts }> {
  const { client, deps, log } = run;
  const first = await stageCrawl(stage, (sink) => crawlOnce(config, client, log, deps, sink));
  const held = await stage.holdCurrent(bodyHash);
  const counts = await diffStaged(stage, deps.store, deps.signal);
  await confirmListing(
    {
      baseUrl: config.upstream.target.url,
      client,
      logger: log,
      signal: deps.signal,
      limits: crawlBounds(config),
      crawlAgain: (sink) => crawlOnce(config, client, log, { ...deps, onProgress: undefined }, sink),
    },
    stage,
    first,
    counts.removed,
  );
  const refusal = await unconfirmedDrop(deps.store, config, run, {
    listed: first.count,
    held,
    removed: counts.removed,
  });
  if (refusal) {
    run.seen = { pages: first.pages, entries: first.count };
    throw refusal;
  }
  if (deps.signal.aborted) throw abortError(deps.signal);
  if (first.unknownFields.length > 0) {
    log.warn(
      driftSummary(first.unknownFields),
      'schema drift: upstream entries carry fields the contract does not name; kept as received',
    );
  }
  return { first, counts };
}

/** Entries staged per transaction. */
const STAGE_BATCH = 1_000;

/**
 * A crawl whose pages go to the stage in batches as they arrive, one append at a time (a stage
 * is one connection), the crawl waiting for its page's batch: memory holds a batch, not the listing.
 */
async function stageCrawl(
  stage: RunStage,
  crawlWith: (sink: CrawlSink) => Promise<CrawlSummary>,
): Promise<CrawlSummary> {
  let batch: StagedEntry[] = [];
  let tail: Promise<void> = Promise.resolve();
  const flush = (): Promise<void> => {
    const rows = batch;
    batch = [];
    tail = tail.then(() => stage.append(rows));
    return tail;
  };
  const summary = await crawlWith({
    onPage: async (page, entries) => {
      for (const e of entries) {
        batch.push({
          position: e.position,
          page,
          index: e.index,
          uuid: e.uuid,
          body: e.json,
          hash: bodyHash(e.json),
        });
      }
      if (batch.length >= STAGE_BATCH) await flush();
    },
    reset: async () => {
      batch = [];
      await tail;
      await stage.reset();
    },
  });
  await flush();
  return summary;
}

/** Records the run as failed (or aborted) with its `sync.failed` notification, and logs it. */
async function recordFailure(config: SyncConfig, run: Run, error: MirrorError): Promise<MirrorError> {
  const { deps, log } = run;
  const status = error.code === 'RUN_ABORTED' ? 'aborted' : 'failed';
  Object.assign(error.details, { runId: run.id });
  try {
    // The failure and its `sync.failed` notification (the outbox) land together or not at all.
    await deps.store.endRun({
      runId: run.id,
      status,
      error,
      ...(run.seen ? { stats: run.seen } : {}),
      outbox: failedRunOutbox(config.webhooks, deps.store.endpointKeys),
      notify: notifyRunOutbox(notifyOutboxSettings(config, deps.store.endpointKeys)),
    });
  } catch (endError) {
    // The row stays `running`; the next start of any process (this one included) marks it
    // aborted, since no live holder claims it.
    log.error({ err: endError }, 'could not record the run as ended');
  }
  log.error({ err: error, code: error.code }, status === 'aborted' ? 'sync aborted' : 'sync failed');
  return error;
}

/** The byte budgets of one crawl, from the sync's and the upstream's settings. */
function crawlBounds(config: SyncConfig): CrawlBounds {
  return {
    maxListingBytes: config.sync.maxListingBytes,
    maxEntries: config.sync.maxEntries,
    maxBytes: config.sync.maxEntryBytes,
    maxDepth: config.sync.maxEntryDepth,
    maxOptionsBytes: config.upstream.maxOptionsBytes,
  };
}

/** Null when MEDIA_ORIGINS is unset: media URLs are then left to their host. */
function mediaSettingsOf(config: SyncConfig): MediaSettings | null {
  const { origins } = config.media;
  return origins ? { ...config.media, origins, connectTimeoutMs: config.upstream.connectTimeoutMs } : null;
}

/** The upstream client a run uses, built from its settings (benchmarks crawl with the same one). */
export function buildUpstreamClient(
  config: Pick<SyncConfig, 'upstream'>,
  logger: Logger,
  signal?: AbortSignal,
): UpstreamClient {
  const { upstream } = config;
  return createUpstreamClient({
    baseUrl: upstream.target.url,
    connectTimeoutMs: upstream.connectTimeoutMs,
    headersTimeoutMs: upstream.timeoutMs,
    bodyTimeoutMs: upstream.timeoutMs,
    maxBodyBytes: upstream.maxBodyBytes,
    maxAttempts: upstream.maxAttempts,
    maxRetryAfterMs: upstream.maxRetryAfterMs,
    requestDeadlineMs: upstream.requestDeadlineMs,
    userAgent: USER_AGENT,
    headers: upstream.target.headers,
    logger,
    ...(signal ? { signal } : {}),
  });
}

function crawlOnce(
  config: SyncConfig,
  client: UpstreamClient,
  logger: Logger,
  deps: Pick<SyncDependencies, 'signal' | 'onProgress'>,
  sink: CrawlSink,
): Promise<CrawlSummary> {
  return crawlInto(
    {
      client,
      baseUrl: config.upstream.target.url,
      concurrency: config.sync.concurrency,
      maxPages: config.sync.maxPages,
      maxCrawlAttempts: config.sync.maxCrawlAttempts,
      logger,
      ...(deps.signal ? { signal: deps.signal } : {}),
      onProgress: progressReporter(logger, deps.onProgress),
      bounds: crawlBounds(config),
    },
    sink,
  );
}

/**
 * An empty listing where the mirror holds entries is more often an upstream accident than the team
 * leaving; so is a sudden large drop (a half-broken upstream serving half its rows). Either is
 * recorded only once it has held for SYNC_CONFIRM_DROP_AFTER: the first run that saw it is that old
 * and every run since saw the same listing size, so a fast schedule confirms no sooner than a slow
 * one (or at once when allowed outright). Until then the mirror keeps serving what it holds and the
 * refusal says when the drop would be accepted.
 */
async function unconfirmedDrop(
  store: Store,
  config: SyncConfig,
  run: Pick<Run, 'id' | 'startedAt' | 'deps'>,
  { listed, held, removed }: { listed: number; held: number; removed: number },
): Promise<MirrorError | null> {
  if (held === 0 || removed === 0) return null;
  const empty = listed === 0;
  if (empty ? config.sync.allowEmpty : !isLargeDrop(removed, held, config.sync.confirmDrop)) return null;
  const code = empty ? 'EMPTY_LISTING_UNCONFIRMED' : 'LARGE_DROP_UNCONFIRMED';
  const after = config.sync.confirmDropAfterMs;
  // A run that saw another listing size, or any other outcome, in between restarts the clock.
  const streakStart = await store.refusalStreakStart(run.id, code, listed);
  const firstSeenAt = streakStart ?? run.startedAt;
  const acceptFrom = new Date(Date.parse(firstSeenAt) + after);
  const now = run.deps.now?.() ?? new Date();
  if (streakStart !== null && now >= acceptFrom) return null;
  const hold = { firstSeenAt, acceptFrom: acceptFrom.toISOString(), confirmDropAfterMs: after };
  const when = confirmationWhen(after, acceptFrom);
  if (empty) {
    return new MirrorError(
      code,
      `the upstream answered an empty listing while the mirror holds ${held} entries; ` +
        `refusing to record everyone as removed. If the team list really is empty, ${when} ` +
        '(or run sync with --allow-empty)',
      { held, ...hold },
    );
  }
  const percent = Math.round((removed / held) * 100);
  return new MirrorError(
    code,
    `the upstream lists ${entries(listed)} where the mirror holds ${held}: ${removed} ` +
      `(${percent}%) would be recorded as removed, more than SYNC_CONFIRM_DROP (${config.sync.confirmDrop * 100}%) ` +
      `of them. Nothing was stored and the mirror keeps serving what it holds; if the drop is real, ${when} ` +
      '(or set SYNC_CONFIRM_DROP=0 to record such drops at once)',
    { held, removed, listed, share: config.sync.confirmDrop, ...hold },
  );
}

/** When a held drop would be recorded, in the words of a refusal. */
function confirmationWhen(afterMs: number, acceptFrom: Date): string {
  if (afterMs === 0) return 'the next run confirms it';
  const at = acceptFrom
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
  return (
    `it would be accepted from ${at} if the upstream still lists the same ` +
    `(SYNC_CONFIRM_DROP_AFTER=${settingDuration(afterMs)} after the first run that saw it)`
  );
}

const entries = (n: number): string => `${n} ${n === 1 ? 'entry' : 'entries'}`;

/**
 * A removal of more than `share` of what is held; a share of 0 holds nothing back. Two people
 * leaving a team of three is news, not an accident: a drop of fewer than MIN_LARGE_DROP entries is
 * never held.
 */
function isLargeDrop(removed: number, held: number, share: number): boolean {
  return share > 0 && removed >= MIN_LARGE_DROP && removed > share * held;
}

const MIN_LARGE_DROP = 3;

/** Logs progress at each quarter of the pages (a bar on a TTY is the CLI's business), then forwards it. */
function progressReporter(
  logger: Logger,
  forward: ((pagesDone: number, pagesTotal: number) => void) | undefined,
): (pagesDone: number, pagesTotal: number) => void {
  let lastQuarter = 0;
  return (pagesDone, pagesTotal) => {
    const quarter = pagesTotal > 0 ? Math.floor((pagesDone / pagesTotal) * 4) : 4;
    if (quarter > lastQuarter) {
      lastQuarter = quarter;
      logger.info({ pagesDone, pagesTotal }, 'sync progress');
    }
    forward?.(pagesDone, pagesTotal);
  };
}

/**
 * A single page does not reveal the page size (it only bounds it from below): keep what earlier
 * runs saw, else the contract's 8, and never less than the entries that page held.
 */
async function observedPageSize(store: Store, result: CrawlSummary): Promise<number> {
  if (result.pages > 1) return result.pageSize;
  return Math.max((await store.latestSucceededRun())?.pageSize ?? CONTRACT_PAGE_SIZE, result.count);
}

function abortError(signal: AbortSignal, cause?: unknown): MirrorError {
  const reason: unknown = signal.reason;
  const why = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'aborted';
  return new MirrorError(
    'RUN_ABORTED',
    `run aborted before it was stored (${why}); nothing was stored`,
    {},
    { cause: cause ?? reason },
  );
}

/** A run past SYNC_MAX_DURATION, naming the request it was still waiting for. */
function runTimeoutError(
  maxDurationMs: number,
  stalled: PendingRequest | undefined,
  cause: unknown,
): MirrorError {
  const what = stalled
    ? `still waiting for ${stalled.method} ${stalled.url} after ${seconds(stalled.waitingMs)} s`
    : 'no request was in flight';
  return new MirrorError(
    'SYNC_TIMEOUT',
    `run passed its ${seconds(maxDurationMs)} s deadline (SYNC_MAX_DURATION), ${what}; nothing was stored`,
    {
      maxDurationMs,
      ...(stalled ? { url: stalled.url, method: stalled.method, waitingMs: stalled.waitingMs } : {}),
      ...(stalled?.page !== undefined ? { page: stalled.page } : {}),
    },
    { cause },
  );
}

/** Whole seconds, or tenths below ten seconds. */
function seconds(ms: number): string {
  return ms < 10_000 ? (ms / 1000).toFixed(1) : String(Math.round(ms / 1000));
}
