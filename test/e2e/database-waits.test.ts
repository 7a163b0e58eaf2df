import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { openDatabase } from '../../src/db/open.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, runCli, type RunningProcess } from '../helpers/process.js';
import { connectClient, describePostgres, usePostgres } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

// The deadlines as a person meets them: the built CLI and a served mirror, each a process of its own.

beforeAll(() => ensureBuilt(), 120_000);

/** The Done criterion: a health answer within 3 s while another session holds a lock. */
const ANSWER_MS = 3000;

/** Far past every bound of the test: a command still running then hangs (before the bounds, for ever). */
const HANG_MS = 60_000;

async function exitCode(command: RunningProcess): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`still running after ${HANG_MS} ms:\n${command.output()}`)),
      HANG_MS,
    );
  });
  try {
    return (await Promise.race([command.exited, hung])).code;
  } finally {
    clearTimeout(timer);
  }
}

async function answerWithin(url: string): Promise<[number, string]> {
  const response = await fetch(url, { signal: AbortSignal.timeout(ANSWER_MS) });
  return [response.status, await response.text()];
}

describe('serve on SQLite while another process holds the write lock', () => {
  it('regression: the server waits at most DATABASE_PROBE_TIMEOUT for it, so /readyz and /metrics keep answering', async () => {
    const file = join(tempDir(), 'mirror.db');
    const store = openDatabase(file);
    await sync(store, await simulatedUpstream({ seed: 8, count: 12 }));
    store.close();
    const serve = runCli(['serve', '--db', file, '--port', '0'], {
      SNAPSHOT_POLL: '100ms',
      DATABASE_PROBE_TIMEOUT: '300ms',
    });
    const url = (JSON.parse(await serve.waitFor(/"msg":"serving the mirror"/)) as { url: string }).url;

    // A run its holder left behind (another host, silent past the lease): every SNAPSHOT_POLL the
    // server takes the write lock to record it aborted, and waits for it, on its one thread. Then
    // the lock is held, in the same breath, by another connection that does not let go.
    const other = new Database(file);
    const old = new Date(Date.now() - 3_600_000).toISOString();
    other.exec(
      `insert into runs (status, started_at, upstream, holder_pid, holder_host, holder_token, heartbeat_at)
         values ('running', '${old}', 'http://upstream.invalid', 1, 'another-host', 'theirs', '${old}');
       begin immediate;`,
    );
    onTestFinished(() => {
      if (other.inTransaction) other.exec('rollback');
      other.close();
    });

    for (let probe = 0; probe < 3; probe++) {
      const [status, body] = await answerWithin(`${url}/readyz`);
      expect([status, (JSON.parse(body) as { status: string }).status]).toEqual([200, 'ready']);
      const [metricsStatus, metrics] = await answerWithin(`${url}/metrics`);
      expect([
        metricsStatus,
        metrics.split('\n').find((l) => l.startsWith('coworker_mirror_database_up ')),
      ]).toEqual([200, 'coworker_mirror_database_up 1']);
    }
    expect((await answerWithin(`${url}${LIST_PATH}`))[0]).toBe(200);
  });
});

describePostgres('the CLI on PostgreSQL while another session holds ACCESS EXCLUSIVE on runs', () => {
  const pg = usePostgres();

  it('regression: sync exits 9 naming DATABASE_SYNC_LOCK_TIMEOUT; runs exits 9 naming DATABASE_READ_TIMEOUT', async () => {
    const url = pg.server.url(await pg.server.createDatabase());
    const upstream = await simulatedUpstream({ seed: 9, count: 12 });
    const first = runCli(['sync', '--upstream', upstream.url], { DATABASE_URL: url });
    expect((await first.exited).code).toBe(0);
    const session = await connectClient(url);
    await session.query('begin');
    await session.query('lock table runs in access exclusive mode');
    onTestFinished(async () => {
      await session.query('rollback');
      await session.end();
    });

    const masked = String.raw`postgres://postgres:\*\*\*@127\.0\.0\.1:\d+/mirror_[0-9a-f]+`;
    const holder = String.raw`pg_locks and pg_stat_activity name the session holding it, pg_terminate_backend\(pid\) ends it`;
    const second = runCli(['sync', '--upstream', upstream.url], {
      DATABASE_URL: url,
      DATABASE_SYNC_LOCK_TIMEOUT: '500ms',
    });
    expect(await exitCode(second)).toBe(EXIT.databaseTimeout);
    expect(second.output()).toMatch(
      new RegExp(
        String.raw`^coworker-mirror: sync failed \[DATABASE_TIMEOUT\]: the sync waited more than 500 ms \(DATABASE_SYNC_LOCK_TIMEOUT\) ` +
          String.raw`for a lock another session holds on PostgreSQL at ${masked}: ${holder}; or raise DATABASE_SYNC_LOCK_TIMEOUT$`,
        'm',
      ),
    );

    const runs = runCli(['runs'], { DATABASE_URL: url, DATABASE_READ_TIMEOUT: '500ms' });
    expect(await exitCode(runs)).toBe(EXIT.databaseTimeout);
    expect(runs.output()).toMatch(
      new RegExp(
        String.raw`^coworker-mirror: a statement of a read ran past 500 ms \(DATABASE_READ_TIMEOUT\) on PostgreSQL at ${masked}, ` +
          String.raw`which cancelled it: another session may hold a lock it needs \(${holder}\), or the server is overloaded; or raise DATABASE_READ_TIMEOUT$`,
        'm',
      ),
    );
  });
});
