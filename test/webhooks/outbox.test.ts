import { describe, expect, it } from 'vitest';
import { changeView } from '../../src/views/history-views.js';
import { MAX_PAYLOAD_BYTES } from '../../src/webhooks/outbox.js';
import { simulatedUpstream, storedState, sync } from '../helpers/sync.js';
import { tableRows, tempDatabase } from '../helpers/temp-db.js';
import type { Store } from '../../src/db/store.js';
import { STORE_KINDS, storeMaker, storeRows } from '../helpers/postgres.js';

const webhooks = {
  WEBHOOK_URLS: 'http://127.0.0.1:9/a,http://127.0.0.1:9/b',
  WEBHOOK_EVENTS: 'coworkers.changed,sync.failed,sync.recovered',
  WEBHOOK_FAILURE_THRESHOLD: '3',
};

interface Payload {
  type: string;
  timestamp: string;
  data: Record<string, unknown> & { run: number; changes?: unknown[]; part?: number; parts?: number };
}

async function messages(store: Store): Promise<(Payload & { webhookId: string; runId: number })[]> {
  return (
    (await storeRows(store, 'select webhook_id, run_id, body from webhook_messages order by id')) as {
      webhook_id: string;
      run_id: number;
      body: string;
    }[]
  ).map((row) => ({ ...(JSON.parse(row.body) as Payload), webhookId: row.webhook_id, runId: row.run_id }));
}

const bodies = async (store: Store): Promise<string[]> =>
  (await storeRows(store, 'select body from webhook_messages order by id')).map((r) => String(r.body));

