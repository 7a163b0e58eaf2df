import { expect, it, onTestFinished } from 'vitest';
import type { PgStore } from '../../src/db/postgres/store.js';
import { runLockHolder } from '../../src/db/postgres/run-lock.js';
import { MirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { eventually } from '../helpers/process.js';
import {
  connectClient,
  describePostgres,
  openPgStoreAt,
  storeRows,
  usePostgres,
} from '../helpers/postgres.js';
import { simulatedUpstream } from '../helpers/sync.js';

// A sync's waits on PostgreSQL: a lock another session holds is waited for DATABASE_SYNC_LOCK_TIMEOUT,
// a server that does not answer DATABASE_SYNC_STATEMENT_TIMEOUT (and a moment); past either the
// run fails DATABASE_TIMEOUT with a sentence saying what to do, and frees the sync lock.

const LOCK_MS = 500;
const STATEMENT_MS = 1000;
/** Far past the bounds above: a sync still waiting then is a hang (before the bounds it waited forever). */
const HANG_MS = 60_000;

const MASKED = String.raw`postgres://postgres:\*\*\*@127\.0\.0\.1:\d+/mirror_[0-9a-f]+`;
const LOCK_SENTENCE = new RegExp(
  String.raw`^the sync waited more than 500 ms \(DATABASE_SYNC_LOCK_TIMEOUT\) for a lock another session holds on PostgreSQL at ${MASKED}: ` +
    String.raw`pg_locks and pg_stat_activity name the session holding it, pg_terminate_backend\(pid\) ends it; or raise DATABASE_SYNC_LOCK_TIMEOUT$`,
);
const NO_ANSWER_SENTENCE = new RegExp(
  String.raw`^PostgreSQL at ${MASKED} did not answer the sync within 2 s \(DATABASE_SYNC_STATEMENT_TIMEOUT\): ` +
    String.raw`check that the server runs and is neither stopped nor overloaded \(pg_isready -h 127\.0\.0\.1 -p \d+\)$`,
);

/** The run's failure, or a test failure naming the hang. */
async function failure(run: Promise<unknown>): Promise<MirrorError> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the sync still waited after ${HANG_MS} ms`)), HANG_MS);
  });
  try {
    await Promise.race([run, hung]);
  } catch (error) {
    if (error instanceof MirrorError) return error;
    throw error;
  } finally {
    clearTimeout(timer);
  }
  throw new Error('the sync succeeded');
}

describePostgres('every wait of a sync on PostgreSQL is bounded', () => {
  const pg = usePostgres();

  async function syncStore(): Promise<{ store: PgStore; url: string }> {
    const url = pg.server.url(await pg.server.createDatabase());
    const store = await openPgStoreAt(url, {
      purpose: 'sync',
      deadlines: { syncLockTimeoutMs: LOCK_MS, syncStatementTimeoutMs: STATEMENT_MS },
    });
    onTestFinished(() => store.close());
    return { store, url };
  }

  /** Holds ACCESS EXCLUSIVE on runs from another session until the returned release. */
  async function lockRuns(url: string): Promise<() => Promise<void>> {
    const session = await connectClient(url);
    await session.query('begin');
    await session.query('lock table runs in access exclusive mode');
    let held = true;
    const release = async () => {
      if (!held) return;
      held = false;
      await session.query('rollback');
      await session.end();
    };
    onTestFinished(release);
    return release;
  }

  /**
   * A run in the middle of its crawl: its row written, held at page 2 until the test lets the
   * upstream answer (`upstream.faults.clear('hang')`).
   */
  async function runHeldAtPageTwo(store: PgStore, seed: number) {
    const upstream = await simulatedUpstream({ seed, count: 12, pageSize: 5 });
    upstream.faults.set({ hang: { page: 2 } });
    const run = runSync(syncConfig(upstream.url, { UPSTREAM_TIMEOUT: '1s' }), {
      store,
      logger: silentLogger(),
    });
    await eventually(() => (upstream.requests.some((r) => r.url.includes('page=2')) ? true : undefined));
    return { upstream, run };
  }

  it('regression: a lock held on runs when the sync begins: DATABASE_TIMEOUT naming the setting, the sync lock freed, nothing recorded', async () => {
    const { store, url } = await syncStore();
    const upstream = await simulatedUpstream({ seed: 4, count: 12 });
    const release = await lockRuns(url);
    const error = await failure(runSync(syncConfig(upstream.url), { store, logger: silentLogger() }));
    expect(error.code).toBe('DATABASE_TIMEOUT');
    expect(error.message).toMatch(LOCK_SENTENCE);
    expect(error.details).toEqual({
      database: expect.stringMatching(new RegExp(`^${MASKED}$`)) as string,
      waited: 'lock',
      timeoutMs: LOCK_MS,
      setting: 'DATABASE_SYNC_LOCK_TIMEOUT',
    });
    // Freed while the table lock is still held: the next sync needs nobody's help.
    const admin = await connectClient(url);
    onTestFinished(() => admin.end());
    expect(await runLockHolder(admin)).toBeNull();

    await release();
    const summary = await runSync(syncConfig(upstream.url), { store, logger: silentLogger() });
    expect(summary.runId).toBe(1);
    expect(await storeRows(store, 'select id, status from runs order by id')).toEqual([
      { id: 1, status: 'succeeded' },
    ]);
  });

  it('regression: a lock taken on runs mid-run: the run fails DATABASE_TIMEOUT and frees the sync lock; the next run records it aborted', async () => {
    const { store, url } = await syncStore();
    const { upstream, run } = await runHeldAtPageTwo(store, 5);
    const release = await lockRuns(url);
    upstream.faults.clear('hang');
    const error = await failure(run);
    expect([error.code, error.details.waited, error.details.runId]).toEqual(['DATABASE_TIMEOUT', 'lock', 1]);
    expect(error.message).toMatch(LOCK_SENTENCE);
    const admin = await connectClient(url);
    onTestFinished(() => admin.end());
    expect(await runLockHolder(admin)).toBeNull();

    await release();
    expect((await runSync(syncConfig(upstream.url), { store, logger: silentLogger() })).runId).toBe(2);
    expect(await storeRows(store, 'select id, status, error_code from runs order by id')).toEqual([
      { id: 1, status: 'aborted', error_code: 'RUN_ABORTED' },
      { id: 2, status: 'succeeded', error_code: null },
    ]);
  });

  it('regression: the server stopped (SIGSTOP) mid-run: the run fails DATABASE_TIMEOUT saying the server does not answer; once it runs again, so do syncs', async () => {
    const { store, url } = await syncStore();
    const { upstream, run } = await runHeldAtPageTwo(store, 6);
    const thaw = pg.server.freeze();
    let error: MirrorError;
    try {
      upstream.faults.clear('hang');
      error = await failure(run);
    } finally {
      thaw();
    }
    expect([error.code, error.details.waited, error.details.runId]).toEqual([
      'DATABASE_TIMEOUT',
      'answer',
      1,
    ]);
    expect(error.message).toMatch(NO_ANSWER_SENTENCE);

    // The server ends the dropped sessions, and with them the sync lock, once it runs again.
    const admin = await connectClient(url);
    onTestFinished(() => admin.end());
    await eventually(async () => ((await runLockHolder(admin)) === null ? true : undefined));
    expect((await runSync(syncConfig(upstream.url), { store, logger: silentLogger() })).runId).toBe(2);
    expect(await storeRows(store, 'select id, status from runs order by id')).toEqual([
      { id: 1, status: 'aborted' },
      { id: 2, status: 'succeeded' },
    ]);
  });
});
