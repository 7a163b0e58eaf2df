import type { ServerResponse } from 'node:http';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PassThrough } from 'node:stream';
import { MirrorError } from '../../src/errors.js';
import { createLogger, silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import {
  makeEntries,
  makeEntry,
  OPTIONS_BODY,
  startFakeDrf,
  type FakeDrfOptions,
} from '../upstream/fake-drf.js';
import { syncConfig } from '../helpers/config.js';
import { storedState } from '../helpers/sync.js';
import { tableRows, tempDatabase } from '../helpers/temp-db.js';

/** The MirrorError a run fails with. */
async function failure(run: Promise<unknown>): Promise<MirrorError> {
  const error = await run.then(
    () => new Error('the run succeeded'),
    (e: unknown) => e,
  );
  if (!(error instanceof MirrorError)) throw error;
  return error;
}

async function fakeDrf(options: FakeDrfOptions) {
  const server = await startFakeDrf(options);
  onTestFinished(() => server.close());
  return server;
}

function send(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A one-page listing whose second entry carries `field` with the given JSON text. */
function pageWithField(baseUrl: string, fieldJson: string): string {
  const [a, b] = [makeEntry(0), makeEntry(1)];
  const bText = JSON.stringify(b).slice(0, -1) + `,"extra":${fieldJson}}`;
  return `{"count":2,"next":null,"previous":null,"results":[${JSON.stringify(a)},${bText}]}`;
}

/** Sends the headers at once, then one byte every `everyMs`, never finishing. */
function drip(res: ServerResponse, everyMs: number): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const timer = setInterval(() => res.write(' '), everyMs);
  res.on('close', () => clearInterval(timer));
}

describe('a hostile upstream cannot hurt the mirror', () => {
  it.each([3_000, 10_000, 100_000])(
    'regression: an unknown field nested %i levels deep is a schema error naming page, entry and field; nothing stored',
    async (depth) => {
      const store = tempDatabase();
      const deep = '['.repeat(depth) + ']'.repeat(depth);
      const upstream = await fakeDrf({
        intercept: (req, res) => {
          if (req.method !== 'GET') return false;
          send(res, pageWithField(`http://${req.headers.host}`, deep));
          return true;
        },
      });
      const before = storedState(store);
      const error = await failure(runSync(syncConfig(upstream.baseUrl), { store, logger: silentLogger() }));
      expect(error).toMatchObject({
        code: 'UPSTREAM_SCHEMA',
        details: { page: 1, index: 1, field: 'extra' },
      });
      expect(error.message).toMatch(
        /^page 1, entry 1 \(uuid "u0+1"\): field "extra" nests deeper than 32 levels/,
      );
      expect(storedState(store)).toEqual(before);
      expect(await store.getRun(1)).toMatchObject({ status: 'failed', errorCode: 'UPSTREAM_SCHEMA' });
    },
  );

  it('an entry larger than SYNC_MAX_ENTRY_BYTES is a schema error naming its largest field', async () => {
    const store = tempDatabase();
    const upstream = await fakeDrf({
      entries: [makeEntry(0), makeEntry(1, { notes: 'x'.repeat(5000) })],
    });
    const error = await failure(
      runSync(syncConfig(upstream.baseUrl, { SYNC_MAX_ENTRY_BYTES: '4096' }), {
        store,
        logger: silentLogger(),
      }),
    );
    expect(error).toMatchObject({ code: 'UPSTREAM_SCHEMA', details: { page: 1, index: 1, field: 'notes' } });
    expect(error.message).toMatch(/more than the 4096-byte cap \(SYNC_MAX_ENTRY_BYTES\)/);
  });

  it('regression: a listing past SYNC_MAX_LISTING_BYTES fails the run with its own code; nothing stored', async () => {
    const store = tempDatabase();
    const entries = makeEntries(40).map((e) => ({ ...e, name: 'n'.repeat(2000) }));
    const upstream = await fakeDrf({ entries });
    await expect(
      runSync(
        syncConfig(upstream.baseUrl, {
          SYNC_CONCURRENCY: '1',
          SYNC_MAX_LISTING_BYTES: '50000',
          SYNC_MAX_ENTRIES: '90',
        }),
        {
          store,
          logger: silentLogger(),
        },
      ),
    ).rejects.toMatchObject({
      code: 'UPSTREAM_LISTING_TOO_LARGE',
      details: { page: 3, maxListingBytes: 50_000 },
    });
    expect(tableRows(store, 'versions')).toEqual([]);
    // The lock is released: the next run with room enough succeeds.
    await expect(
      runSync(syncConfig(upstream.baseUrl), { store, logger: silentLogger() }),
    ).resolves.toMatchObject({ runId: 2, entries: 40 });
  });

  it('a count past SYNC_MAX_ENTRIES fails after page 1', async () => {
    const store = tempDatabase();
    const upstream = await fakeDrf({ entries: makeEntries(30) });
    await expect(
      runSync(syncConfig(upstream.baseUrl, { SYNC_MAX_ENTRIES: '20' }), {
        store,
        logger: silentLogger(),
      }),
    ).rejects.toMatchObject({ code: 'UPSTREAM_LISTING_TOO_LARGE', details: { count: 30, maxEntries: 20 } });
    expect(upstream.requests.filter((r) => r.method === 'GET')).toHaveLength(1);
  });

  it('regression: a page dripping one byte at a time ends at the request deadline, not never', async () => {
    const store = tempDatabase();
    const upstream = await fakeDrf({
      entries: makeEntries(20),
      intercept: (req, res, info) => {
        if (req.method !== 'GET' || info.page !== 2) return false;
        drip(res, 20);
        return true;
      },
    });
    const error = await failure(
      runSync(
        syncConfig(upstream.baseUrl, { UPSTREAM_MAX_ATTEMPTS: '1', UPSTREAM_REQUEST_DEADLINE: '300' }),
        {
          store,
          logger: silentLogger(),
        },
      ),
    );
    expect(error.code).toBe('UPSTREAM_TIMEOUT');
    expect(error.message).toMatch(
      /page=2 failed after 1 attempt: no complete answer within the 300 ms request deadline/,
    );
    expect(await store.getRun(1)).toMatchObject({ status: 'failed', errorCode: 'UPSTREAM_TIMEOUT' });
  });

  it('regression: a run past SYNC_MAX_DURATION fails naming the request that stalled, and releases the lock', async () => {
    const store = tempDatabase();
    let stall = true;
    const upstream = await fakeDrf({
      entries: makeEntries(20),
      intercept: (req, res, info) => {
        if (!stall || req.method !== 'GET' || info.page !== 3) return false;
        drip(res, 20);
        return true;
      },
    });
    const error = await failure(
      runSync(syncConfig(upstream.baseUrl, { SYNC_MAX_DURATION: '400', UPSTREAM_REQUEST_DEADLINE: '60s' }), {
        store,
        logger: silentLogger(),
      }),
    );
    expect(error).toMatchObject({ code: 'SYNC_TIMEOUT', details: { page: 3, method: 'GET' } });
    expect(error.message).toMatch(
      new RegExp(
        `^run passed its 0.4 s deadline \\(SYNC_MAX_DURATION\\), still waiting for GET ${upstream.baseUrl}${LIST_PATH}\\?page=3 after 0\\.\\d s`,
      ),
    );
    expect(await store.getRun(1)).toMatchObject({ status: 'failed', errorCode: 'SYNC_TIMEOUT' });
    stall = false;
    await expect(
      runSync(syncConfig(upstream.baseUrl), { store, logger: silentLogger() }),
    ).resolves.toMatchObject({ runId: 2, entries: 20 });
  });

  it('regression: an OPTIONS request dripping forever does not hold the run; its body is just not replayed', async () => {
    const store = tempDatabase();
    const upstream = await fakeDrf({
      entries: makeEntries(5),
      intercept: (req, res) => {
        if (req.method !== 'OPTIONS') return false;
        drip(res, 20);
        return true;
      },
    });
    await expect(
      runSync(syncConfig(upstream.baseUrl, { UPSTREAM_REQUEST_DEADLINE: '300' }), {
        store,
        logger: silentLogger(),
      }),
    ).resolves.toMatchObject({ runId: 1, entries: 5 });
    expect(tableRows(store, 'options_bodies')).toEqual([]);
  });

  it('regression: an OPTIONS body past UPSTREAM_MAX_OPTIONS_BYTES is not stored; the previous one stays', async () => {
    const store = tempDatabase();
    let huge = false;
    const upstream = await fakeDrf({
      entries: makeEntries(5),
      intercept: (req, res) => {
        if (req.method !== 'OPTIONS' || !huge) return false;
        send(res, JSON.stringify({ name: 'x'.repeat(100_000) }));
        return true;
      },
    });
    const settings = syncConfig(upstream.baseUrl, { UPSTREAM_MAX_OPTIONS_BYTES: '10000' });
    await runSync(settings, { store, logger: silentLogger() });
    huge = true;
    upstream.entries.push(makeEntry(99));
    await runSync(settings, { store, logger: silentLogger() });
    expect(tableRows(store, 'options_bodies')).toEqual([{ id: 1, body: OPTIONS_BODY }]);
    expect(tableRows(store, 'runs', 'id, status, options_body_id')).toEqual([
      { id: 1, status: 'succeeded', options_body_id: 1 },
      { id: 2, status: 'succeeded', options_body_id: 1 },
    ]);
  });

  it('regression: 10,000 unknown fields are logged as a count and the first ten names', async () => {
    const store = tempDatabase();
    const extra = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`f${i}`, i]));
    const upstream = await fakeDrf({ entries: [makeEntry(0, extra), makeEntry(1)] });
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
    const logger = createLogger({ level: 'warn', pretty: false, destination: out });
    await runSync(syncConfig(upstream.baseUrl), { store, logger });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.length).toBeLessThan(2_000);
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ unknownFieldCount: 10_000 });
    const stored = JSON.parse(
      String(tableRows(store, 'runs', 'unknown_fields')[0]?.unknown_fields),
    ) as unknown[];
    expect(stored).toHaveLength(100);
  });
});
