import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../src/logger.js';
import {
  createUpstreamClient,
  type UpstreamClient,
  type UpstreamClientOptions,
} from '../../src/upstream/client.js';
import { MirrorError } from '../../src/errors.js';

export interface RawServer {
  url: string;
  hits: number;
  close(): Promise<void>;
}

/** A bare node:http server on 127.0.0.1:0; `hits` counts requests received. */
export async function startRawServer(
  handler: (req: IncomingMessage, res: ServerResponse, hit: number) => void,
): Promise<RawServer> {
  const state: RawServer = { url: '', hits: 0, close: () => Promise.resolve() };
  const server = createServer((req, res) => handler(req, res, ++state.hits));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((err) => (err ? reject(err) : resolve()));
    });
  return state;
}

export interface TestClient extends UpstreamClient {
  /** Every backoff the client asked to sleep, in order. */
  delays: number[];
}

/** A client whose sleeps are recorded and return at once, so retries cost no wall time. */
export function testClient(baseUrl: string, overrides: Partial<UpstreamClientOptions> = {}): TestClient {
  const delays: number[] = [];
  const client = createUpstreamClient({
    baseUrl,
    userAgent: 'coworker-mirror/0.0.0-test',
    logger: silentLogger(),
    baseDelayMs: 100,
    maxDelayMs: 1000,
    maxRetryAfterMs: 10_000,
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
    ...overrides,
  });
  return { ...client, delays };
}

/** Runs `action`, expecting a MirrorError; returns it for whole-object assertions. */
export async function catchMirrorError(action: () => Promise<unknown>): Promise<MirrorError> {
  try {
    await action();
  } catch (error) {
    if (error instanceof MirrorError) return error;
    throw error;
  }
  throw new Error('expected a MirrorError, but the call succeeded');
}
