import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { MirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig, type TestEnv } from '../helpers/config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';
import { listedBodies } from '../helpers/store-runs.js';
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

/**
 * A database synced once (an hour before `T0`) from a one-page upstream listing `n` entries, and its
 * next syncs, each started by the clock at `at` when given.
 */
async function mirrorOf<S extends Store>(n: number, store: S) {
  const upstream = await onePageUpstream();
  const sync = (env: TestEnv = {}, at?: Date) =>
    runSync(syncConfig(upstream.url, env), {
      store,
      logger: silentLogger(),
      ...(at ? { now: () => at } : {}),
    });
  upstream.list(n);
  await sync({}, new Date(T0 - 3_600_000));
  return { store, upstream, sync };
}

/** When the drops of the time-based tests are first seen; each run's clock is set from it. */
const T0 = Date.parse('2026-03-02T14:22:10.000Z');
const at = (ms: number): Date => new Date(T0 + ms);
const MIN = 60_000;

describe('a sudden large drop is held until the next run confirms it (SYNC_CONFIRM_DROP_AFTER=0s)', () => {
  const NEXT_RUN = { SYNC_CONFIRM_DROP_AFTER: '0s' };
  it('10 entries then 1: the first run fails in words and stores nothing; the next one records it', async () => {
    const { store, upstream, sync } = await mirrorOf(10, tempDatabase());
    const before = storedState(store);
    upstream.list(1);
    const refused = await sync(NEXT_RUN).catch((e: unknown) => e);
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
    const confirmed = await sync(NEXT_RUN);
    expect(confirmed.counts).toMatchObject({ removed: 9, unchanged: 1 });
  });

  it('a drop below the share is recorded at once; SYNC_CONFIRM_DROP=0 turns the hold off', async () => {
    const { upstream, sync } = await mirrorOf(10, tempDatabase());
    upstream.list(5);
    expect((await sync()).counts).toMatchObject({ removed: 5, unchanged: 5 });
    upstream.list(1);
    expect((await sync({ SYNC_CONFIRM_DROP: '0' })).counts).toMatchObject({ removed: 4, unchanged: 1 });
  });

  it('a drop of two is never held, whatever the share', async () => {
    const { upstream, sync } = await mirrorOf(3, tempDatabase());
    upstream.list(1);
    expect((await sync()).counts).toMatchObject({ removed: 2, unchanged: 1 });
  });

  it('the share is a setting: 20% holds a drop of 3 in 10', async () => {
    const { upstream, sync } = await mirrorOf(10, tempDatabase());
    upstream.list(7);
    const env = { ...NEXT_RUN, SYNC_CONFIRM_DROP: '20%' };
    await expect(sync(env)).rejects.toMatchObject({ code: 'LARGE_DROP_UNCONFIRMED' });
    expect((await sync(env)).counts).toMatchObject({ removed: 3 });
  });
});

/** The refusal of a run: its code and message. */
const refusal = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => ({ refused: false }),
    (e: unknown) => (e instanceof MirrorError ? { code: e.code, message: e.message } : e),
  );

const dropOf10 = (listed: number, when: string): string =>
  `the upstream lists ${listed} ${listed === 1 ? 'entry' : 'entries'} where the mirror holds 10: ${10 - listed} ` +
  `(${(10 - listed) * 10}%) would be recorded as removed, more than SYNC_CONFIRM_DROP (50%) of them. Nothing was ` +
  `stored and the mirror keeps serving what it holds; if the drop is real, ${when} ` +
  '(or set SYNC_CONFIRM_DROP=0 to record such drops at once)';

const acceptedFrom = (time: string): string =>
  `it would be accepted from 2026-03-02 ${time} UTC if the upstream still lists the same ` +
  '(SYNC_CONFIRM_DROP_AFTER=10m after the first run that saw it)';

/** Every run but the first sync: its status, code and the listing size it saw. */
async function laterRuns(store: Store): Promise<Record<string, unknown>[]> {
  const rows = await storeRows(
    store,
    'select status, error_code, entries from runs where id > 1 order by id',
  );
  return rows.map((r) => ({ status: r.status, code: r.error_code, entries: Number(r.entries) }));
}