describe.each(STORE_KINDS)('the outbox on %s: notifications written in the run transaction', (kind) => {
  const fresh = storeMaker(kind);

  it('a run with changes writes one coworkers.changed carrying the same objects as `changes --json`', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 7, count: 12 });
    await sync(store, upstream, webhooks);
    upstream.data.edit(2, 'post');
    upstream.data.remove(1);
    const second = await sync(store, upstream, webhooks);

    const all = await messages(store);
    expect(all.map((m) => [m.type, m.runId])).toEqual([
      ['coworkers.changed', 1],
      ['coworkers.changed', second.runId],
    ]);
    const last = all[1];
    const expected = (await store.listChanges({ limit: 100 }))
      .filter((c) => c.runId === second.runId)
      .map(changeView)
      .reverse();
    expect(last).toMatchObject({
      type: 'coworkers.changed',
      data: {
        run: second.runId,
        upstream: upstream.url,
        counts: second.counts,
        initial: false,
        part: 1,
        parts: 1,
      },
    });
    expect(last?.data.changes).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(last?.webhookId).toMatch(/^msg_[A-Za-z0-9_-]{22}$/);
    // One pending delivery per message and endpoint, due at once.
    expect(
      await storeRows(
        store,
        'select message_id, endpoint_id, status, tries, attempts from webhook_deliveries order by 1, 2',
      ),
    ).toEqual([
      { message_id: 1, endpoint_id: 1, status: 'pending', tries: 0, attempts: 0 },
      { message_id: 1, endpoint_id: 2, status: 'pending', tries: 0, attempts: 0 },
      { message_id: 2, endpoint_id: 1, status: 'pending', tries: 0, attempts: 0 },
      { message_id: 2, endpoint_id: 2, status: 'pending', tries: 0, attempts: 0 },
    ]);
  });

  it('a run without changes, or without endpoints, or with the type filtered out, writes nothing', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 8, count: 5 });
    await sync(store, upstream); // no webhooks configured
    upstream.data.add(1);
    await sync(store, upstream, { ...webhooks, WEBHOOK_EVENTS: 'sync.failed' });
    await sync(store, upstream, webhooks); // nothing changed
    expect(await messages(store)).toEqual([]);
  });

  it('masks credentials of the upstream URL in payloads', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 9, count: 3 });
    const withCredentials = upstream.url.replace('http://', 'http://reader:s3cret@');
    await sync(store, { url: withCredentials }, webhooks);
    const [body = ''] = await bodies(store);
    expect(body).not.toContain('s3cret');
    expect((JSON.parse(body) as Payload).data.upstream).toBe(
      withCredentials.replace('reader:s3cret', 'reader:***'),
    );
  });

  it("marks the first sync's coworkers.changed initial, on every part: the team as found, not people who joined", async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 12, count: 2_500 });
    const first = await sync(store, upstream, webhooks);
    upstream.data.add(1);
    const second = await sync(store, upstream, webhooks);
    const all = await messages(store);
    const parts = all.filter((m) => m.runId === first.runId);
    expect(parts.length).toBeGreaterThan(1);
    expect(all.map((m) => [m.type, m.runId, m.data.initial, m.data.part, m.data.parts])).toEqual([
      ...parts.map((_, i) => ['coworkers.changed', first.runId, true, i + 1, parts.length]),
      ['coworkers.changed', second.runId, false, 1, 1],
    ]);
    for (const m of parts) {
      expect(Object.keys(m.data)).toEqual([
        'run',
        'upstream',
        'counts',
        'initial',
        'part',
        'parts',
        'changes',
      ]);
      expect(new Set((m.data.changes as { kind: string }[]).map((c) => c.kind))).toEqual(new Set(['added']));
    }
    expect(all.at(-1)?.data.changes).toEqual([expect.objectContaining({ kind: 'added', run: second.runId })]);
  });

  it('splits a run whose changes exceed the size cap into parts that say part and parts', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 10, count: 2_500 });
    const summary = await sync(store, upstream, webhooks);
    const all = await messages(store);
    expect(all.length).toBeGreaterThan(1);
    for (const body of await bodies(store))
      expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_PAYLOAD_BYTES);
    expect(all.map((m) => [m.data.part, m.data.parts])).toEqual(all.map((_, i) => [i + 1, all.length]));
    // Every change exactly once, in order, across the parts.
    const ids = all.flatMap((m) => (m.data.changes as { id: number }[]).map((c) => c.id));
    expect(ids).toHaveLength(summary.counts.added);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('sends sync.failed once when the streak reaches the threshold, then sync.recovered', async () => {
    const store = await fresh();
    const upstream = await simulatedUpstream({ seed: 11, count: 4 });
    await sync(store, upstream, webhooks);
    upstream.faults.set({ invalidJson: { page: 1 } });
    for (let i = 0; i < 4; i++) await expect(sync(store, upstream, webhooks)).rejects.toThrow();
    upstream.faults.clear();
    const recovered = await sync(store, upstream, webhooks);

    const all = await messages(store);
    expect(all.map((m) => [m.type, m.runId])).toEqual([
      ['coworkers.changed', 1],
      ['sync.failed', 4],
      ['sync.recovered', recovered.runId],
    ]);
    expect(all[1]?.data).toEqual({
      run: 4,
      upstream: upstream.url,
      consecutive_failures: 3,
      error: { code: 'UPSTREAM_INVALID_JSON', message: expect.any(String) as string },
    });
    expect(all[2]?.data).toMatchObject({ run: recovered.runId, failed_runs: 4 });
  });
});

// SQLite only: the run is aborted under it by a write between two of its synchronous steps; on
// PostgreSQL a run is aborted by the loss of its lock (test/db/postgres/run-lock.test.ts).
describe('the outbox of a refused commit', () => {
  it('a commit that is refused writes no notification, like it writes no data', async () => {
    const store = tempDatabase();
    const upstream = await simulatedUpstream({ seed: 12, count: 4 });
    await sync(store, upstream, webhooks);
    const before = { ...storedState(store), messages: tableRows(store, 'webhook_messages') };
    upstream.data.add(2);
    // The run is aborted under it (as a stale-lock recovery would) before its commit.
    const aborting = sync(store, upstream, webhooks);
    store.sqlite.prepare("update runs set status = 'aborted' where status = 'running'").run();
    await expect(aborting).rejects.toMatchObject({ code: 'RUN_ABORTED' });
    expect({ ...storedState(store), messages: tableRows(store, 'webhook_messages') }).toEqual(before);
  });
});
