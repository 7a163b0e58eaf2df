import { readFileSync, existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/db/store.js';
import { silentLogger } from '../../src/logger.js';
import { notifyOutboxSettings, notifyRunOutbox } from '../../src/notify/run-outbox.js';
import { pruneHistory, type PruneAges } from '../../src/sync/prune-history.js';
import { LIST_PATH } from '../../src/upstream/list-path.js';
import { succeededRunOutbox } from '../../src/webhooks/outbox.js';
import { testConfig } from '../helpers/config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { DATA_TABLES, STORE_KINDS, storeMaker, storeRows, wholeTableSql } from '../helpers/postgres.js';
import { commitListing, type RunExtras } from '../helpers/store-runs.js';

// `prune`: forgetting removed coworkers (every row of theirs, their name's bytes gone from the
// SQLite file and its WAL) and history past a horizon (everyone's old changes and closed versions),
// with whole-table assertions before and after, and the served listing and the time travel of the
// runs the prune keeps whole answered byte for byte as before.

const NAME = 'Zelda Quokkafield';
const uuid = (n: number): string => n.toString(16).padStart(32, '0');
/** Not a run of digits: no other row's bytes can spell it by chance. */
const ZELDA = '7e1da0ca5e5e4a1b9c3d2f1e0a9b8c7d';
const entry = (n: number, name: string, post: string): string =>
  JSON.stringify({ uuid: uuid(n), name, post, emoji_file: null, images: [] });
const zelda = (post: string, name = NAME) =>
  JSON.stringify({ uuid: ZELDA, name, post, emoji_file: null, images: [] });
/** A name that reads right to left: a chat line isolates it (U+2068…U+2069) where it names her. */
const RTL_NAME = 'זלדה קווקה';

type Tables = Record<string, Record<string, unknown>[]>;

async function allTables(store: Store): Promise<Tables> {
  const out: Tables = {};
  for (const table of DATA_TABLES) out[table] = await storeRows(store, wholeTableSql(table));
  return out;
}

/** Webhooks and chat messages of every run (no PUBLIC_BASE_URL: a chat line names people, no uuid). */
function outboxExtras(store: Store): RunExtras {
  const config = testConfig({
    WEBHOOK_URLS: 'http://127.0.0.1:9/hook',
    NOTIFY_URLS: 'slack+http://127.0.0.1:9/services/T0/B0/secret',
  });
  return {
    outbox: succeededRunOutbox(config.webhooks, store.endpointKeys),
    notify: notifyRunOutbox(notifyOutboxSettings(config, store.endpointKeys, 'UTC')),
  };
}

/**
 * Four runs: Ada, Bob and Zelda listed; Bob and Zelda change; Zelda leaves; Cy joins. Every
 * delivery is then marked delivered, so no receiver is owed a message.
 */
async function fourRuns(store: Store, name = NAME): Promise<number[]> {
  const extras = outboxExtras(store);
  const runs = [
    [entry(1, 'Ada', 'dev'), entry(2, 'Bob', 'ops'), zelda('qa', name)],
    [entry(1, 'Ada', 'dev'), entry(2, 'Bob', 'ops lead'), zelda('qa lead', name)],
    [entry(1, 'Ada', 'dev'), entry(2, 'Bob', 'ops lead')],
    [entry(1, 'Ada', 'dev'), entry(2, 'Bob', 'ops lead'), entry(3, 'Cy', 'design')],
  ];
  const ids = [];
  for (const bodies of runs) ids.push((await commitListing(store, bodies, extras)).runId);
  await storeRows(
    store,
    "update webhook_deliveries set status = 'succeeded', finished_at = '2026-01-01T00:00:00.000Z'",
  );
  return ids;
}

/** What a server started on the store answers: the listing now, and as of the given instants. */
async function served(store: Store, asOf: readonly string[]): Promise<{ status: number; body: string }[]> {
  const mirror = await startMirror(store);
  const targets = [`${LIST_PATH}`, `${LIST_PATH}?page=2`, ...asOf.map((t) => `${LIST_PATH}?as_of=${t}`)];
  const answers = [];
  for (const target of targets) {
    const response = await fetch(`${mirror.url}${target}`);
    answers.push({ status: response.status, body: await response.text() });
  }
  await mirror.close();
  return answers;
}

async function finishedAt(store: Store, runId: number): Promise<string> {
  const run = await store.getRun(runId);
  if (!run?.finishedAt) throw new Error(`run ${runId} did not finish`);
  return run.finishedAt;
}

function prune(store: Store, ages: Partial<PruneAges>, now?: Date) {
  return pruneHistory(
    store,
    { removedAfterMs: null, olderThanMs: null, ...ages },
    { media: null, logger: silentLogger(), ...(now ? { now } : {}) },
  );
}

/** The bytes of the SQLite file and its WAL, as text (latin1: one char per byte). */
function fileBytes(store: Store): string {
  const parts = [store.file, `${store.file}-wal`].filter((f) => existsSync(f));
  return parts.map((f) => readFileSync(f).toString('latin1')).join('');
}

function withoutPrunes(tables: Tables): Tables {
  const { prunes: _prunes, ...rest } = tables;
  return rest;
}

const mentions = (row: Record<string, unknown>): boolean =>
  JSON.stringify(row).includes(ZELDA) || JSON.stringify(row).includes(NAME);

describe.each(STORE_KINDS)('prune on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('--removed-before 0s forgets every row of a removed coworker and nothing else', async () => {
    const store = await fresh();
    const runIds = await fourRuns(store);
    const [, run2, run3, run4] = await Promise.all(runIds.map((id) => finishedAt(store, id)));
    if (kind === 'sqlite') expect(fileBytes(store)).toContain(NAME);
    const before = await allTables(store);
    const servedBefore = await served(store, [run4 ?? '', run3 ?? '', run2 ?? '']);

    const summary = await prune(store, { removedAfterMs: 0 });

    const zeldaVersions = new Set(before.versions?.filter((v) => v.uuid === ZELDA).map((v) => v.id));
    const toldOfZelda = new Set(before.webhook_messages?.filter(mentions).map((m) => m.id));
    const goneDeliveries = new Set(
      before.webhook_deliveries?.filter((d) => toldOfZelda.has(d.message_id)).map((d) => d.id),
    );
    const after = await allTables(store);
    const { prunes, ...rest } = after;
    expect(rest).toStrictEqual({
      ...withoutPrunes(before),
      coworkers: before.coworkers?.filter((c) => c.uuid !== ZELDA),
      versions: before.versions?.filter((v) => v.uuid !== ZELDA),
      listing_positions: before.listing_positions?.filter((p) => !zeldaVersions.has(p.version_id)),
      changes: before.changes?.filter((c) => c.uuid !== ZELDA),
      webhook_messages: before.webhook_messages?.filter((m) => !toldOfZelda.has(m.id)),
      webhook_deliveries: before.webhook_deliveries?.filter((d) => !goneDeliveries.has(d.id)),
    });
    // Runs 1-3 told of her by webhook, runs 2 and 3 in chat (the first run's chat message counts
    // the team, naming nobody); run 4 did not.
    expect(toldOfZelda.size).toBe(5);
    expect(prunes).toStrictEqual([
      {
        id: 1,
        at: prunes?.[0]?.at,
        removed_before: run3,
        history_before: null,
        coworkers: 1,
        versions: 2,
        positions: 2,
        changes: 3,
        media_versions: 0,
        files: 0,
        messages: 5,
      },
    ]);
    expect(summary.counts).toStrictEqual({
      coworkers: 1,
      versions: 2,
      positions: 2,
      changes: 3,
      mediaVersions: 0,
      mediaUrls: 0,
      files: 0,
      messages: 5,
      deliveries: 5,
      attempts: 0,
    });
    expect(summary.pendingMessages).toBe(0);
    expect(summary.scrubbed).toBe(true);
    expect(summary.horizon).toStrictEqual({ removedBefore: run3, historyBefore: null });
    expect(await store.pruneHorizon()).toStrictEqual({ removedBefore: run3, historyBefore: null });
    if (kind === 'sqlite') {
      const bytes = fileBytes(store);
      expect(bytes).not.toContain(NAME);
      expect(bytes).not.toContain(ZELDA);
    }

    // The listing now and as of run 4 and run 3 (she had left): byte for byte; as of run 2 she was
    // listed, and that listing is gone: refused, saying why, instead of served without her.
    const servedAfter = await served(store, [run4 ?? '', run3 ?? '', run2 ?? '']);
    expect(servedAfter.slice(0, 4)).toStrictEqual(servedBefore.slice(0, 4));
    expect(servedBefore[4]?.body).toContain(NAME);
    expect(servedAfter[4]).toStrictEqual({
      status: 410,
      body: JSON.stringify({
        detail:
          `The listing as of ${run2} is no longer kept: coworkers removed by ${run3} were pruned ` +
          `(coworker-mirror prune). Ask for as_of ${run3} or later.`,
      }),
    });
  });

  it('forgets the messages naming her when her name reads right to left', async () => {
    const store = await fresh();
    await fourRuns(store, RTL_NAME);
    const naming = (rows: Record<string, unknown>[]) =>
      rows.filter((m) => String(m.body).includes(RTL_NAME)).map((m) => m.type);
    const before = await storeRows(store, 'select type, body from webhook_messages order by id');
    // Runs 1 and 2 name her by webhook; runs 2 and 3 in chat, her name isolated there.
    expect(naming(before)).toStrictEqual([
      'coworkers.changed',
      'notify.changes',
      'coworkers.changed',
      'notify.changes',
    ]);

    const summary = await prune(store, { removedAfterMs: 0 });

    expect([summary.counts.messages, summary.pendingMessages]).toStrictEqual([5, 0]);
    expect(naming(await storeRows(store, 'select type, body from webhook_messages'))).toStrictEqual([]);
    if (kind === 'sqlite') expect(fileBytes(store)).not.toContain(Buffer.from(RTL_NAME).toString('latin1'));
  });

  it('a second prune finds nothing more, and moves no horizon', async () => {
    const store = await fresh();
    await fourRuns(store);
    await prune(store, { removedAfterMs: 0 });
    const before = await allTables(store);
    const again = await prune(store, { removedAfterMs: 0, olderThanMs: 365 * 86_400_000 });
    expect(Object.values(again.counts).every((n) => n === 0)).toBe(true);
    expect(await allTables(store)).toStrictEqual(before);
  });

  it('keeps a message still owed to a receiver, and says so', async () => {
    const store = await fresh();
    await fourRuns(store);
    // The chat message of the run she left in is still to be delivered.
    await storeRows(
      store,
      `update webhook_deliveries set status = 'pending', finished_at = null
        where message_id = (select max(id) from webhook_messages where type like 'notify.%' and run_id = 3)`,
    );
    const summary = await prune(store, { removedAfterMs: 0 });
    expect(summary.pendingMessages).toBe(1);
    expect(summary.counts.messages).toBe(4);
    const kept = await storeRows(store, 'select body from webhook_messages where run_id = 3');
    expect(kept.map((m) => String(m.body).includes(NAME))).toStrictEqual([true]);
    // Once delivered, the next prune forgets it.
    await storeRows(store, "update webhook_deliveries set status = 'succeeded'");
    const next = await prune(store, { removedAfterMs: 0 });
    expect([next.counts.messages, next.pendingMessages]).toStrictEqual([1, 0]);
    expect(await storeRows(store, 'select id from webhook_messages where run_id = 3')).toStrictEqual([]);
  });

  it('keeps a coworker removed more recently than asked', async () => {
    const store = await fresh();
    const runIds = await fourRuns(store);
    const removedAt = await finishedAt(store, runIds[2] ?? 0);
    const before = await allTables(store);
    // Removed 1 s after the cutoff: kept.
    const summary = await prune(store, { removedAfterMs: 2_000 }, new Date(Date.parse(removedAt) + 1_000));
    expect(summary.counts.coworkers).toBe(0);
    expect(await allTables(store)).toStrictEqual(before);
  });

  it('--older-than prunes old changes and closed versions, keeping current state and later time travel', async () => {
    const store = await fresh();
    const runIds = await fourRuns(store);
    const [run1, run2, run3, run4] = await Promise.all(runIds.map((id) => finishedAt(store, id)));
    const before = await allTables(store);
    const servedBefore = await served(store, [run4 ?? '', run3 ?? '', run2 ?? '']);
    const historyBefore = await store.coworkerHistory(uuid(2));

    // Everything up to run 3 is older than 1 s at run 3's finish + 1 s: run 3 is the oldest kept whole.
    const summary = await prune(store, { olderThanMs: 1_000 }, new Date(Date.parse(run3 ?? '') + 1_000));

    const [r1, r2, r3] = runIds;
    const goneVersions = new Set(
      before.versions
        ?.filter((v) => v.valid_to_run !== null && Number(v.valid_to_run) <= (r3 ?? 0))
        .filter((v) =>
          before.versions?.some((w) => w.uuid === v.uuid && w.slot === v.slot && Number(w.id) > Number(v.id)),
        )
        .map((v) => v.id),
    );
    // Bob's and Zelda's first versions; Zelda's last stays: she is removed, that is her state.
    expect(goneVersions.size).toBe(2);
    const oldMessages = new Set(
      before.webhook_messages?.filter((m) => m.run_id === r1 || m.run_id === r2).map((m) => m.id),
    );
    const after = await allTables(store);
    const { prunes, ...rest } = after;
    expect(rest).toStrictEqual({
      ...withoutPrunes(before),
      versions: before.versions?.filter((v) => !goneVersions.has(v.id)),
      listing_positions: before.listing_positions?.filter(
        (p) => p.valid_to_run === null || Number(p.valid_to_run) > (r3 ?? 0),
      ),
      changes: before.changes?.filter((c) => c.run_id === r3 || c.run_id === runIds[3]),
      webhook_messages: before.webhook_messages?.filter((m) => !oldMessages.has(m.id)),
      webhook_deliveries: before.webhook_deliveries?.filter((d) => !oldMessages.has(d.message_id)),
    });
    expect(prunes?.map((p) => [p.removed_before, p.history_before])).toStrictEqual([[null, run3]]);
    expect(summary.horizon).toStrictEqual({ removedBefore: null, historyBefore: run3 });
    expect(run1 && run1 < (run3 ?? '')).toBe(true);

    // The current state and the listings of run 3 and 4, as before; run 2's is refused.
    const servedAfter = await served(store, [run4 ?? '', run3 ?? '', run2 ?? '']);
    expect(servedAfter.slice(0, 4)).toStrictEqual(servedBefore.slice(0, 4));
    expect(servedAfter[4]?.status).toBe(410);
    expect(await store.currentVersions(uuid(2))).toStrictEqual(
      historyBefore?.versions.filter((v) => v.validToRun === null),
    );
    // Bob's history keeps what run 3 on says: his current version, none of the changes before.
    const history = await store.coworkerHistory(uuid(2));
    expect(history?.versions.map((v) => v.body)).toStrictEqual([entry(2, 'Bob', 'ops lead')]);
    expect(history?.changes).toStrictEqual([]);
  });

  it('refuses while a sync holds the lock, and deletes nothing', async () => {
    const store = await fresh();
    await fourRuns(store);
    const before = await allTables(store);
    const run = await store.beginRun('http://upstream.invalid');
    try {
      await expect(prune(store, { removedAfterMs: 0 })).rejects.toMatchObject({ code: 'SYNC_LOCKED' });
    } finally {
      await store.endRun({
        runId: run.id,
        status: 'aborted',
        error: { code: 'RUN_ABORTED', message: 'test' },
      });
      await store.releaseRun(run.id);
    }
    const after = await allTables(store);
    expect({ ...after, runs: after.runs?.slice(0, -1) }).toStrictEqual(before);
  });
});
