import pg from 'pg';
import { expect, it, onTestFinished } from 'vitest';
import { openPgStore } from '../../../src/db/postgres/store.js';
import { silentLogger } from '../../../src/logger.js';
import { runSync } from '../../../src/sync/run-sync.js';
import { syncConfig } from '../../helpers/config.js';
import { describePostgres, pgTarget, usePostgres } from '../../helpers/postgres.js';
import { simulatedUpstream } from '../../helpers/sync.js';

type Query = (this: pg.Client, ...args: unknown[]) => unknown;

/**
 * Watches every query sent on a pg.Client (pooled or not) until the test ends: a query sent while
 * the same client still runs another is what pg 8 warns of ("Calling client.query() when the
 * client is already executing a query is deprecated", once per process) and pg 9 refuses. The
 * stacks of such calls, and the driver's own warnings.
 */
function watchOverlappingQueries(): { overlaps: string[]; warnings: string[] } {
  const query = Object.getOwnPropertyDescriptor(pg.Client.prototype, 'query')?.value as Query;
  const inFlight = new WeakMap<pg.Client, number>();
  const seen = { overlaps: [] as string[], warnings: [] as string[] };
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const result = query.apply(this, args);
    // Only the promise form is counted: the pool's own calls pass a callback and never overlap.
    if (!(result instanceof Promise)) return result;
    const running = inFlight.get(this) ?? 0;
    if (running > 0) seen.overlaps.push(new Error('overlapping query').stack ?? '');
    inFlight.set(this, running + 1);
    const settled = () => inFlight.set(this, (inFlight.get(this) ?? 1) - 1);
    result.then(settled, settled);
    return result;
    // The driver's query has a dozen overloads; this wrapper passes every call through unchanged.
  } as typeof pg.Client.prototype.query;
  const onWarning = (warning: Error) => {
    if (warning.message.includes('already executing a query')) seen.warnings.push(warning.stack ?? '');
  };
  process.on('warning', onWarning);
  onTestFinished(() => {
    pg.Client.prototype.query = query as typeof pg.Client.prototype.query;
    process.off('warning', onWarning);
  });
  return seen;
}

describePostgres("a run's stage on PostgreSQL is one connection", () => {
  const pg = usePostgres();

  it('regression: the confirming crawl reads its staged pages one query at a time (pg DeprecationWarning)', async () => {
    const store = await openPgStore(pgTarget(pg.server.url(await pg.server.createDatabase())), {});
    onTestFinished(() => store.close());
    // 40 pages fetched 8 at a time: pages of the confirming crawl arrive together.
    const upstream = await simulatedUpstream({ seed: 62, count: 200, pageSize: 5 });
    const [repeated] = upstream.data.entries() as { uuid: string }[];
    if (repeated === undefined) throw new Error('no entries');
    upstream.data.duplicate(repeated.uuid);
    const deps = { store, logger: silentLogger() };
    const env = { SYNC_CONCURRENCY: '8' };
    await runSync(syncConfig(upstream.url, env), deps);
    // A removal while a uuid is listed twice: the whole listing is crawled again and compared with
    // the staged one, page by page as the pages arrive.
    const removal = upstream.data.remove(3);
    if (removal.kind !== 'remove') throw new Error('not a removal');
    const gets = () => upstream.requests.filter((r) => r.method === 'GET').length;
    const before = gets();
    const seen = watchOverlappingQueries();
    const second = await runSync(syncConfig(upstream.url, env), deps);
    expect(second.counts.removed).toBe(removal.removed.length);
    // Each crawl reads every page, then page 1 once more.
    expect(gets() - before).toBe(2 * (second.pages + 1));
    expect(seen).toStrictEqual({ overlaps: [], warnings: [] });
  });
});
