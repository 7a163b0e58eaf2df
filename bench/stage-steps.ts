/**
 * Where a first sync's time goes once the crawl is over: `--entries` coworkers of the simulated
 * upstream's listing (seed 11, default 1,000,000), staged in batches of 1,000 as the crawl stages
 * them, then each of the run stage's operations timed as the sync calls them (`timeStages`, as
 * bench/lib/sync-phase.ts times a whole sync): holdCurrent, the diff (recordFirstListing), the
 * repeated uuids, the exact copies, the commit with its WAL checkpoint, each with its share of
 * their sum. `--statements` also times every statement the connection runs, the slowest
 * printed: a wrapper around each call, which adds its own cost to the many one-row inserts, so read
 * it for the set-based statements. No network: bench/cli-sync-memory.ts measures the whole sync
 * against a crawl.
 *
 *   npx tsx bench/stage-steps.ts [--entries 1000000] [--statements]
 */
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../src/db/open.js';
import type { StagedEntry } from '../src/db/run-commit.js';
import { generateCoworkers } from '../src/simulated-upstream/generate.js';
import { bodyHash } from '../src/sync/body-hash.js';
import { diffStaged } from '../src/sync/stream-diff.js';
import { machineLine, seconds } from './lib/report.js';
import { timeStages } from './lib/stage-timing.js';
import { withTempDir } from './lib/temp-dir.js';

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000000' },
    statements: { type: 'boolean', default: false },
  },
});
const entries = Number(values.entries);
if (!Number.isInteger(entries) || entries < 1)
  throw new Error(`--entries must be a positive integer, got ${values.entries}`);

const PAGE_SIZE = 8;
const BATCH = 1_000;

/** Each statement's time by its first words, from a wrapper around `prepare` and `exec`. */
function timeStatements(sqlite: ReturnType<typeof openDatabase>['sqlite'], spent: Map<string, number>): void {
  const add = (key: string, since: number): void => {
    spent.set(key, (spent.get(key) ?? 0) + performance.now() - since);
  };
  const keyOf = (sql: string): string => sql.replace(/\s+/g, ' ').trim().slice(0, 100);
  const prepare = sqlite.prepare.bind(sqlite);
  sqlite.prepare = ((sql: string) => {
    const statement = prepare(sql);
    for (const method of ['run', 'get', 'all'] as const) {
      const call: (...args: unknown[]) => unknown = statement[method].bind(statement);
      (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]): unknown => {
        const since = performance.now();
        try {
          return call(...args);
        } finally {
          add(keyOf(sql), since);
        }
      };
    }
    return statement;
  }) as unknown as typeof sqlite.prepare;
  const exec = sqlite.exec.bind(sqlite);
  sqlite.exec = (sql: string) => {
    const since = performance.now();
    try {
      return exec(sql);
    } finally {
      add(`exec: ${keyOf(sql)}`, since);
    }
  };
}

/** The operations the sync calls before the crawl is over, and `timeStages`' own mark. */
const CRAWL_SIDE = new Set(['append', 'crawled', 'close']);

console.log(machineLine());
await withTempDir(async (dir) => {
  const rows = generateCoworkers(11, entries);
  const store = openDatabase(join(dir, 'stage-steps.db'));
  const statements = new Map<string, number>();
  if (values.statements) timeStatements(store.sqlite, statements);
  const spent: Record<string, number> = {};
  try {
    const run = await store.beginRun('http://upstream.invalid');
    const stage = await timeStages(store, spent).openStage(run.id);
    let batch: StagedEntry[] = [];
    for (const [position, row] of rows.entries()) {
      const body = JSON.stringify(row);
      const page = Math.floor(position / PAGE_SIZE) + 1;
      batch.push({ position, page, index: position % PAGE_SIZE, uuid: row.uuid, body, hash: bodyHash(body) });
      if (batch.length === BATCH || position === rows.length - 1) {
        await stage.append(batch);
        batch = [];
      }
    }
    console.log(
      `stage-steps staging ${entries} entries (append only, the crawl's share): ${seconds(spent.append ?? 0)}`,
    );
    statements.clear();
    await stage.holdCurrent(bodyHash);
    const counts = await diffStaged(stage, store);
    await stage.repeatedUuids(20);
    await stage.exactCopies();
    const finishedAt = new Date().toISOString();
    const pages = Math.ceil(entries / PAGE_SIZE);
    const commit = { runId: run.id, finishedAt, counts, pages, pageSize: PAGE_SIZE, optionsBody: null };
    await stage.commit({ ...commit, unknownFields: [], media: null, outbox: null });
    await stage.close();
    const steps = Object.entries(spent).filter(([name]) => !CRAWL_SIDE.has(name));
    const total = steps.reduce((sum, [, ms]) => sum + ms, 0);
    for (const [name, ms] of steps) {
      console.log(
        `stage-steps ${name}: ${seconds(ms)}, ${((100 * ms) / total).toFixed(0)} % of ${seconds(total)}`,
      );
    }
    const slowest = [...statements].sort((a, b) => b[1] - a[1]).slice(0, 25);
    for (const [sql, ms] of slowest) console.log(`  ${seconds(ms).padStart(8)}  ${sql}`);
  } finally {
    store.close();
  }
});
