import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { openPgStore, type PgStore } from '../../src/db/postgres/store.js';
import type { DigestPlan } from '../../src/db/run-commit.js';
import type { RunRow } from '../../src/db/schema.js';
import type { Store } from '../../src/db/store.js';
import { MirrorError, toMirrorError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { PortNotificationOutbox } from '../../src/db/notify-outbox.js';
import { outboxPortOf } from '../../src/db/sqlite/sql-port.js';
import { outboxOver, type NotificationOutbox, type OutboxNotification } from '../../src/notify/outbox.js';
import { rows } from '../../src/db/postgres/sql.js';
import {
  startSimulatedMediaHost,
  startSimulatedUpstream,
  type SimulatedMediaHost,
  type SimulatedUpstream,
} from '../../src/simulated-upstream/index.js';
import { bodyHash } from '../../src/sync/body-hash.js';
import { runSync, type SyncSummary } from '../../src/sync/run-sync.js';
import { syncConfig, type TestEnv } from '../helpers/config.js';
import {
  DATA_TABLES,
  describePostgres,
  pgTarget,
  STORE_KINDS,
  storeOpener,
  usePostgres,
  wholeTableSql,
} from '../helpers/postgres.js';
import { cleanupScope } from '../helpers/scope.js';
import { tempDir } from '../helpers/temp-db.js';
import { listedMediaUrls } from '../media/harness.js';

// The store contract: the SQLite store and the PostgreSQL store, driven through the same real syncs
// at the same (frozen) instants, answer every operation alike — same rows, same order, same texts.

const HOOKS = 'http://127.0.0.1:9/a,http://127.0.0.1:9/b';
const HOOK_URLS = HOOKS.split(',');
/** What a store keeps and claims its endpoints by: their keys, never the URLs (credentials). */
const hookKeys = (store: Store) => HOOK_URLS.map((url) => store.endpointKeys.webhook(url));
const BASE = 'https://mirror.example.com';
const NOTIFY = 'slack+http://127.0.0.1:9/services/T0/B0/secret,ntfy+http://127.0.0.1:9/team-topic';
const T0 = Date.parse('2026-03-02T09:00:00.000Z');

/** What two stores may differ in by design: random webhook ids and the holder's token. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value instanceof Map) return new Map([...value].map(([k, v]) => [k, comparable(v)]));
  if (value === null || typeof value !== 'object' || ArrayBuffer.isView(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === 'webhookId' || k === 'holderToken' ? (v === null ? null : '<random>') : comparable(v),
    ]),
  );
}

interface Pair {
  sqlite: Store;
  pg: PgStore;
}

/** Asks both stores the same question; expects the same answer; returns it. */
async function same<T>(pair: Pair, ask: (store: Store) => Promise<T>, sorted = false): Promise<T> {
  const [a, b] = [await ask(pair.sqlite), await ask(pair.pg)];
  const order = (v: unknown) => (sorted && Array.isArray(v) ? [...(v as unknown[])].sort(byJson) : v);
  expect(comparable(order(b))).toStrictEqual(comparable(order(a)));
  return a;
}

/** Rows as both stores may differ in by design: random ids and tokens, a boolean stored as 0/1. */
function tableComparable(list: unknown[]): unknown[] {
  return list.map((row) =>
    Object.fromEntries(
      Object.entries(row as Record<string, unknown>).map(([k, v]) => [
        k,
        k === 'webhook_id' || k === 'holder_token' || k === 'lease_token'
          ? v !== null
          : typeof v === 'boolean'
            ? Number(v)
            : v,
      ]),
    ),
  );
}

const byJson = (x: unknown, y: unknown): number => {
  const [a, b] = [JSON.stringify(x), JSON.stringify(y)];
  return a < b ? -1 : a > b ? 1 : 0;
};

/**
 * A run whose stage commit fails after it wrote part of the listing: the composer of its outbox
 * throws, or the outcome recorded in its stage names a stored uuid as new (a primary-key violation
 * after the first new coworker is written). What the commit threw; the run is ended failed.
 */
async function poisonedCommit(store: Store, poison: 'outbox' | 'duplicate'): Promise<unknown> {
  const run = await store.beginRun('http://poison.example/');
  const latest = await store.latestSucceededRun();
  const listed = latest ? [...(await store.listedVersionIds(latest.id))] : [];
  const [stored] = await store.listCoworkers({ limit: 1, offset: 0, includeRemoved: true });
  const uuid = 'c'.repeat(32);
  const body = '{"uuid":"x","name":"Poison"}';
  const stage = await store.openStage(run.id);
  try {
    await stage.append([{ position: 0, page: 1, index: 0, uuid, body, hash: bodyHash(body) }]);
    await stage.holdCurrent(bodyHash);
    // What a diff of this listing records, every held version closed, but poisoned as asked.
    await stage.record({
      places: [[0, null, uuid, 0]],
      closed: listed,
      events: [
        {
          order: [0, 0, 0],
          uuid,
          slot: 0,
          kind: 'added',
          field: null,
          oldValue: null,
          newValue: null,
          refPosition: 0,
          refVersion: null,
        },
      ],
      coworkers:
        poison === 'duplicate'
          ? [
              [uuid, 'new', 0],
              [stored?.uuid ?? '', 'new', 1],
            ]
          : [[uuid, 'new', 0]],
    });
    return await stage
      .commit({
        runId: run.id,
        finishedAt: new Date().toISOString(),
        counts: { added: 1, changed: 0, removed: listed.length, returned: 0, unchanged: 0 },
        pages: 1,
        pageSize: 7,
        optionsBody: '{"poison":true}',
        unknownFields: [],
        media: null,
        outbox: {
          urls: hookKeys(store),
          messages: () => {
            if (poison === 'outbox') throw new Error('composer failed after the listing was written');
            return [];
          },
        },
      })
      .then(
        () => new Error('the poisoned commit was stored'),
        (e: unknown) => e,
      );
  } finally {
    await stage.close();
    await store.endRun({ runId: run.id, status: 'failed', error: { code: 'TEST', message: 'poisoned' } });
    await store.releaseRun(run.id);
  }
}

describePostgres('the store contract: SQLite and PostgreSQL answer alike', () => {
  const pgFixture = usePostgres();
  /** The notification targets of NOTIFY, as the outbox names them (set by the notification test). */
  let targetIds: string[] = [];
  /** The endpoints' keys: the same in both stores, which share one key to compare their rows. */
  let HOOK_KEYS: string[] = [];
  let pair: Pair;
  let upstream: SimulatedUpstream;
  let host: SimulatedMediaHost;
  const dirs = { sqlite: '', pg: '' };
  let step = 0;
  const scope = cleanupScope();

  beforeAll(async () => {
    host = await startSimulatedMediaHost();
    upstream = await startSimulatedUpstream({
      seed: 11,
      count: 24,
      pageSize: 7,
      mediaBaseUrl: host.mediaBaseUrl,
    });
    dirs.sqlite = tempDir(scope.defer);
    dirs.pg = tempDir(scope.defer);
    const sqlite = openDatabase(join(dirs.sqlite, 'mirror.db'));
    // Each store keys its endpoint ids under a random key of its own: PostgreSQL is given SQLite's,
    // so the two hold the same ids and every row compares.
    await (await openPgStore(pgTarget(pgFixture.url), {})).close();
    const key = sqlite.sqlite
      .prepare("select value from store_identity where name = 'endpoint_id_key'")
      .pluck()
      .get();
    await pgFixture.server
      .admin(pgFixture.database)
      .query("update store_identity set value = $1 where name = 'endpoint_id_key'", [key]);
    pair = { sqlite, pg: await openPgStore(pgTarget(pgFixture.url), { poolMax: 4 }) };
    HOOK_KEYS = hookKeys(pair.sqlite);
    expect(hookKeys(pair.pg)).toStrictEqual(HOOK_KEYS);
    vi.useFakeTimers({ toFake: ['Date'] });
  }, 60_000);

  afterAll(async () => {
    vi.useRealTimers();
    (pair.sqlite as ReturnType<typeof openDatabase>).close();
    await pair.pg.close();
    await upstream.close();
    await host.close();
    await scope.close();
  });

  /** One sync of each store at the same frozen instant; both summaries, less their durations. */
  async function syncBoth(env: TestEnv = {}, url = upstream.url): Promise<(SyncSummary | MirrorError)[]> {
    vi.setSystemTime(T0 + ++step * 60_000);
    const out: (SyncSummary | MirrorError)[] = [];
    for (const kind of ['sqlite', 'pg'] as const) {
      const config = syncConfig(url, {
        WEBHOOK_URLS: HOOKS,
        NOTIFY_URLS: NOTIFY,
        MEDIA_ORIGINS: host.url,
        MEDIA_DIR: join(dirs[kind], 'media'),
        MEDIA_TIMEOUT: '5s',
        // Messages then carry thumbnails: the mirror's path of each picture, as of the run.
        PUBLIC_BASE_URL: BASE,
        ...env,
      });
      const result = await runSync(config, { store: pair[kind], logger: silentLogger() }).catch(
        (error: unknown) => error as MirrorError,
      );
      out.push(result instanceof Error ? result : { ...result, durationMs: 0 });
    }
    if (out[0] instanceof Error) expect((out[1] as MirrorError).code).toBe(out[0].code);
    else expect(out[1]).toStrictEqual(out[0]);
    return out;
  }

  /** Every read operation of the store, asked of both. */
  async function everyReadAlike(): Promise<void> {
    const runs = await same(pair, (s) => s.listRuns({ limit: 100 }));
    await same(pair, (s) => s.listRuns({ limit: 2, offset: 1 }));
    await same(pair, (s) => s.countRuns());
    await same(pair, (s) => s.runCounts());
    await same(pair, (s) => s.latestSucceededRun());
    await same(pair, (s) => s.latestSucceededRunId());
    await same(pair, (s) => s.succeededRunTimes(10));
    await same(pair, (s) => s.runFinishTimes(runs.map((r) => r.id).concat([999])));
    await same(pair, (s) => s.latestRunStart());
    for (const run of runs) {
      await same(pair, (s) => s.getRun(run.id));
      await same(pair, (s) => s.previousRun(run.id));
      await same(pair, (s) => s.latestSucceededRun(run.finishedAt ?? run.startedAt));
      await same(pair, (s) => s.mediaFailuresOf(run.id, 2));
      if (run.errorCode !== null) {
        await same(pair, (s) => s.refusalStreakStart(run.id + 1, run.errorCode ?? '', run.entries ?? 0));
      }
      if (run.status !== 'succeeded') continue;
      await same(pair, (s) => s.listingAt(run));
      const ids = await same(pair, (s) => s.listedVersionIds(run.id));
      await same(pair, (s) => s.versionBodies([...ids, 0, ids[0] ?? 0]));
      await same(pair, (s) => s.listingPage(run.id, 5, 10));
      await same(pair, (s) => s.mediaShasAt(run.id), true);
      if (run.optionsBodyId !== null) await same(pair, (s) => s.optionsBody(run.optionsBodyId ?? 0));
    }
    await historyAlike();
    await mediaAlike(runs);
    await deliveriesReadAlike();
    await same(pair, (s) => s.databaseProblem());
    await same(pair, (s) => s.pruneHorizon());
  }

  async function historyAlike(): Promise<void> {
    const hash = (body: string) => bodyHash(body);
    const coworkers = await same(pair, (s) =>
      s.listCoworkers({ limit: 1000, offset: 0, includeRemoved: true }),
    );
    const uuids = coworkers.map((c) => c.uuid);
    await same(pair, (s) => s.removedAppearances(uuids, hash));
    const all = await same(pair, (s) => s.listChanges({ limit: 1000 }));
    const at = all[Math.floor(all.length / 2)]?.at ?? new Date(T0).toISOString();
    await same(pair, (s) => s.listChanges({ limit: 5, since: at }));
    await same(pair, (s) => s.listChanges({ limit: 5, until: at }));
    await same(pair, (s) => s.listChanges({ limit: 50, kind: 'changed' }));
    await same(pair, (s) => s.listChanges({ limit: 50, field: 'post' }));
    await same(pair, (s) => s.listChanges({ limit: 50, uuids: uuids.slice(0, 3) }));
    await same(pair, (s) => s.listChanges({ limit: 50, uuids: [] }));
    await same(pair, (s) => s.listChanges({ limit: 3, beforeId: all[4]?.id ?? 1 }));
    await same(pair, (s) => s.changedFields());
    await same(pair, (s) => s.changeSubjects(all));
    // The CSV export's read: each batch with its rows' subjects, as listChanges and changeSubjects give them.
    const exported = await same(pair, async (s) => {
      const batches = [];
      for await (const batch of s.changesWithSubjects({ limit: all.length - 1 }, 7)) batches.push(batch);
      return batches;
    });
    expect(exported.flatMap((b) => b.rows)).toEqual(all.slice(0, -1));
    for (const { rows, subjects } of exported)
      expect(subjects).toEqual(await pair.sqlite.changeSubjects(rows));
    await same(pair, async (s) => {
      const batches = [];
      for await (const batch of s.changesWithSubjects({ kind: 'changed', beforeId: all[3]?.id }, 5))
        batches.push(batch);
      return batches;
    });
    for (const uuid of uuids) {
      await same(pair, (s) => s.coworkerHistory(uuid));
      await same(pair, (s) => s.currentVersions(uuid));
      await same(pair, (s) => s.getCoworker(uuid));
    }
    await same(pair, (s) => s.getCoworker('f'.repeat(32)));
    for (const includeRemoved of [true, false]) {
      await same(pair, (s) => s.listCoworkers({ limit: 100, offset: 0, includeRemoved }));
      await same(pair, (s) => s.listCoworkers({ limit: 5, offset: 3, includeRemoved }));
      await same(pair, (s) => s.countCoworkers(includeRemoved));
    }
    await same(pair, (s) => s.namesOf([...uuids].reverse().concat(['nobody'])));
    for (const text of ['a', 'E', 'zz', '%', '']) await same(pair, (s) => s.findByName(text, 7));
    // Alike is not enough (both once lost whether a match was removed): each match says what the coworker row says.
    const removedOf = new Map(coworkers.map((c) => [c.uuid, c.removedAt !== null]));
    for (const match of await same(pair, (s) => s.findByName('', 1000))) {
      expect(match.removed, match.uuid).toBe(removedOf.get(match.uuid));
    }
    await same(pair, (s) => s.coworkerDirectory(), true);
    await same(pair, async (s) => {
      const { runId, entries } = await s.directoryWithRun();
      return { runId, entries: [...entries].sort(byJson) };
    });
    // The export's reads: keyset batches, where a batch of n rows ends, and the JSON lines.
    for (const filter of [
      {},
      { kind: 'changed' as const },
      { uuids: uuids.slice(0, 2) },
      { field: 'post' },
    ]) {
      await same(pair, async (s) => {
        const batches = [];
        for await (const batch of s.changesInBatches(filter, 4)) batches.push(batch);
        return batches;
      });
      for (const offset of [0, 3, Math.max(all.length - 1, 0), all.length, 10_000]) {
        await same(pair, (s) => s.changeIdAt(filter, offset));
      }
      await same(pair, async (s) => {
        const { text, count, lastId } = await s.changeLines({ ...filter, limit: 1000 });
        return { text: Buffer.from(text).toString('utf8'), count, lastId };
      });
    }
    await same(pair, async (s) => {
      const { text, count, lastId } = await s.changeLines({ limit: 3, beforeId: all[2]?.id ?? 1 });
      return { text: Buffer.from(text).toString('utf8'), count, lastId };
    });
  }

  async function mediaAlike(runs: RunRow[]): Promise<void> {
    await same(pair, (s) => s.liveMediaObjects());
    const held = await same(pair, (s) => s.heldMedia(), true);
    await same(pair, (s) => s.mediaFigures());
    await same(pair, (s) => s.mediaRunsByIds(runs.map((r) => r.id)));
    for (const { sha256 } of held.slice(0, 3)) await same(pair, (s) => s.keptBlob(sha256));
    await same(pair, (s) => s.keptBlob('0'.repeat(64)));
  }

  async function deliveriesReadAlike(): Promise<void> {
    const list = await same(pair, (s) => s.listDeliveries({ limit: 100 }));
    await same(pair, (s) => s.listDeliveries({ limit: 3, offset: 2, status: 'pending' }));
    await same(pair, (s) => s.countDeliveries({}));
    await same(pair, (s) => s.countDeliveries({ status: 'failed' }));
    await same(pair, (s) => s.countDeliveries({ endpoint: list[0]?.endpointId ?? 1 }));
    for (const d of list.slice(0, 4)) await same(pair, (s) => s.getDelivery(d.id));
    await same(pair, (s) => s.getDelivery(9999));
    await same(pair, (s) => s.deliveryFigures());
    await same(pair, (s) => s.pendingDeliveries(HOOK_KEYS));
  }

  it('after a first sync, an unchanged one, edits, removals, returns, new media bytes and a failure', async () => {
    await syncBoth();
    await everyReadAlike();
    const png = listedMediaUrls(upstream, host).find((u) => u.endsWith('.png'));
    if (png === undefined) throw new Error('the simulated listing names no PNG');
    host.bump(png);
    await syncBoth();
    upstream.data.edit(3);
    upstream.data.add(2, 'start');
    upstream.data.remove(3);
    await syncBoth();
    await everyReadAlike();
    upstream.data.returnRemoved(1);
    upstream.data.reorder();
    const first = upstream.data.at(0) as { uuid: string };
    upstream.data.duplicate(first.uuid);
    await syncBoth();
    // A failed run, and a recovery after it: sync.failed and sync.recovered messages.
    const failed = await syncBoth({}, 'http://127.0.0.1:9/');
    expect(failed[0]).toBeInstanceOf(MirrorError);
    await syncBoth();
    await everyReadAlike();
    // The scenario reached every kind of row (else "alike" would prove little).
    const kinds = new Set((await pair.pg.listChanges({ limit: 1000 })).map((c) => c.kind));
    expect([...kinds].sort()).toStrictEqual(['added', 'changed', 'media_changed', 'removed', 'returned']);
    expect((await pair.pg.runCounts()).get('failed')).toBe(1);
    expect((await pair.pg.mediaFigures()).total.fetched).toBeGreaterThan(0);
    expect(await pair.pg.countDeliveries({})).toBeGreaterThan(4);
    expect(await pair.pg.countCoworkers(true)).toBeGreaterThan(await pair.pg.countCoworkers(false));
    await same(pair, (s) => s.recordRebind(2, 'http://before.example/'));
    await same(pair, (s) => s.getRun(2));
  }, 120_000);

  it('claims, attempts, redeliveries and re-enabled endpoints move both outboxes alike', async () => {
    vi.setSystemTime(T0 + ++step * 60_000);
    const claimAt = Date.now();
    const claim = (token: string, busy: number[] = []) =>
      same(pair, (s) =>
        s.claimDue({ urls: HOOK_KEYS, busyEndpoints: new Set(busy), leaseMs: 30_000, token, now: claimAt }),
      );
    const first = await claim('t1');
    expect(first.claims.length).toBe(2);
    // Leased: a second claim finds nothing due until the lease ends.
    const again = await claim('t2');
    expect(again).toStrictEqual({ claims: [], nextWakeAt: claimAt + 30_000 });
    const [a, b] = first.claims as [
      NonNullable<(typeof first.claims)[0]>,
      NonNullable<(typeof first.claims)[0]>,
    ];
    const attempt = {
      at: new Date().toISOString(),
      durationMs: 12,
      httpStatus: 500,
      ok: false,
      errorCode: null,
    };
    await same(pair, (s) =>
      s.recordAttempt(
        a,
        { ...attempt, error: 'HTTP 500', excerpt: 'oops' },
        { kind: 'retry', nextAttemptAt: new Date(claimAt + 5).toISOString() },
      ),
    );
    await same(pair, (s) =>
      s.recordAttempt(b, { ...attempt, httpStatus: 410, error: 'gone', excerpt: null }, { kind: 'gone' }),
    );
    await deliveriesReadAlike();
    await same(pair, (s) => s.enableEndpoint(b.endpointId));
    await same(pair, (s) => s.enableEndpoint(9999));
    const next = await same(pair, (s) =>
      s.claimDue({
        urls: HOOK_KEYS,
        busyEndpoints: new Set([a.endpointId]),
        leaseMs: 1000,
        token: 't3',
        now: claimAt + 10,
      }),
    );
    const c = next.claims[0];
    if (c === undefined) throw new Error('no claim');
    await same(pair, (s) => s.releaseLease(c, 'not-mine'));
    await same(pair, (s) => s.releaseLease(c, 't3'));
    const d = await same(pair, (s) =>
      s.claimDue({
        urls: HOOK_KEYS,
        busyEndpoints: new Set(),
        leaseMs: 1000,
        token: 't4',
        now: claimAt + 20,
      }),
    );
    for (const one of d.claims) {
      await same(pair, (s) =>
        s.recordAttempt(
          one,
          { ...attempt, httpStatus: 200, ok: true, error: null, excerpt: '' },
          { kind: 'succeeded' },
        ),
      );
    }
    const failedOne = (await pair.sqlite.listDeliveries({ limit: 1, status: 'succeeded' }))[0];
    await same(pair, (s) => s.redeliver(failedOne?.id ?? 0));
    await same(pair, (s) => s.redeliver(424242));
    await deliveriesReadAlike();
  });

  it('a commit that fails midway leaves nothing, on either store', async () => {
    vi.setSystemTime(T0 + ++step * 60_000);
    const before = async () => ({
      listing: await same(pair, async (s) => {
        const run = await s.latestSucceededRun();
        return run && s.listingAt(run);
      }),
      changes: await same(pair, (s) => s.listChanges({ limit: 10_000 })),
      coworkers: await same(pair, (s) => s.countCoworkers(true)),
      deliveries: await same(pair, (s) => s.countDeliveries({})),
      media: await same(pair, (s) => s.mediaFigures()),
    });
    const state = await before();
    for (const poison of ['outbox', 'duplicate'] as const) {
      for (const store of [pair.sqlite, pair.pg]) {
        const error = await poisonedCommit(store, poison);
        // A constraint violation is a database error on both stores (exit 8 through the CLI).
        expect(toMirrorError(error).code).toBe(poison === 'duplicate' ? 'DB_ERROR' : 'UNEXPECTED');
      }
      expect(await before()).toStrictEqual(state);
    }
    await everyReadAlike();
  });

  it('the notification rows are claimed, completed and released alike', async () => {
    vi.setSystemTime(T0 + ++step * 60_000);
    const outboxes = [
      outboxOver(
        new PortNotificationOutbox(outboxPortOf((pair.sqlite as ReturnType<typeof openDatabase>).sqlite)),
      ),
      outboxOver(pair.pg.notificationOutbox()),
    ];
    const both = async <T>(act: (o: NotificationOutbox) => Promise<T>): Promise<T> => {
      const [a, b] = [
        await act(outboxes[0] as NotificationOutbox),
        await act(outboxes[1] as NotificationOutbox),
      ];
      expect(b).toStrictEqual(a);
      return a;
    };
    const claimed = await both((o) => o.claim(new Date(), 3));
    expect(claimed.length).toBe(3);
    const [first, second, third] = claimed as [OutboxNotification, OutboxNotification, OutboxNotification];
    await both((o) => o.complete(first.id, { status: 'delivered', detail: 'ok' }));
    await both((o) =>
      o.complete(second.id, { status: 'pending', nextAttemptAt: new Date(Date.now() + 1), detail: '503' }),
    );
    await both((o) => o.complete(third.id, { status: 'failed', detail: 'gone' }));
    await both((o) => o.disableTarget(first.targetId, 'test'));
    await both((o) => o.claim(new Date(Date.now() + 10), 100));
    await both(async (o) => o.release?.());
    await both((o) => o.claim(new Date(Date.now() + 10), 2));
    targetIds = [...new Set(claimed.map((c) => c.targetId))].sort();
    // The disabled target is listed, enabled by its id (an unknown id enables none), and
    // disabled again: every one of them is enabled by `null`.
    const disabled = await same(pair, (s) => s.disabledNotifyTargets());
    expect(disabled).toStrictEqual([
      { targetId: first.targetId, disabledAt: new Date().toISOString(), reason: 'test' },
    ]);
    expect(await same(pair, (s) => s.enableNotifyTargets('no-such-target'))).toStrictEqual([]);
    expect(await same(pair, (s) => s.enableNotifyTargets(first.targetId))).toStrictEqual([first.targetId]);
    expect(await same(pair, (s) => s.disabledNotifyTargets())).toStrictEqual([]);
    for (const targetId of targetIds) await both((o) => o.disableTarget(targetId, `refused ${targetId}`));
    await same(pair, (s) => s.disabledNotifyTargets());
    expect(await same(pair, (s) => s.enableNotifyTargets(null))).toStrictEqual(targetIds);
    await both(async (o) => o.countPending?.());
  });

  it('a digest is written once per target and period, on both stores and across instances', async () => {
    vi.setSystemTime(T0 + ++step * 60_000);
    const outboxes = [
      outboxOver(
        new PortNotificationOutbox(outboxPortOf((pair.sqlite as ReturnType<typeof openDatabase>).sqlite)),
      ),
      outboxOver(pair.pg.notificationOutbox()),
    ] as const;
    const both = async <T>(act: (o: NotificationOutbox) => Promise<T>): Promise<T> => {
      const [a, b] = [await act(outboxes[0]), await act(outboxes[1])];
      expect(b).toStrictEqual(a);
      return a;
    };
    // The composer sees the period's changes, oldest first, and their coworkers' names.
    const plan = (from: number, to: number, ids: readonly string[]): DigestPlan => ({
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      targetIds: ids,
      message: (facts) => {
        const changes = [...facts.changes()];
        if (changes.length === 0) return null;
        const subjects = facts.subjectsOf(changes);
        const lines = changes.map((c) => [c.id, c.kind, subjects.get(c.id)?.name ?? null]);
        return { type: 'notify.digest', body: JSON.stringify({ lines }) };
      },
    });
    const write = (o: NotificationOutbox, p: DigestPlan) => o.enqueueDigest?.(p) ?? Promise.resolve(-1);
    const period = plan(T0, Date.now(), targetIds);
    expect(targetIds.length).toBe(2);
    expect(await both((o) => write(o, period))).toBe(2);
    // Written already: a later pass writes nothing; a new target gets its own.
    expect(await both((o) => write(o, period))).toBe(0);
    const wider = plan(T0, Date.now(), [...targetIds, 'digest-only-target']);
    expect(await both((o) => write(o, wider))).toBe(1);
    // A period without changes writes nothing.
    expect(await both((o) => write(o, plan(0, T0, targetIds)))).toBe(0);
    await both(async (o) => o.countPending?.());
    // Two instances writing the next period at once: each target gets it once, whoever wrote it.
    const next = plan(T0, Date.now() + 60_000, targetIds);
    const written = await Promise.all([
      write(outboxOver(pair.pg.notificationOutbox()), next),
      write(outboxOver(pair.pg.notificationOutbox()), next),
    ]);
    expect(written.reduce((a, b) => a + b, 0)).toBe(2);
    expect(await write(outboxes[0], next)).toBe(2);
    await same(pair, (s) => s.listDeliveries({ limit: 100 }));
  });

  it('holds the same rows in every table, notifications included', async () => {
    const sqliteDb = pair.sqlite as ReturnType<typeof openDatabase>;
    const admin = pgFixture.server.admin(pgFixture.database);
    const notifyRows = sqliteDb.sqlite
      .prepare("select count(*) from webhook_endpoints where url like 'notify:%'")
      .pluck()
      .get() as number;
    // The two targets of NOTIFY_URLS, and the one only a digest wrote to.
    expect(notifyRows).toBe(3);
    for (const table of DATA_TABLES) {
      const fromSqlite = sqliteDb.sqlite.prepare(wholeTableSql(table)).all();
      const fromPg = await rows<Record<string, unknown>>(admin, wholeTableSql(table));
      expect(tableComparable(fromPg), table).toStrictEqual(tableComparable(fromSqlite));
    }
    // The messages were composed with the run's own media: thumbnails from the mirror.
    const bodies = await rows<{ body: string }>(
      admin,
      "select body from webhook_messages where type like 'notify.%'",
    );
    expect(bodies.some((m) => m.body.includes(`"${BASE}/media/`))).toBe(true);
    // No endpoint row holds a URL: webhook endpoints are keyed, notification targets named by id.
    const urls = await rows<{ url: string }>(admin, 'select url from webhook_endpoints order by id');
    expect(urls.map((u) => u.url.replace(/^webhook:[0-9a-f]{64}$/, 'webhook:<key>'))).toStrictEqual([
      'webhook:<key>',
      'webhook:<key>',
      ...urls.slice(2).map((u) => u.url),
    ]);
    expect(urls.slice(2).every((u) => u.url.startsWith('notify:'))).toBe(true);
  });

  it('an endpoint row holding a URL in clear is keyed when either store is opened', async () => {
    const sqliteDb = pair.sqlite as ReturnType<typeof openDatabase>;
    const admin = pgFixture.server.admin(pgFixture.database);
    const at = new Date(T0).toISOString();
    // As a version before keys wrote them: one URL whose key has a row already, one without.
    const clear = [HOOK_URLS[0] ?? '', 'http://deploy:token@127.0.0.1:9/hook?secret=1'];
    for (const url of clear) {
      sqliteDb.sqlite.prepare('insert into webhook_endpoints (url, created_at) values (?, ?)').run(url, at);
      await admin.query('insert into webhook_endpoints (url, created_at) values ($1, $2)', [url, at]);
    }
    const reopenedSqlite = openDatabase(join(dirs.sqlite, 'mirror.db'));
    const reopenedPg = await openPgStore(pgTarget(pgFixture.url), {});
    try {
      const endpointsOf = async () => ({
        sqlite: sqliteDb.sqlite.prepare('select id, url from webhook_endpoints order by id').all(),
        pg: await rows<{ id: number; url: string }>(
          admin,
          'select id, url from webhook_endpoints order by id',
        ),
      });
      const after = await endpointsOf();
      for (const list of [after.sqlite, after.pg] as { url: string }[][]) {
        const urls = list.map((r) => r.url);
        expect(urls.filter((u) => clear.includes(u))).toStrictEqual([]);
        expect(urls.filter((u) => u === HOOK_KEYS[0])).toHaveLength(1);
        expect(urls).toContain(pair.sqlite.endpointKeys.webhook(clear[1] ?? ''));
        expect(JSON.stringify(list)).not.toContain('token');
      }
      expect(after.pg).toStrictEqual(after.sqlite);
      // Opened again: nothing left to convert, nothing changes.
      openDatabase(join(dirs.sqlite, 'mirror.db')).close();
      await (await openPgStore(pgTarget(pgFixture.url), {})).close();
      expect(await endpointsOf()).toStrictEqual(after);
    } finally {
      reopenedSqlite.close();
      await reopenedPg.close();
    }
  });

  it('runs recorded outside a sync, dead holders, kept identities, dropped media and a prune move both alike', async () => {
    vi.setSystemTime(T0 + ++step * 60_000);
    const at = new Date(Date.now());
    const failedId = await same(pair, (s) =>
      s.recordFailedRun({
        upstream: 'http://gone.example/',
        startedAt: at,
        trigger: 'command',
        error: { code: 'SYNC_CRASHED', message: 'the sync process ended by SIGKILL' },
      }),
    );
    await same(pair, (s) => s.getRun(failedId));
    // A heartbeat of a run that ended changes nothing.
    await same(pair, async (s) => {
      await s.heartbeat(failedId, new Date(Date.now() + 1000).toISOString());
      return s.getRun(failedId);
    });
    await same(pair, (s) => s.recoverDeadRuns());
    await same(pair, (s) => s.runOfTick('2026-03-02T09:00:00.000Z'));
    await same(pair, (s) => s.identityValue('endpoint_id_key', () => 'never kept: one is held'));
    await same(pair, (s) => s.hasStoredMedia());
    // Nothing of the latest listing is dropped; files only earlier runs named are.
    const dropped = await same(pair, (s) => s.dropMediaUnusedSince(new Date(Date.now()).toISOString()), true);
    await same(pair, (s) => s.heldMedia(), true);
    await same(pair, (s) => s.mediaFigures());
    expect(dropped.length).toBeGreaterThan(0);
    const removed = await pair.sqlite.listCoworkers({ limit: 1000, offset: 0, includeRemoved: true });
    expect(removed.some((c) => c.removedAt !== null)).toBe(true);
    vi.setSystemTime(T0 + ++step * 60_000);
    const now = new Date(Date.now()).toISOString();
    await same(pair, async (s) => {
      const outcome = await s.prune({
        removedBefore: now,
        olderThan: now,
        now,
        mentions: (person) => [person.uuid, ...person.names],
        mediaUrlsOf: () => [],
      });
      // Scrubbing is each database's own (a VACUUM, or PostgreSQL's own); whether it ran is not the contract.
      return {
        ...outcome,
        scrubbed: null,
        scrubProblem: null,
        droppedFiles: [...outcome.droppedFiles].sort(),
      };
    });
    await same(pair, (s) => s.pruneHorizon());
    await everyReadAlike();
  });

  it('two instances claiming at once never lease one delivery twice', async () => {
    const other = await openPgStore(pgTarget(pgFixture.url), { poolMax: 4, instanceId: 'other' });
    try {
      const admin = pgFixture.server.admin(pgFixture.database);
      // Every webhook delivery pending and due, each endpoint its own queue: many heads to race for.
      await admin.query(
        "update webhook_deliveries set status = 'pending', lease_until = null, lease_token = null",
      );
      const endpoints = await rows<{ n: number }>(
        admin,
        "select count(*)::int as n from webhook_endpoints where url not like 'notify:%'",
      );
      const now = Date.now();
      for (let round = 0; round < 5; round++) {
        await admin.query('update webhook_deliveries set lease_until = null, lease_token = null');
        const ask = (store: Store, token: string) =>
          store.claimDue({ urls: HOOK_KEYS, busyEndpoints: new Set(), leaseMs: 60_000, token, now });
        const [a, b] = await Promise.all([ask(pair.pg, 'a'), ask(other, 'b')]);
        const ids = [...a.claims, ...b.claims].map((c) => c.deliveryId);
        expect(new Set(ids).size).toBe(ids.length);
        // Between them every queue's head was leased once (a head one skipped, the other took or
        // found leased).
        expect(ids.length).toBeLessThanOrEqual(endpoints[0]?.n ?? 0);
        const leased = await rows<{ id: number; lease_token: string }>(
          admin,
          'select id, lease_token from webhook_deliveries where lease_token is not null order by id',
        );
        expect(leased.map((r) => r.id)).toStrictEqual([...ids].sort((x, y) => x - y));
      }
    } finally {
      await other.close();
    }
  });
});

describe.each(STORE_KINDS)('the run lock on %s', (kind) => {
  // Each store's lock refuses a second holder with SYNC_LOCKED naming the run that holds it.
  const stores = storeOpener(kind);
  it('refuses a second sync naming the holder', async () => {
    const first = await stores.open();
    const run = await first.beginRun('http://up.example/');
    // Another instance's handle on the same database.
    const second = await stores.another(first);
    const refused = await second.beginRun('http://up.example/').then(
      () => null,
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(MirrorError);
    expect((refused as MirrorError).code).toBe('SYNC_LOCKED');
    expect((refused as MirrorError).message).toMatch(
      new RegExp(`^another sync holds the lock: run ${run.id} \\(pid ${process.pid} on `),
    );
    await first.endRun({ runId: run.id, status: 'aborted', error: { code: 'TEST', message: 'done' } });
    await first.releaseRun(run.id);
    const next = await second.beginRun('http://up.example/');
    expect(next.id).toBe(run.id + 1);
    await second.releaseRun(next.id);
  });
});
