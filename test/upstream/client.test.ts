import { getEventListeners } from 'node:events';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { catchMirrorError, startRawServer, testClient, type RawServer, type TestClient } from './harness.js';

const OK_BODY = '{"count":0,"next":null,"previous":null,"results":[]}';

function sendOk(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(OK_BODY) });
  res.end(OK_BODY);
}

function sendStatus(res: ServerResponse, status: number, headers: Record<string, string> = {}): void {
  const body = `{"detail":"status ${status}"}`;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body);
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function server(handler: Parameters<typeof startRawServer>[0]): Promise<RawServer> {
  const started = await startRawServer(handler);
  cleanups.push(() => started.close());
  return started;
}

function client(baseUrl: string, overrides: Parameters<typeof testClient>[1] = {}): TestClient {
  const created = testClient(baseUrl, overrides);
  cleanups.push(() => created.close());
  return created;
}

describe('upstream client', () => {
  it('sends User-Agent and Accept: application/json and returns status, text and parsed body', async () => {
    let seen: Record<string, string | string[] | undefined> = {};
    const upstream = await server((req, res) => {
      seen = req.headers;
      sendOk(res);
    });
    const result = await client(upstream.url).getJson('/x');
    expect(result).toEqual({
      status: 200,
      text: OK_BODY,
      byteLength: Buffer.byteLength(OK_BODY),
      body: JSON.parse(OK_BODY) as unknown,
    });
    expect(seen['user-agent']).toBe('coworker-mirror/0.0.0-test');
    expect(seen.accept).toBe('application/json');
  });

  it('getText sends OPTIONS and returns the body verbatim', async () => {
    let method = '';
    const upstream = await server((req, res) => {
      method = req.method ?? '';
      res.end('{"name":"x"}');
    });
    expect(await client(upstream.url).getText('/x', 'OPTIONS')).toEqual({
      status: 200,
      text: '{"name":"x"}',
      byteLength: 12,
    });
    expect(method).toBe('OPTIONS');
  });

  it.each([500, 502, 503, 429])(
    'retries %i with bounded exponential backoff, then succeeds',
    async (status) => {
      const upstream = await server((_req, res, hit) => (hit <= 2 ? sendStatus(res, status) : sendOk(res)));
      // random → just under 1 pins each delay to the top of its jitter window.
      const c = client(upstream.url, { baseDelayMs: 100, maxDelayMs: 150, random: () => 0.999 });
      await expect(c.getJson('/x')).resolves.toMatchObject({ status: 200 });
      expect(upstream.hits).toBe(3);
      expect(c.delays).toEqual([99, 149]);
    },
  );

  it('gives up after maxAttempts on a persistent 503, naming status, url and attempts', async () => {
    const upstream = await server((_req, res) => sendStatus(res, 503));
    const c = client(upstream.url, { maxAttempts: 3, random: () => 0.5 });
    const error = await catchMirrorError(() => c.getJson('/x', { page: 7 }));
    expect(error.code).toBe('UPSTREAM_HTTP_STATUS');
    expect(error.details).toEqual({ url: `${upstream.url}/x`, attempts: 3, status: 503, page: 7 });
    expect(error.message).toContain('status 503');
    expect(upstream.hits).toBe(3);
    expect(c.delays).toHaveLength(2);
    for (const [i, delay] of c.delays.entries()) expect(delay).toBeLessThanOrEqual(100 * 2 ** i);
  });

  it('honours Retry-After in seconds', async () => {
    const upstream = await server((_req, res, hit) =>
      hit === 1 ? sendStatus(res, 429, { 'retry-after': '3' }) : sendOk(res),
    );
    const c = client(upstream.url, { random: () => 0 });
    await c.getJson('/x');
    expect(c.delays).toEqual([3000]);
  });

  it('honours Retry-After as an HTTP date', async () => {
    const now = Date.parse('2026-11-21T15:00:00Z');
    const upstream = await server((_req, res, hit) =>
      hit === 1 ? sendStatus(res, 503, { 'retry-after': new Date(now + 4000).toUTCString() }) : sendOk(res),
    );
    const c = client(upstream.url, { random: () => 0, now: () => now });
    await c.getJson('/x');
    expect(c.delays).toEqual([4000]);
  });

  it('fails at once, saying why, when Retry-After is longer than the cap', async () => {
    const upstream = await server((_req, res) => sendStatus(res, 429, { 'retry-after': '3600' }));
    const c = client(upstream.url, { maxRetryAfterMs: 60_000 });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_HTTP_STATUS');
    expect(error.message).toMatch(/Retry-After of 3600 s, longer than the 60 s cap; failing the run/);
    expect(error.details).toMatchObject({ status: 429, attempts: 1, retryAfterMs: 3_600_000 });
    expect(c.delays).toEqual([]);
    expect(upstream.hits).toBe(1);
  });

  it.each([400, 403, 404, 410])('does not retry %i and quotes the body', async (status) => {
    const upstream = await server((_req, res) => sendStatus(res, status));
    const c = client(upstream.url);
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_HTTP_STATUS');
    expect(error.details).toEqual({ url: `${upstream.url}/x`, attempts: 1, status });
    expect(error.message).toContain(`status ${status}`);
    expect(error.message).toContain('\\"detail\\":\\"status');
    expect(upstream.hits).toBe(1);
  });

  it('retries a truncated body and succeeds when the next answer is whole', async () => {
    const upstream = await server((_req, res, hit) => {
      if (hit > 1) return sendOk(res);
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"count":');
      setImmediate(() => res.socket?.destroy());
    });
    const c = client(upstream.url);
    await expect(c.getJson('/x')).resolves.toMatchObject({ body: { count: 0 } });
    expect(upstream.hits).toBe(2);
  });

  it('fails with UPSTREAM_NETWORK after maxAttempts of truncated bodies', async () => {
    const upstream = await server((_req, res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('{"count":');
      setImmediate(() => res.socket?.destroy());
    });
    const c = client(upstream.url, { maxAttempts: 3 });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_NETWORK');
    expect(error.details).toEqual({ url: `${upstream.url}/x`, attempts: 3 });
    expect(error.cause).toBeInstanceOf(Error);
    expect(upstream.hits).toBe(3);
  });

  it('fails with UPSTREAM_NETWORK after maxAttempts of connection resets', async () => {
    const upstream = await server((req) => req.socket.destroy());
    const c = client(upstream.url, { maxAttempts: 2 });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_NETWORK');
    expect(error.details.attempts).toBe(2);
    expect(upstream.hits).toBe(2);
  });

  it('fails with UPSTREAM_NETWORK when the connection is refused', async () => {
    const closed = await startRawServer(() => undefined);
    await closed.close();
    const c = client(closed.url, { maxAttempts: 2 });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_NETWORK');
    expect(error.message).toContain('ECONNREFUSED');
    expect(c.delays).toHaveLength(1);
  });

  it('times out waiting for headers with UPSTREAM_TIMEOUT, retrying up to maxAttempts', async () => {
    const upstream = await server(() => undefined); // never answers
    const c = client(upstream.url, { headersTimeoutMs: 100, maxAttempts: 2 });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_TIMEOUT');
    expect(error.details).toEqual({ url: `${upstream.url}/x`, attempts: 2 });
    expect(upstream.hits).toBe(2);
  });

  it('refuses a body whose Content-Length is over the cap, without retrying', async () => {
    const upstream = await server((_req, res) => {
      res.writeHead(200, { 'content-length': String(5000) });
      res.end('x'.repeat(5000));
    });
    const c = client(upstream.url, { maxBodyBytes: 4096 });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_BODY_TOO_LARGE');
    expect(error.details).toEqual({ url: `${upstream.url}/x`, attempts: 1, status: 200 });
    expect(upstream.hits).toBe(1);
  });

  it('stops reading an endless chunked body as soon as it passes the cap', async () => {
    let written = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const limit = 64 * 1024 * 1024;
    const upstream = await server((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const pump = (): void => {
        while (written < limit && !res.destroyed) {
          written += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      pump();
    });
    const c = client(upstream.url, { maxBodyBytes: 256 * 1024 });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('UPSTREAM_BODY_TOO_LARGE');
    expect(written).toBeLessThan(limit);
  });

  it.each([
    ['not JSON at all', '<html>oops</html>'],
    ['truncated JSON', '{"count":1,'],
  ])('reports %s as UPSTREAM_INVALID_JSON with an excerpt, without retrying', async (_label, body) => {
    const upstream = await server((_req, res) => res.end(body));
    const c = client(upstream.url);
    const error = await catchMirrorError(() => c.getJson('/x', { page: 2 }));
    expect(error.code).toBe('UPSTREAM_INVALID_JSON');
    expect(error.details).toEqual({ url: `${upstream.url}/x`, attempts: 1, status: 200, page: 2 });
    expect(error.message).toContain(JSON.stringify(body));
    expect(upstream.hits).toBe(1);
  });

  it('reports a body that is not UTF-8 as UPSTREAM_INVALID_JSON', async () => {
    const upstream = await server((_req, res) => res.end(Buffer.from([0x22, 0xff, 0x22])));
    const error = await catchMirrorError(() => client(upstream.url).getJson('/x'));
    expect(error.code).toBe('UPSTREAM_INVALID_JSON');
    expect(error.message).toContain('not valid UTF-8');
  });

  it('an aborted signal cancels a backoff sleep with RUN_ABORTED', async () => {
    const upstream = await server((_req, res) => sendStatus(res, 503));
    const controller = new AbortController();
    const c = client(upstream.url, {
      signal: controller.signal,
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(signal.reason as Error));
          controller.abort(new Error('shutdown'));
        }),
    });
    const error = await catchMirrorError(() => c.getJson('/x'));
    expect(error.code).toBe('RUN_ABORTED');
    expect(upstream.hits).toBe(1);
  });

  it('an aborted per-call signal cancels a request in flight with RUN_ABORTED', async () => {
    const controller = new AbortController();
    const upstream = await server(() => controller.abort());
    const error = await catchMirrorError(() =>
      client(upstream.url).getJson('/x', { signal: controller.signal }),
    );
    expect(error.code).toBe('RUN_ABORTED');
    expect(upstream.hits).toBe(1);
  });

  it("the client's own signal, aborted mid-request, cancels a call that has a signal of its own", async () => {
    const own = new AbortController();
    const upstream = await server(() => own.abort(new Error('shutdown')));
    const call = new AbortController();
    const error = await catchMirrorError(() =>
      client(upstream.url, { signal: own.signal }).getJson('/x', { signal: call.signal }),
    );
    expect(error.code).toBe('RUN_ABORTED');
    expect(upstream.hits).toBe(1);
  });

  it('an already aborted signal sends nothing', async () => {
    const upstream = await server((_req, res) => sendOk(res));
    const call = new AbortController();
    call.abort(new Error('stopped before'));
    const own = new AbortController();
    const error = await catchMirrorError(() =>
      client(upstream.url, { signal: own.signal }).getJson('/x', { signal: call.signal }),
    );
    expect(error.code).toBe('RUN_ABORTED');
    expect(upstream.hits).toBe(0);
  });

  // A sync's signals live as long as its run: a listener left on them per request (or per retry)
  // would hold every request's state until the run ends.
  it('leaves no listener on the signals it was given, after answers, retries and failures', async () => {
    let hits = 0;
    const upstream = await server((_req, res) => (++hits % 3 === 0 ? sendOk(res) : sendStatus(res, 503)));
    const own = new AbortController();
    const call = new AbortController();
    const c = client(upstream.url, { signal: own.signal });
    for (let i = 0; i < 20; i++) await c.getJson('/x', { signal: call.signal });
    const failing = client(upstream.url, { signal: own.signal, maxAttempts: 1 });
    await catchMirrorError(() => failing.getJson('/x', { signal: call.signal }));
    expect(getEventListeners(own.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(call.signal, 'abort')).toHaveLength(0);
    expect(hits).toBeGreaterThanOrEqual(61);
  });
});