describe.each(STORE_KINDS)(
  'a large drop is recorded once it has held for SYNC_CONFIRM_DROP_AFTER (%s)',
  (kind) => {
    const fresh = storeMaker(kind);

    it('10 then 1 under the default 10m: runs seconds and minutes later are refused naming when; the first past the span records it', async () => {
      const { store, upstream, sync } = await mirrorOf(10, await fresh());
      const before = await listedBodies(store);
      upstream.list(1);
      const held = { code: 'LARGE_DROP_UNCONFIRMED', message: dropOf10(1, acceptedFrom('14:32:10')) };
      expect(await refusal(sync({}, at(0)))).toEqual(held);
      expect(await refusal(sync({}, at(2000)))).toEqual(held);
      expect(await refusal(sync({}, at(10 * MIN - 1)))).toEqual(held);
      expect(await listedBodies(store)).toEqual(before);
      const confirmed = await sync({}, at(10 * MIN));
      expect(confirmed.counts).toMatchObject({ removed: 9, unchanged: 1 });
      expect(await laterRuns(store)).toEqual([
        { status: 'failed', code: 'LARGE_DROP_UNCONFIRMED', entries: 1 },
        { status: 'failed', code: 'LARGE_DROP_UNCONFIRMED', entries: 1 },
        { status: 'failed', code: 'LARGE_DROP_UNCONFIRMED', entries: 1 },
        { status: 'succeeded', code: null, entries: 1 },
      ]);
    });

    it('the status page shows the refusal while it lasts, with when the drop would be accepted', async () => {
      const { store, upstream, sync } = await mirrorOf(10, await fresh());
      upstream.list(1);
      await refusal(sync({}, at(2 * MIN)));
      const mirror = await startMirror(store);
      const page = await fetch(`${mirror.url}/`);
      const text = (await page.text()).replace(/<[^>]+>/g, '').replace(/\s+/g, ' ');
      expect(text).toContain(
        `The last run failed (LARGE_DROP_UNCONFIRMED): ${dropOf10(1, acceptedFrom('14:34:10'))}. ` +
          'The upstream suddenly listed far fewer people. The mirror keeps serving what it holds; if the drop is ' +
          'real, a run confirms it once it has held for SYNC_CONFIRM_DROP_AFTER (the message says from when), ' +
          'otherwise check the site. The previous snapshot is still served.',
      );
    });

    it('a drop of another size in between restarts the clock', async () => {
      const { upstream, sync } = await mirrorOf(10, await fresh());
      upstream.list(1);
      await refusal(sync({}, at(0)));
      upstream.list(2);
      const restarted = { code: 'LARGE_DROP_UNCONFIRMED', message: dropOf10(2, acceptedFrom('14:37:10')) };
      expect(await refusal(sync({}, at(5 * MIN)))).toEqual(restarted);
      expect(await refusal(sync({}, at(10 * MIN)))).toEqual(restarted);
      expect((await sync({}, at(15 * MIN))).counts).toMatchObject({ removed: 8, unchanged: 2 });
    });

    it('any other outcome in between restarts the clock too', async () => {
      const { upstream, sync } = await mirrorOf(10, await fresh());
      upstream.list(1);
      await refusal(sync({}, at(0)));
      // Another share lets a run of the same listing through: the drop is recorded, then held anew.
      upstream.list(6);
      expect((await sync({}, at(MIN))).counts).toMatchObject({ removed: 4 });
      upstream.list(1);
      const anew = `the upstream lists 1 entry where the mirror holds 6: 5 (83%) would be recorded as removed`;
      const refused = (await refusal(sync({}, at(10 * MIN)))) as { message: string };
      expect(refused.message).toContain(anew);
      expect(refused.message).toContain(acceptedFrom('14:42:10'));
    });

    it('an empty listing likewise: refused until it has held for the span, then recorded', async () => {
      const { store, upstream, sync } = await mirrorOf(10, await fresh());
      upstream.list(0);
      const held = {
        code: 'EMPTY_LISTING_UNCONFIRMED',
        message:
          'the upstream answered an empty listing while the mirror holds 10 entries; refusing to record everyone ' +
          `as removed. If the team list really is empty, ${acceptedFrom('14:32:10')} (or run sync with --allow-empty)`,
      };
      expect(await refusal(sync({}, at(0)))).toEqual(held);
      expect(await refusal(sync({}, at(9 * MIN)))).toEqual(held);
      const emptied = await sync({}, at(10 * MIN));
      expect(emptied).toMatchObject({ entries: 0, counts: { removed: 10 } });
      expect(await laterRuns(store)).toEqual([
        { status: 'failed', code: 'EMPTY_LISTING_UNCONFIRMED', entries: 0 },
        { status: 'failed', code: 'EMPTY_LISTING_UNCONFIRMED', entries: 0 },
        { status: 'succeeded', code: null, entries: 0 },
      ]);
    });

    it('0s: the next run that sees the same drop records it at once, and one of another size does not', async () => {
      const { upstream, sync } = await mirrorOf(10, await fresh());
      const env = { SYNC_CONFIRM_DROP_AFTER: '0s' };
      upstream.list(1);
      expect(await refusal(sync(env, at(0)))).toEqual({
        code: 'LARGE_DROP_UNCONFIRMED',
        message: dropOf10(1, 'the next run confirms it'),
      });
      upstream.list(2);
      expect(await refusal(sync(env, at(0)))).toEqual({
        code: 'LARGE_DROP_UNCONFIRMED',
        message: dropOf10(2, 'the next run confirms it'),
      });
      expect((await sync(env, at(0))).counts).toMatchObject({ removed: 8, unchanged: 2 });
    });

    it('SYNC_CONFIRM_DROP=0 still records a drop at once, whatever the span', async () => {
      const { upstream, sync } = await mirrorOf(10, await fresh());
      upstream.list(1);
      expect((await sync({ SYNC_CONFIRM_DROP: '0' }, at(0))).counts).toMatchObject({ removed: 9 });
    });
  },
);
