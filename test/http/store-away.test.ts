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
function switchableStore(store: Store): { store: Store; away(message: string): void; back(): void } {
  let failure: string | null = null;
  const wrapped = new Proxy(store, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver) as unknown;
      if (typeof value !== 'function' || key === 'storageProblem') return value;
      return (...args: unknown[]): unknown =>
        failure === null
          ? (value as (...a: unknown[]) => unknown).apply(target, args)
          : Promise.reject(new MirrorError('DB_ERROR', failure));
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
  });
});
