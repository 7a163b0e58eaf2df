import Fastify, { type FastifyBaseLogger } from 'fastify';
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { registerErrorHandlers } from '../../src/http/error-handler.js';
import { createLogger } from '../../src/logger.js';
import { MemoryLog } from '../fuzz/memory-log.js';
import { buildServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { defaultServerConfig, startMirror } from '../helpers/mirror-server.js';
import { tempDatabase } from '../helpers/temp-db.js';

describe('server set-up for real clients', () => {
  it('regression: closing does not wait forever for a client that stopped reading its answers', async () => {
    const server = await buildServer({
      store: tempDatabase(),
      logger: silentLogger(),
      config: { server: defaultServerConfig },
      closeGraceMs: 50,
    });
    const url = new URL(await server.listen(0, '127.0.0.1'));
    const socket = connect(Number(url.port), '127.0.0.1');
    onTestFinished(() => void socket.destroy());
    // Thousands of pipelined requests, never read: the answers fill both socket buffers and the
    // connection stays busy (before the fix, close waited on it until the test timed out).
    socket.pause();
    const request = 'GET /api/model/team-block-coworker/list/?page=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
    socket.write(request.repeat(20_000));
    let answered = 0;
    server.server.on('request', () => void answered++);
    await vi.waitFor(() => expect(answered).toBeGreaterThan(100));
    await server.close();
    // The connection was cut: read to its end, the client sees it closed.
    const closed = new Promise((resolve) => socket.once('close', resolve));
    socket.on('error', () => undefined);
    socket.resume();
    await closed;
  });

  it('keeps idle connections 65 s by default, and receives a request within seconds', async () => {
    const mirror = await startMirror(tempDatabase());
    expect(mirror.server.keepAliveTimeout).toBe(65_000);
    expect(mirror.server.headersTimeout).toBe(10_000);
    expect(mirror.server.requestTimeout).toBe(30_000);
  });

  it('takes KEEP_ALIVE_TIMEOUT and HTTP_REQUEST_TIMEOUT from its options', async () => {
    const mirror = await startMirror(tempDatabase(), {
      keepAliveTimeoutMs: 120_000,
      httpRequestTimeoutMs: 5_000,
    });
    expect(mirror.server.keepAliveTimeout).toBe(120_000);
    expect(mirror.server.requestTimeout).toBe(5_000);
    expect(mirror.server.headersTimeout).toBe(5_000);
  });

  it('reuses a keep-alive connection idle for longer than the headers timeout (a proxy gets no 502)', async () => {
    const mirror = await startMirror(tempDatabase(), { httpRequestTimeoutMs: 1_000 });
    const socket = connect(mirror.port, '127.0.0.1');
    onTestFinished(() => void socket.destroy());
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    const answers = () => received.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0;
    const ask = () => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    ask();
    await vi.waitFor(() => expect(answers()).toBe(1));
    // Idle well past the 1 s headers timeout and a few of Node's checks of it.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(socket.destroyed).toBe(false);
    ask();
    await vi.waitFor(() => expect(answers()).toBe(2));
  });
});

describe('/metrics', () => {
  it('is public without METRICS_TOKEN', async () => {
    const mirror = await startMirror(tempDatabase());
    const res = await fetch(`${mirror.url}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('coworker_mirror_runs');
  });

  it('answers only the bearer token when METRICS_TOKEN is set', async () => {
    const token = 'metrics-token-0123456789';
    const mirror = await startMirror(tempDatabase(), { metricsToken: token });
    const none = await fetch(`${mirror.url}/metrics`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({ detail: 'Send Authorization: Bearer <METRICS_TOKEN>.' });
    const wrong = await fetch(`${mirror.url}/metrics`, { headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);
    const right = await fetch(`${mirror.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(right.status).toBe(200);
    expect(await right.text()).toContain('coworker_mirror_runs');
  });
});

/** A bare Fastify app with the server's error handlers, logging into memory. */
function appWithErrorHandlers() {
  const log = new MemoryLog();
  const loggerInstance: FastifyBaseLogger = createLogger({ level: 'info', pretty: false, destination: log });
  const app = Fastify({ loggerInstance });
  registerErrorHandlers(app);
  return { app, log };
}

describe('the Fastify side error handler', () => {
  it('logs an unforeseen failure at error level and answers a 500 that names no internals', async () => {
    const { app, log } = appWithErrorHandlers();
    app.get('/boom', () => {
      throw new Error('secret internals');
    });
    const res = await app.inject({ method: 'GET', url: '/boom' });
    await app.close();
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ detail: 'Internal server error.' });
    const errors = log.errors();
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ msg: 'request failed', url: '/boom', method: 'GET' });
  });

  it('answers a client error with its status and message, logged at info', async () => {
    const { app, log } = appWithErrorHandlers();
    app.get('/refuse', () => {
      throw Object.assign(new Error('bad input'), { statusCode: 400 });
    });
    const res = await app.inject({ method: 'GET', url: '/refuse' });
    await app.close();
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ detail: 'bad input' });
    expect(log.errors()).toEqual([]);
    expect(log.lines().some((l) => l.msg === 'request refused')).toBe(true);
  });
});
