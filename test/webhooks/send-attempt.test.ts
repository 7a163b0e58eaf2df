import { getEventListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { sendAttempt } from '../../src/webhooks/send-attempt.js';

const started: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of started.splice(0).reverse()) await stop();
});

async function receiver(status: number): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(status).end('seen'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  started.push(() => new Promise((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

/** A loopback port that was just free and is closed again: connecting to it is refused. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('a webhook attempt', () => {
  // The worker's signal lives as long as the server: a listener left on it per delivery would hold
  // every delivery's state until shutdown.
  it("leaves no listener on the worker's signal, answered or refused", async () => {
    const dispatcher = new Agent();
    started.push(() => dispatcher.close());
    const url = await receiver(204);
    const shutdown = new AbortController();
    const options = { timeoutMs: 60_000, signer: null, signal: shutdown.signal };
    for (let i = 0; i < 10; i++) {
      const result = await sendAttempt(dispatcher, { url, webhookId: `msg_${i}`, body: '{}' }, options);
      expect(result.ok).toBe(true);
    }
    const refused = await sendAttempt(
      dispatcher,
      { url: `http://127.0.0.1:${await closedPort()}/hook`, webhookId: 'msg_x', body: '{}' },
      options,
    );
    expect(refused.errorCode).toBe('REFUSED');
    expect(getEventListeners(shutdown.signal, 'abort')).toHaveLength(0);
  });

  it("an aborted worker's signal ends the attempt unanswered, not as a timeout", async () => {
    const dispatcher = new Agent();
    started.push(() => dispatcher.close());
    const url = await receiver(204);
    const shutdown = new AbortController();
    shutdown.abort(new Error('shutting down'));
    const result = await sendAttempt(
      dispatcher,
      { url, webhookId: 'msg_1', body: '{}' },
      { timeoutMs: 60_000, signer: null, signal: shutdown.signal },
    );
    expect(result).toMatchObject({ ok: false, httpStatus: null, errorCode: 'NETWORK' });
  });
});
