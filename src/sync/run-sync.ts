import type { MirrorDatabase } from '../db/open.js';
import { runs } from '../db/schema.js';
import { MirrorError, toMirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createUpstreamClient, type PendingRequest, type UpstreamClient } from '../upstream/client.js';
import {
  DEFAULT_CRAWL_BOUNDS,
  crawl,
  driftSummary,
  type CrawlBounds,
  type CrawlResult,
} from '../upstream/crawl.js';
import { USER_AGENT } from '../version.js';
import { writeFailedRunOutbox } from '../webhooks/outbox.js';
import type { OutboxSettings } from '../webhooks/settings.js';
import { commitWithMedia } from '../media/commit-media.js';
import { mirrorMedia, type MediaCounts } from '../media/mirror-media.js';
import { applyMediaRetention } from '../media/retention.js';
import type { MediaSettings } from '../media/settings.js';
import { desc, eq, lt } from 'drizzle-orm';
import { bodyHash } from './body-hash.js';
import { confirmListing } from './confirm-listing.js';
import { diffListing, type DiffCounts } from './diff.js';
import { beginRun, endRunWithoutData, releaseRun, startHeartbeat } from './run-lock.js';
import { commitRun, loadCurrentState, type CurrentState } from './store-run.js';

export interface SyncSettings {
  upstreamUrl: string;
  /** What is stored, logged and served for the upstream (credentials masked); default `upstreamUrl`. */
  upstreamLabel?: string;
  /** Sent on every upstream request (authentication). */
  upstreamHeaders?: Record<string, string>;
  concurrency: number;
  maxPages: number;
  maxCrawlAttempts: number;
  allowEmpty: boolean;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  maxBodyBytes: number;
  maxAttempts: number;
  maxRetryAfterMs: number;
  /** Webhooks written to the outbox in the run's transaction; none when undefined. */
  webhooks?: OutboxSettings | undefined;
  /** Media mirroring (MEDIA_ORIGINS); absent or null: media URLs are left to their host. */
  media?: MediaSettings | null;
  /** Byte and time budgets of a run; each missing one takes its documented default. */
  bounds?: Partial<SyncBounds>;
}

export interface SyncBounds extends CrawlBounds {
  /** Total deadline of one run (SYNC_MAX_DURATION). */
  maxDurationMs: number;
  /** Total deadline of one request attempt (UPSTREAM_REQUEST_DEADLINE). */
  requestDeadlineMs: number;
}

export const DEFAULT_SYNC_BOUNDS: Omit<SyncBounds, keyof CrawlBounds> = {
  maxDurationMs: 15 * 60_000,
  requestDeadlineMs: 120_000,
};

export interface SyncSummary {
  runId: number;
  pages: number;
  entries: number;
  counts: DiffCounts;
  unknownFields: string[];
  durationMs: number;
  /** Present when the run mirrored media. */
  media?: MediaCounts;
}

export interface SyncDependencies {
  store: MirrorDatabase;
  logger: Logger;
  signal?: AbortSignal;
  onProgress?: (pagesDone: number, pagesTotal: number) => void;
  /** Called once the run row exists, so callers (the admin route) can answer with its id. */
  onRunStarted?: (runId: number) => void;
  /** Injected for tests; defaults to a client built from the settings. */
  client?: UpstreamClient;
}

/**
 * One sync run: take the lock, crawl, diff against what is stored, commit in one transaction.
 * Any failure leaves the stored state untouched and records the run as failed (or aborted) with
 * a code and a reason, then rethrows.
 */
