import { expect, it, onTestFinished } from 'vitest';
import type { PgStore } from '../../src/db/postgres/store.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { eventually } from '../helpers/process.js';
import { connectClient, describePostgres, openPgStoreAt, usePostgres } from '../helpers/postgres.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';

// The server's waits on PostgreSQL while another session holds a lock it needs, or while the
// server is stopped (SIGSTOP): /readyz and /metrics answer within DATABASE_PROBE_TIMEOUT, pages and
// the API within DATABASE_READ_TIMEOUT, and say so; the list keeps serving its snapshot.

const PROBE_MS = 1000;
const READ_MS = 1000;
/**
 * How long a request may take before the test calls it a hang: far past the deadlines above, so a
 * loaded machine makes the test slower, never red. Before the deadlines existed these never answered.
 */
const HANG_MS = 30_000;

const BROWSER = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

interface Answer {
  status: number;
  type: string | null;
  retryAfter: string | null;
  body: string;
}

async function get(url: string, accept = '*/*'): Promise<Answer> {
  const response = await fetch(url, { headers: { accept }, signal: AbortSignal.timeout(HANG_MS) });
  return {
    status: response.status,
    type: response.headers.get('content-type'),
    retryAfter: response.headers.get('retry-after'),
    body: await response.text(),
  };
}

/** The samples of /metrics the database gives, and whether the scrape succeeded. */
async function figures(base: string): Promise<{ status: number; lines: string[] }> {
  const answer = await get(`${base}/metrics`);
  const lines = answer.body
    .split('\n')
    .filter((l) =>
      /^coworker_mirror_(database_up|runs|last_success_timestamp_seconds|entries_served)\b/.test(l),
    );
  return { status: answer.status, lines };
}

/** What the database does to the test's mirror: hold a lock, or stop; returns the undo. */
type Trouble = (pg: ReturnType<typeof usePostgres>, url: string) => Promise<() => Promise<void>>;

const holdLock: Trouble = async (_pg, url) => {
  const session = await connectClient(url);
  await session.query('begin');
  await session.query('lock table runs in access exclusive mode');
  return async () => {
    await session.query('rollback');
    await session.end();
  };
};

const stopServer: Trouble = (pg) => {
  const thaw = pg.server.freeze();
  return Promise.resolve(() => Promise.resolve(thaw()));
};

// Each reason a health check gives, whole: the database's own (a lock wait, no answer on a
// connection, no connection) or, past the deadline, the server's.
const MASKED = String.raw`postgres://postgres:\*\*\*@127\.0\.0\.1:\d+/mirror_[0-9a-f]+`;
const PG_ISREADY = String.raw`check that the server runs and is neither stopped nor overloaded \(pg_isready -h 127\.0\.0\.1 -p \d+\)`;
const REASONS = {
  lock: new RegExp(
    String.raw`^a health check waited more than 400 ms \(DATABASE_PROBE_TIMEOUT\) for a lock another session holds on PostgreSQL at ${MASKED}: ` +
      String.raw`pg_locks and pg_stat_activity name the session holding it, pg_terminate_backend\(pid\) ends it$`,
  ),
  answer: new RegExp(
    String.raw`^PostgreSQL at ${MASKED} did not answer a health check within 900 ms \(DATABASE_PROBE_TIMEOUT\): ${PG_ISREADY}$`,
  ),
  connection: new RegExp(
    String.raw`^a health check got no connection to PostgreSQL at ${MASKED} within 900 ms: every one of the DATABASE_POOL_MAX ` +
      String.raw`connections is busy, or the server does not answer; ${PG_ISREADY}$`,
  ),
  deadline: new RegExp(
    '^database not answering: no answer within 1 s \\(DATABASE_PROBE_TIMEOUT\\): a lock held on its tables, or a server stopped or overloaded$',
  ),
};

