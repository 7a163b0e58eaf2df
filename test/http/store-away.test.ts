import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { MirrorError } from '../../src/errors.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const LIST = '/api/model/team-block-coworker/list/';

/**
 * The real SQLite store, with a switch that makes every operation fail as a networked store's do
 * while its server restarts or fails over (the connection refused), until it is switched back.
 */
function switchableStore(store: Store): {
  store: Store;
  away(failure: string | Error): void;
  back(): void;
} {
  let failure: string | Error | null = null;
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || key === 'storageProblem') return value;
      return (...args: unknown[]): unknown =>
        failure === null
          ? (value as (...a: unknown[]) => unknown).apply(target, args)
          : Promise.reject(typeof failure === 'string' ? new MirrorError('DB_ERROR', failure) : failure);
    },
  });
  return { store: wrapped, away: (message) => (failure = message), back: () => (failure = null) };
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('when the database goes away', () => {
    it('the list keeps its snapshot, /readyz says why (password masked), metrics still scrape, and all is well once it is back', async () => {
      const sqlite = await fresh();
      await sync(sqlite, await simulatedUpstream({ seed: 3, count: 20 }));
      const db = switchableStore(sqlite);
      const mirror = await startMirror(db.store);
      const before = await fetch(`${mirror.url}${LIST}?page=2`).then(async (r) => [r.status, await r.text()]);
      const metric = async (name: string) => {
        const response = await fetch(`${mirror.url}/metrics`);
        const line = (await response.text()).split('\n').find((l) => l.startsWith(`${name} `));
        return [response.status, line];
      };
      const lastSuccess = await metric('coworker_mirror_last_success_timestamp_seconds');
      expect(await metric('coworker_mirror_database_up')).toEqual([200, 'coworker_mirror_database_up 1']);

      db.away('connection to postgres://mirror:s3cret@db.internal:5432/mirror refused (ECONNREFUSED)');
      const during = await fetch(`${mirror.url}${LIST}?page=2`).then(async (r) => [r.status, await r.text()]);
      const ready = await fetch(`${mirror.url}/readyz`);
      const readyBody = await ready.text();
      const health = await fetch(`${mirror.url}/healthz`);
      expect(during).toEqual(before);
      expect(ready.status).toBe(503);
      expect(JSON.parse(readyBody)).toEqual({
        status: 'unready',
        reason:
          'database unreachable: connection to postgres://mirror:***@db.internal:5432/mirror refused (ECONNREFUSED)',
      });
      expect(readyBody).not.toContain('s3cret');
      expect(health.status).toBe(200);
      // Metrics still scrape: the last known figures, and the database marked down.
      expect(await metric('coworker_mirror_database_up')).toEqual([200, 'coworker_mirror_database_up 0']);
      expect(await metric('coworker_mirror_last_success_timestamp_seconds')).toEqual(lastSuccess);
      // Time travel needs the database: "try again", not a server error.
      const past = await fetch(`${mirror.url}${LIST}?as_of=2999-01-01T00:00:00Z`);
      expect([past.status, await past.json()]).toEqual([
        503,
        { detail: 'The history is unavailable right now; try again shortly.' },
      ]);

      // Pages and the history API need the database too: "try again shortly", never a 500.
      for (const path of ['/changes/', '/runs/', '/api/mirror/changes/', '/api/mirror/runs/']) {
        const answer = await fetch(`${mirror.url}${path}`);
        expect([path, answer.status, answer.headers.get('retry-after')]).toEqual([path, 503, '5']);
        expect(await answer.json()).toEqual({
          detail: "The mirror's database is unavailable right now; try again shortly.",
        });
      }

      db.back();
      const after = await fetch(`${mirror.url}/readyz`);
      expect(after.status).toBe(200);
      expect(await metric('coworker_mirror_database_up')).toEqual([200, 'coworker_mirror_database_up 1']);
      const pastAgain = await fetch(`${mirror.url}${LIST}?page=2&as_of=2999-01-01T00:00:00Z`);
      // The very entries of the snapshot held (its links keep the as_of parameter).
      const results = (text: string) => (JSON.parse(text) as { results: unknown }).results;
      expect([pastAgain.status, results(await pastAgain.text())]).toEqual([
        before[0],
        results(String(before[1])),
      ]);
    });

    it('a browser asking for a page gets the HTML 503 page, an API client or a refusal of HTML the JSON one; a SQLite error thrown as it is too', async () => {
      const store = await fresh();
      await sync(store, await simulatedUpstream({ seed: 3, count: 5 }));
      const db = switchableStore(store);
      const mirror = await startMirror(db.store);
      const answer = async (path: string, accept: string) => {
        const res = await fetch(`${mirror.url}${path}`, { headers: { accept } });
        const body = await res.text();
        return {
          status: res.status,
          retryAfter: res.headers.get('retry-after'),
          kind: res.headers.get('content-type')?.startsWith('text/html')
            ? body.includes('<title>The history is unavailable right now · coworker mirror</title>')
              ? 'page'
              : 'other html'
            : (JSON.parse(body) as unknown),
        };
      };
      const PAGE = { status: 503, retryAfter: '5', kind: 'page' };
      const JSON_503 = {
        status: 503,
        retryAfter: '5',
        kind: { detail: "The mirror's database is unavailable right now; try again shortly." },
      };
      const cases: [path: string, accept: string, expected: typeof PAGE | typeof JSON_503][] = [
        ['/changes/', 'text/html', PAGE],
        ['/runs/', 'application/xhtml+xml', PAGE],
        ['/runs/', 'application/json;q=0.9, Text/HTML ; q=0.5', PAGE],
        ['/changes/', 'text/html;q=0, application/json', JSON_503],
        ['/changes/', 'application/json', JSON_503],
        ['/changes/', '*/*', JSON_503],
        ['/api/mirror/changes/', 'text/html', JSON_503],
      ];
      for (const failure of [
        'connection refused (ECONNREFUSED)',
        new Database.SqliteError('database is locked', 'SQLITE_BUSY'),
      ]) {
        db.away(failure);
        for (const [path, accept, expected] of cases) {
          expect({ path, accept, ...(await answer(path, accept)) }).toEqual({ path, accept, ...expected });
        }
      }
      db.back();
      expect((await answer('/changes/', 'text/html')).status).toBe(200);
    });
  });
});