export async function runSync(settings: SyncSettings, outer: SyncDependencies): Promise<SyncSummary> {
  const started = Date.now();
  const run = beginRun(outer.store, settings.upstreamLabel ?? settings.upstreamUrl);
  const log = outer.logger.child({ runId: run.id });
  outer.onRunStarted?.(run.id);
  log.info({ upstream: settings.upstreamLabel ?? settings.upstreamUrl }, 'sync started');
  // Every wait has an end: past the run's deadline every request and sleep is cancelled.
  const maxDurationMs = settings.bounds?.maxDurationMs ?? DEFAULT_SYNC_BOUNDS.maxDurationMs;
  const deadline = new AbortController();
  const deps = {
    ...outer,
    signal: AbortSignal.any([outer.signal, deadline.signal].filter((s) => s !== undefined)),
  };
  const client = deps.client ?? buildUpstreamClient(settings, log, deps.signal);
  let stalled: PendingRequest | undefined;
  const deadlineTimer = setTimeout(() => {
    // Read before aborting: cancelled requests leave the in-flight list.
    stalled = client.pending?.()[0];
    deadline.abort(new Error(`run deadline of ${maxDurationMs} ms passed`));
  }, maxDurationMs);
  deadlineTimer.unref();
  const stopHeartbeat = startHeartbeat(deps.store, run.id);
  try {
    const first = await crawlOnce(settings, client, log, deps);
    const state = loadCurrentState(deps.store);
    const listing = first.entries.map((e) => ({ uuid: e.uuid, json: e.json, hash: bodyHash(e.json) }));
    const diff = diffListing({
      current: state.appearances,
      known: state.known,
      listing,
      bodyOf: state.bodyOf,
    });
    await confirmListing(
      {
        baseUrl: settings.upstreamUrl,
        client,
        logger: log,
        signal: deps.signal,
        limits: { ...DEFAULT_CRAWL_BOUNDS, ...settings.bounds },
        crawlAgain: () => crawlOnce(settings, client, log, { ...deps, onProgress: undefined }),
      },
      first,
      diff,
    );
    refuseUnconfirmedEmpty(deps.store, settings, run.id, first, state);
    if (deps.signal?.aborted) throw abortError(deps.signal);
    const unknownFields = [...new Set(first.unknownFields.map((u) => u.field))];
    if (unknownFields.length > 0) {
      log.warn(
        driftSummary(first.unknownFields),
        'schema drift: upstream entries carry fields the contract does not name; kept as received',
      );
    }
    // Media phase: every file is durable before the commit that references it; a media failure is
    // recorded per URL and never fails the run.
    const media = settings.media
      ? await mirrorMedia(
          settings.media,
          first.entries.map((e) => e.json),
          { store: deps.store, logger: log, ...(deps.signal ? { signal: deps.signal } : {}) },
        )
      : null;
    if (deps.signal?.aborted) throw abortError(deps.signal);
    commitWithMedia(deps.store, run.id, media, () =>
      commitRun(deps.store, {
        runId: run.id,
        finishedAt: new Date().toISOString(),
        diff,
        state,
        pages: first.pages,
        pageSize: observedPageSize(deps.store, first),
        optionsBody: first.optionsBody,
        // The first hundred say what drifted; thousands more would only grow every run's row.
        unknownFields: first.unknownFields.slice(0, 100),
        webhooks: settings.webhooks,
      }),
    );
    if (settings.media) applyMediaRetention(deps.store, settings.media, log);
    const summary: SyncSummary = {
      runId: run.id,
      pages: first.pages,
      entries: first.entries.length,
      counts: diff.counts,
      unknownFields,
      durationMs: Date.now() - started,
      ...(media ? { media: media.counts } : {}),
    };
    const { runId: _runId, ...figures } = summary;
    log.info(figures, 'sync succeeded');
    return summary;
  } catch (thrown) {
    const error =
      deadline.signal.aborted && !outer.signal?.aborted
        ? runTimeoutError(maxDurationMs, stalled, thrown)
        : deps.signal.aborted
          ? abortError(deps.signal, thrown)
          : toMirrorError(thrown);
    const status = error.code === 'RUN_ABORTED' ? 'aborted' : 'failed';
    Object.assign(error.details, { runId: run.id });
    try {
      // The failure and its `sync.failed` notification (the outbox) land together or not at all.
      deps.store.sqlite
        .transaction(() => {
          endRunWithoutData(deps.store, run.id, status, error);
          writeFailedRunOutbox(deps.store, run.id, settings.webhooks);
        })
        .immediate();
    } catch (endError) {
      // The row stays `running`; the next start of any process (this one included) marks it
      // aborted, since no live holder claims it.
      log.error({ err: endError }, 'could not record the run as ended');
    }
    log.error({ err: error, code: error.code }, status === 'aborted' ? 'sync aborted' : 'sync failed');
    throw error;
  } finally {
    clearTimeout(deadlineTimer);
    releaseRun(deps.store, run.id);
    stopHeartbeat();
    if (!deps.client) await client.close();
  }
}

