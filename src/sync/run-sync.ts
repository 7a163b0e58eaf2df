import type { MirrorDatabase } from '../db/open.js';
import { runs } from '../db/schema.js';
import { MirrorError, toMirrorError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createUpstreamClient, type UpstreamClient } from '../upstream/client.js';
import { crawl, type CrawlResult } from '../upstream/crawl.js';
import { USER_AGENT } from '../version.js';
import { desc, eq, lt } from 'drizzle-orm';
import { bodyHash } from './body-hash.js';
import { confirmListing } from './confirm-listing.js';
import { diffListing, type DiffCounts } from './diff.js';
import { beginRun, endRunWithoutData, releaseRun, startHeartbeat } from './run-lock.js';
import { commitRun, loadCurrentState, type CurrentState } from './store-run.js';

export interface SyncSettings {
  upstreamUrl: string;
  concurrency: number;
  maxPages: number;
  maxCrawlAttempts: number;
  allowEmpty: boolean;
  requestTimeoutMs: number;
  connectTimeoutMs: number;
  maxBodyBytes: number;
  maxAttempts: number;
  maxRetryAfterMs: number;
}

export interface SyncSummary {
  runId: number;
  pages: number;
  entries: number;
  counts: DiffCounts;
  unknownFields: string[];
  durationMs: number;
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
export async function runSync(settings: SyncSettings, deps: SyncDependencies): Promise<SyncSummary> {
  const started = Date.now();
  const run = beginRun(deps.store, settings.upstreamUrl);
  const log = deps.logger.child({ runId: run.id });
  deps.onRunStarted?.(run.id);
  log.info({ upstream: settings.upstreamUrl }, 'sync started');
  const client = deps.client ?? buildUpstreamClient(settings, log, deps.signal);
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
        { unknownFields: first.unknownFields },
        'schema drift: upstream entries carry fields the contract does not name; kept as received',
      );
    }
    commitRun(deps.store, {
      runId: run.id,
      finishedAt: new Date().toISOString(),
      diff,
      state,
      pages: first.pages,
      pageSize: observedPageSize(deps.store, first),
      optionsBody: first.optionsBody,
      unknownFields: first.unknownFields,
    });
    const summary: SyncSummary = {
      runId: run.id,
      pages: first.pages,
      entries: first.entries.length,
      counts: diff.counts,
      unknownFields,
      durationMs: Date.now() - started,
    };
    const { runId: _runId, ...figures } = summary;
    log.info(figures, 'sync succeeded');
    return summary;
  } catch (thrown) {
    const error = deps.signal?.aborted ? abortError(deps.signal, thrown) : toMirrorError(thrown);
    const status = error.code === 'RUN_ABORTED' ? 'aborted' : 'failed';
    Object.assign(error.details, { runId: run.id });
    try {
      endRunWithoutData(deps.store, run.id, status, error);
    } catch (endError) {
      // The row stays `running`; the next start of any process (this one included) marks it
      // aborted, since no live holder claims it.
      log.error({ err: endError }, 'could not record the run as ended');
    }
    log.error({ err: error, code: error.code }, status === 'aborted' ? 'sync aborted' : 'sync failed');
    throw error;
  } finally {
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
    userAgent: USER_AGENT,
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
