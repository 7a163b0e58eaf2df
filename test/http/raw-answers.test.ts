import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { syncConfig } from '../helpers/config.js';
import { startMirror } from '../helpers/mirror-server.js';
import { makeEntry, startFakeDrf } from '../upstream/fake-drf.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';
import type { Store } from '../../src/db/store.js';

/** A mirror (the whole server, Fastify beside it) whose first page is about 10 MB. */
async function mirrorOfBigPage(store: Store) {
  const entries = Array.from({ length: 8 }, (_, i) => makeEntry(i, { notes: 'x'.repeat(1_250_000) }));
  const upstream = await startFakeDrf({ entries });
  onTestFinished(() => upstream.close());
  await runSync(syncConfig(upstream.baseUrl, { SYNC_MAX_ENTRY_BYTES: String(2 * 1024 * 1024) }), {
    store,
    logger: silentLogger(),
  });
  return startMirror(store);
}

/** Sends `raw` on its own connection; the client reads nothing for a moment, then all until close. */
function exchange(port: number, raw: string): Promise<{ head: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.write(raw, 'latin1'));
    socket.pause();
    // A slow reader: what the server has not handed to the kernel by now is still in its buffers.
    setTimeout(() => socket.resume(), 300);
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      resolve({ head: all.subarray(0, end).toString('latin1'), body: all.subarray(end + 4) });
    });
  });
}

const contentLength = (head: string): number => Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1]);

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('answers written raw on the socket', () => {
    it('regression: a request Node refuses (HTTP/1.2) gets its whole 10 MB page, not a cut one', async () => {
      const mirror = await mirrorOfBigPage(await fresh());
      const { head, body } = await exchange(
        mirror.port,
        `GET ${LIST_PATH} HTTP/1.2\r\nHost: 127.0.0.1\r\n\r\n`,
      );
      expect(head).toMatch(/^HTTP\/1\.2 200 OK\r\n/);
      expect(contentLength(head)).toBeGreaterThan(10_000_000);
      // Fastify's default clientError handler destroyed the socket under the raw answer.
      expect(body.length).toBe(contentLength(head));
    });

    it('an HTTP/1.0 request gets an HTTP/1.0 status line, its whole page, and the connection closes', async () => {
      const mirror = await mirrorOfBigPage(await fresh());
      const viaOne = await exchange(
        mirror.port,
        `GET ${LIST_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`,
      );
      const { head, body } = await exchange(
        mirror.port,
        `GET ${LIST_PATH} HTTP/1.0\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\n`,
      );
      // As gunicorn: the request's version, and one request per connection even when asked to keep it.
      expect(head).toMatch(/^HTTP\/1\.0 200 OK\r\n/);
      expect(head).toMatch(/\r\nConnection: close(\r\n|$)/);
      expect(body.length).toBe(contentLength(head));
      expect(body.equals(viaOne.body)).toBe(true);
      const head10 = await exchange(mirror.port, `HEAD ${LIST_PATH} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n`);
      expect(head10.head).toMatch(/^HTTP\/1\.0 200 OK\r\n/);
      expect(contentLength(head10.head)).toBe(body.length);
      expect(head10.body.length).toBe(0);
    });
  });
});