/** The upstream client a run uses, built from its settings (benchmarks crawl with the same one). */
export function buildUpstreamClient(
  settings: SyncSettings,
  logger: Logger,
  signal?: AbortSignal,
): UpstreamClient {
  return createUpstreamClient({
    baseUrl: settings.upstreamUrl,
    connectTimeoutMs: settings.connectTimeoutMs,
    headersTimeoutMs: settings.requestTimeoutMs,
    bodyTimeoutMs: settings.requestTimeoutMs,
    maxBodyBytes: settings.maxBodyBytes,
    maxAttempts: settings.maxAttempts,
    maxRetryAfterMs: settings.maxRetryAfterMs,
    requestDeadlineMs: settings.bounds?.requestDeadlineMs ?? DEFAULT_SYNC_BOUNDS.requestDeadlineMs,
    userAgent: USER_AGENT,
    ...(settings.upstreamHeaders ? { headers: settings.upstreamHeaders } : {}),
    logger,
    ...(signal ? { signal } : {}),
  });
}

function crawlOnce(
  settings: SyncSettings,
  client: UpstreamClient,
  logger: Logger,
  deps: SyncDependencies,
): Promise<CrawlResult> {
  return crawl({
    client,
    baseUrl: settings.upstreamUrl,
    concurrency: settings.concurrency,
    maxPages: settings.maxPages,
    maxCrawlAttempts: settings.maxCrawlAttempts,
    logger,
    ...(deps.signal ? { signal: deps.signal } : {}),
    onProgress: progressReporter(logger, deps.onProgress),
    ...(settings.bounds ? { bounds: settings.bounds } : {}),
  });
}

/**
 * An empty listing where the mirror holds entries is more often an upstream accident than the team
 * leaving. It is recorded only when the previous attempt saw the same (or when allowed outright).
 */
function refuseUnconfirmedEmpty(
  store: MirrorDatabase,
  settings: SyncSettings,
  runId: number,
  crawlResult: CrawlResult,
  state: CurrentState,
): void {
  if (crawlResult.entries.length > 0 || state.appearances.length === 0 || settings.allowEmpty) return;
  const previous = store.db
    .select({ status: runs.status, errorCode: runs.errorCode })
    .from(runs)
    .where(lt(runs.id, runId))
    .orderBy(desc(runs.id))
    .limit(1)
    .get();
  if (previous?.errorCode === 'EMPTY_LISTING_UNCONFIRMED') return;
  throw new MirrorError(
    'EMPTY_LISTING_UNCONFIRMED',
    `the upstream answered an empty listing while the mirror holds ${state.appearances.length} entries; ` +
      'refusing to record everyone as removed. If the team list really is empty, the next run confirms it ' +
      '(or run sync with --allow-empty)',
    { held: state.appearances.length },
  );
}

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

const DEFAULT_PAGE_SIZE = 8;

/**
 * A single page does not reveal the page size (it only bounds it from below): keep what earlier
 * runs saw, else the contract's 8, and never less than the entries that page held.
 */
function observedPageSize(store: MirrorDatabase, result: CrawlResult): number {
  if (result.pages > 1) return result.pageSize;
  const previous = store.db
    .select({ pageSize: runs.pageSize })
    .from(runs)
    .where(eq(runs.status, 'succeeded'))
    .orderBy(desc(runs.id))
    .limit(1)
    .get();
  return Math.max(previous?.pageSize ?? DEFAULT_PAGE_SIZE, result.entries.length);
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