describePostgres('every wait of the server on PostgreSQL is bounded', () => {
  const pg = usePostgres();

  async function syncedStore(): Promise<{ store: PgStore; url: string }> {
    const url = pg.server.url(await pg.server.createDatabase());
    const store = await openPgStoreAt(url, {
      deadlines: { probeTimeoutMs: PROBE_MS, readTimeoutMs: READ_MS },
    });
    onTestFinished(() => store.close());
    await sync(store, await simulatedUpstream({ seed: 7, count: 20 }));
    return { store, url };
  }

  it.each<[string, Trouble, (keyof typeof REASONS)[]]>([
    ['another session holds ACCESS EXCLUSIVE on runs', holdLock, ['lock', 'deadline']],
    ['the server is stopped (SIGSTOP)', stopServer, ['answer', 'connection', 'deadline']],
  ])(
    'regression: %s: /readyz 503 says why, /metrics 200 with database_up 0, pages an HTML 503, the API a JSON 503, the list serves',
    async (_name, trouble, reasons) => {
      const { store, url } = await syncedStore();
      const mirror = await startMirror(store, { probeTimeoutMs: PROBE_MS });
      // Started while the database answers, never scraped before it stops: a newcomer's first scrape.
      const newcomer = await startMirror(store, { probeTimeoutMs: PROBE_MS });
      const list = await get(`${mirror.url}${LIST_PATH}?page=2`);
      expect((await get(`${mirror.url}/readyz`)).status).toBe(200);
      const known = await figures(mirror.url);
      expect(known).toEqual({
        status: 200,
        lines: [
          'coworker_mirror_database_up 1',
          'coworker_mirror_runs{status="running"} 0',
          'coworker_mirror_runs{status="succeeded"} 1',
          'coworker_mirror_runs{status="failed"} 0',
          'coworker_mirror_runs{status="aborted"} 0',
          expect.stringMatching(/^coworker_mirror_last_success_timestamp_seconds \d+(\.\d+)?$/) as string,
          'coworker_mirror_entries_served 20',
        ],
      });

      const undo = await trouble(pg, url);
      try {
        const ready = await get(`${mirror.url}/readyz`);
        expect([ready.status, ready.type]).toEqual([503, 'application/json; charset=utf-8']);
        const { reason, ...rest } = JSON.parse(ready.body) as { status: string; reason: string };
        expect(rest).toEqual({ status: 'unready' });
        expect(
          reasons.filter((r) => REASONS[r].test(reason)),
          reason,
        ).toHaveLength(1);

        // The last known figures, the database marked down; a newcomer's scrape succeeds too.
        expect(await figures(mirror.url)).toEqual({
          status: 200,
          lines: ['coworker_mirror_database_up 0', ...known.lines.slice(1)],
        });
        expect(await figures(newcomer.url)).toEqual({
          status: 200,
          // No run figure was ever read: none is made up; the last success is the snapshot it serves.
          lines: ['coworker_mirror_database_up 0', ...known.lines.slice(5)],
        });

        for (const path of ['/', '/changes/', '/runs/', '/runs/1/', '/team/']) {
          const page = await get(`${mirror.url}${path}`, BROWSER);
          expect([path, page.status, page.type, page.retryAfter]).toEqual([
            path,
            503,
            'text/html; charset=utf-8',
            '5',
          ]);
          expect(page.body).toContain(
            '<title>The history is unavailable right now · coworker mirror</title>',
          );
          expect(page.body).toContain(
            `The list endpoint still serves the last snapshot: <a href="${LIST_PATH}">${LIST_PATH}</a>.`,
          );
        }
        for (const path of ['/api/mirror/runs/', '/api/mirror/changes/']) {
          // The API answers JSON whatever a browser accepts.
          const answer = await get(`${mirror.url}${path}`, BROWSER);
          expect([path, answer.status, answer.retryAfter, JSON.parse(answer.body)]).toEqual([
            path,
            503,
            '5',
            { detail: "The mirror's database is unavailable right now; try again shortly." },
          ]);
        }
        expect(await get(`${mirror.url}${LIST_PATH}?page=2`)).toEqual(list);
      } finally {
        await undo();
      }

      await eventually(async () => ((await get(`${mirror.url}/readyz`)).status === 200 ? true : undefined));
      expect(await figures(mirror.url)).toEqual(known);
      expect((await get(`${mirror.url}/runs/`, BROWSER)).status).toBe(200);
    },
  );
});
