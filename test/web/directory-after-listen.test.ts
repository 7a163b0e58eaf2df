import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

/** The store, with its directory read held until `release()`: a directory that takes forever to build. */
function heldDirectory(store: Store): { store: Store; release: () => void; reads: () => number } {
  let release = (): void => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let reads = 0;
  const held = new Proxy(store, {
    get(target, key) {
      if (key === 'directoryWithRun') {
        return () => {
          reads += 1;
          return gate.then(() => target.directoryWithRun());
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: held, release, reads: () => reads };
}

// Regression (issue 21): the people pages' coworker directory was built before the server listened, so
// a 100,000-entry start answered nothing, /healthz included, for seconds.
describe('the coworker directory is built after the server listens', () => {
  it('/healthz and the list endpoint answer while the directory is still being read', async () => {
    const db = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 9, count: 15 });
    await sync(db, upstream);
    const held = heldDirectory(db);

    const mirror = await startMirror(held.store);
    const health = await fetch(`${mirror.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const list = await fetch(`${mirror.url}${LIST_PATH}`);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { count: number }).count).toBe(15);

    // The page that needs the directory waits for it, and shows it once read.
    const page = fetch(`${mirror.url}/coworkers/?status=all`);
    held.release();
    const answer = await page;
    expect(answer.status).toBe(200);
    const html = await answer.text();
    expect(html).toContain('15');
    // One read, shared by the warm-up and the page that waited for it.
    expect(held.reads()).toBe(1);
  });
});
