import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface ChatRequest {
  method: string;
  path: string;
  contentType: string;
  body: string;
  json: unknown;
}

/** What a service says of a request: null when it accepts it, else why it answers 400. */
export type Contract = (request: ChatRequest) => string | null;

export interface StandIn {
  /** The base URL; a target is `${url}/<path>`. */
  url: string;
  requests: ChatRequest[];
  /** How the next requests are answered once the contract holds (default 200 "ok"). */
  answer: (status: number, headers?: Record<string, string>, body?: string) => void;
}

/**
 * A loopback stand-in for a chat service: it checks each request against the contract the
 * service documents and answers 400 with the reason, as the service would, or the scripted answer.
 */
export async function chatStandIn(contract: Contract): Promise<StandIn> {
  const requests: ChatRequest[] = [];
  let scripted = { status: 200, headers: {} as Record<string, string>, body: 'ok' };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown = null;
      try {
        json = JSON.parse(body);
      } catch {
        json = null;
      }
      const request = {
        method: req.method ?? '',
        path: req.url ?? '',
        contentType: req.headers['content-type'] ?? '',
        body,
        json,
      };
      requests.push(request);
      const problem = request.method !== 'POST' ? 'method not allowed' : contract(request);
      if (problem !== null) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(problem);
        return;
      }
      res.writeHead(scripted.status, scripted.headers).end(scripted.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    answer: (status, headers = {}, body = '') => {
      scripted = { status, headers, body };
    },
  };
}
