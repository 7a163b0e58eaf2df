import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { prepareSnapshot } from '../../src/drf/snapshot.js';
import { buildSnapshotInSlices } from '../../src/http/build-in-slices.js';
import { loadPastSnapshot, PageNotLoaded } from '../../src/http/past-snapshot.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import type { Store } from '../../src/db/store.js';

const TOKEN = 'bounded-server-token-0123456789';

/** Five runs, each after an edit, 30 entries in pages of 8. */
async function history(store: Store) {
  const upstream = await simulatedUpstream({ seed: 5, count: 30 });
  for (let i = 0; i < 5; i++) {
    await sync(store, upstream);
    upstream.data.edit(3);
    await new Promise((r) => setTimeout(r, 5));
  }
  const runs = (await store.listRuns({ limit: 10 })).reverse();
  return { store, runs };
}

/** Sends raw bytes and resolves with what the server answers before it closes the socket. */
function rawRequest(port: number, head: string, body: { bytes: number; trickleMs?: number }) {
  return new Promise<string>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('close', () => resolve(answer));
    socket.on('error', () => undefined);
    socket.write(head);
    if (body.trickleMs) {
      const timer = setInterval(() => socket.write('x'), body.trickleMs);
      socket.on('close', () => clearInterval(timer));
    } else socket.write('x'.repeat(body.bytes));
  });
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('the server bounds what clients make it hold', () => {
    it('a past snapshot built page by page serves the very bytes of one built whole', async () => {
      const { store, runs } = await history(await fresh());
      const run = runs[1];
      if (!run) throw new Error('no run');
      const lazy = (await loadPastSnapshot(store, run, () => undefined)).prepared;
      // Each page comes from the store on first read: load them as the list endpoint does.
      for (let page = 0; page < lazy.numPages; page++) {
        try {
          void lazy.pageTails[page];
        } catch (error) {
          if (!(error instanceof PageNotLoaded)) throw error;
          await error.load();
        }
      }
      const listing = await store.listingAt(run);
      const whole = prepareSnapshot({
        id: String(run.id),
        entries: listing.entries,
        pageSize: run.pageSize ?? 8,
        optionsBody: listing.optionsBody,
        fetchedAt: new Date(run.finishedAt ?? ''),
      });
      expect({ ...lazy, pageTails: [...lazy.pageTails], entryValues: lazy.entryValues.slice() }).toEqual({
        ...whole,
        pageTails: [...whole.pageTails],
        entryValues: [...whole.entryValues],
      });
      expect(lazy.entryValues.slice(8, 16)).toEqual(whole.entryValues.slice(8, 16));
    });

    it('regression: a past snapshot keeps its pages as bytes, not their entries parsed (≈ 3× more)', async () => {
      const { store, runs } = await history(await fresh());
      const run = runs[1];
      if (!run) throw new Error('no run');
      const past = await loadPastSnapshot(store, run, () => undefined);
      const { prepared } = past;
      try {
        void prepared.pageTails[0];
      } catch (error) {
        if (!(error instanceof PageNotLoaded)) throw error;
        await error.loadAll();
      }
      const wire = prepared.pageTails.reduce((sum, tail) => sum + tail.length, 0);
      const ids = 4 * prepared.count;
      // Counted: the bytes, their Buffer-pool share and a few objects; the parsed entries were 3× more.
      expect(past.bytes).toBeGreaterThan(wire + ids);
      expect(past.bytes).toBeLessThan(2 * wire + ids);
      // Entries are parsed again from the page bytes when read: none is held between two pages.
      const first = prepared.entryValues[0];
      expect(prepared.entryValues[8]).not.toEqual(first);
      expect(prepared.entryValues[0]).toEqual(first);
      expect(prepared.entryValues[0]).not.toBe(first);
    });

    it('the current snapshot built in slices is the very snapshot built at once, and swaps in', async () => {
      const { store, runs } = await history(await fresh());
      for (const run of runs) {
        const listing = await store.listingAt(run);
        const whole = prepareSnapshot({
          id: String(run.id),
          entries: listing.entries,
          pageSize: run.pageSize ?? 8,
          optionsBody: listing.optionsBody,
          fetchedAt: new Date(run.finishedAt ?? ''),
        });
        expect(await buildSnapshotInSlices(store, run)).toEqual(whole);
      }
      // No watching: this test swaps by hand (on PostgreSQL the run's NOTIFY would swap it first,
      // whatever the poll interval).
      const mirror = await startMirror(store, { snapshotPollMs: 3_600_000 });
      mirror.snapshots.stopPolling();
      const upstream = await simulatedUpstream({ seed: 6, count: 12 });
      // Another upstream's listing replaces every entry: recorded at once, not held as a drop.
      await sync(store, upstream, { SYNC_CONFIRM_DROP: '0' });
      expect(mirror.snapshots.info?.runId).toBe(5);
      const [first, joined] = [
        mirror.snapshots.refreshInBackground(),
        mirror.snapshots.refreshInBackground(),
      ];
      expect(await first).toBe(true);
      expect(await joined).toBe(true);
      expect(mirror.snapshots.info).toMatchObject({ runId: 6, entries: 12 });
      expect(await mirror.snapshots.refreshInBackground()).toBe(false);
    });

    it('regression: the as_of cache stays within its byte budget, dropping the least recently used', async () => {
      const { store, runs } = await history(await fresh());
      const budget = 40_000;
      const mirror = await startMirror(store, { asOfCacheBytes: budget });
      const seen: number[][] = [];
      for (const run of [...runs.slice(0, 4), runs[0], runs[1]]) {
        if (!run) continue;
        for (const page of [1, 2, 3, 4]) {
          const res = await fetch(`${mirror.url}${LIST_PATH}?page=${page}&as_of=${run.finishedAt ?? ''}`);
          expect(res.status).toBe(200);
          await res.arrayBuffer();
        }
        expect(mirror.snapshots.pastSnapshotBytes).toBeLessThanOrEqual(budget);
        seen.push(mirror.snapshots.pastSnapshotRuns);
      }
      // A run of ~30 entries costs ≈ 12 KB built whole (4 pages of ≈ 1.9 KB, each counted with its
      // Buffer-pool share): three fit, and the newest used is always among them.
      expect(seen.map((held) => held.at(-1))).toEqual([1, 2, 3, 4, 1, 2]);
      expect((await store.latestSucceededRun())?.id).toBe(5);
    });

    it('AS_OF_CACHE_BYTES=0 keeps nothing and still answers', async () => {
      const { store, runs } = await history(await fresh());
      const mirror = await startMirror(store, { asOfCacheBytes: 0 });
      const res = await fetch(`${mirror.url}${LIST_PATH}?page=2&as_of=${runs[0]?.finishedAt ?? ''}`);
      expect(res.status).toBe(200);
      expect(mirror.snapshots.pastSnapshotRuns).toEqual([]);
      expect(mirror.snapshots.pastSnapshotBytes).toBe(0);
    });

    it('regression: the admin route answers 401/403 before reading a large body, and refuses a body over 1 KiB', async () => {
      const store = await fresh();
      const mirror = await startMirror(store, { adminToken: TOKEN }, () =>
        Promise.resolve({ started: true, runId: 1 }),
      );
      const big = 200 * 1024 * 1024;
      const head = (auth: string) =>
        `POST /api/mirror/sync/ HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\n` +
        `Content-Length: ${big}\r\n${auth}Connection: close\r\n\r\n`;
      // Only the first 64 KiB are sent: the answer must come without the rest.
      expect(await rawRequest(mirror.port, head(''), { bytes: 65_536 })).toMatch(/^HTTP\/1\.1 401 /);
      expect(
        await rawRequest(mirror.port, head('Authorization: Bearer wrong-token-wrong-token\r\n'), {
          bytes: 65_536,
        }),
      ).toMatch(/^HTTP\/1\.1 403 /);
      expect(
        await rawRequest(mirror.port, head(`Authorization: Bearer ${TOKEN}\r\n`), { bytes: 65_536 }),
      ).toMatch(/^HTTP\/1\.1 413 /);
      const ok = await fetch(`${mirror.url}/api/mirror/sync/`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      expect(ok.status).toBe(202);
    });

    it("regression: a request trickling its body is cut off after HTTP_REQUEST_TIMEOUT, not Node's 5 minutes", async () => {
      const store = await fresh();
      const mirror = await startMirror(store, { httpRequestTimeoutMs: 500 });
      const answer = await rawRequest(
        mirror.port,
        'POST /api/mirror/runs/ HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100000\r\n\r\n',
        { bytes: 0, trickleMs: 50 },
      );
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    });
  });
});
