import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { MirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig, type TestEnv } from '../helpers/config.js';
import { storedState } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

const entry = (i: number) => ({
  uuid: i.toString(16).padStart(32, '0'),
  name: `Person ${i}`,
  post: 'Engineer',
  emoji_file: null,
  emoji_file_webm: null,
  show_image: false,
  images: [],
});

/** A one-page upstream on loopback whose listing the test sets. */
async function onePageUpstream(): Promise<{ url: string; list: (n: number) => void }> {
  let results = [] as unknown[];
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ count: results.length, next: null, previous: null, results }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    list: (n) => {
      results = Array.from({ length: n }, (_, i) => entry(i));
    },
  };
}

/** A database synced once from a one-page upstream listing `n` entries, and its next syncs. */
async function mirrorOf(n: number) {
  const store = tempDatabase();
  const upstream = await onePageUpstream();
  const sync = (env: TestEnv = {}) =>
    runSync(syncConfig(upstream.url, env), { store, logger: silentLogger() });
  upstream.list(n);
  await sync();
  return { store, upstream, sync };
}

describe('a sudden large drop is held until the next run confirms it', () => {
  it('10 entries then 1: the first run fails in words and stores nothing; the next one records it', async () => {
    const { store, upstream, sync } = await mirrorOf(10);
    const before = storedState(store);
    upstream.list(1);
    const refused = await sync().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(MirrorError);
    expect((refused as MirrorError).code).toBe('LARGE_DROP_UNCONFIRMED');
    expect((refused as MirrorError).message).toBe(
      'the upstream lists 1 entry where the mirror holds 10: 9 (90%) would be recorded as removed, more than ' +
        'SYNC_CONFIRM_DROP (50%) of them. Nothing was stored and the mirror keeps serving what it holds; if the ' +
        'drop is real, the next run confirms it (or set SYNC_CONFIRM_DROP=0 to record such drops at once)',
    );
    expect(storedState(store)).toEqual(before);
    const failed = store.sqlite.prepare('select status, error_code from runs order by id desc limit 1').get();
    expect(failed).toEqual({ status: 'failed', error_code: 'LARGE_DROP_UNCONFIRMED' });
    const confirmed = await sync();
    expect(confirmed.counts).toMatchObject({ removed: 9, unchanged: 1 });
  });

  it('a drop below the share is recorded at once; SYNC_CONFIRM_DROP=0 turns the hold off', async () => {
    const { upstream, sync } = await mirrorOf(10);
    upstream.list(5);
    expect((await sync()).counts).toMatchObject({ removed: 5, unchanged: 5 });
    upstream.list(1);
    expect((await sync({ SYNC_CONFIRM_DROP: '0' })).counts).toMatchObject({ removed: 4, unchanged: 1 });
  });

  it('a drop of two is never held, whatever the share', async () => {
    const { upstream, sync } = await mirrorOf(3);
    upstream.list(1);
    expect((await sync()).counts).toMatchObject({ removed: 2, unchanged: 1 });
  });

  it('the share is a setting: 20% holds a drop of 3 in 10', async () => {
    const { upstream, sync } = await mirrorOf(10);
    upstream.list(7);
    await expect(sync({ SYNC_CONFIRM_DROP: '20%' })).rejects.toMatchObject({
      code: 'LARGE_DROP_UNCONFIRMED',
    });
    expect((await sync({ SYNC_CONFIRM_DROP: '20%' })).counts).toMatchObject({ removed: 3 });
  });
});
