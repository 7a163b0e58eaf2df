import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parse } from 'lossless-json';
import { describe, expect, it, onTestFinished } from 'vitest';
import { validatePage } from '../../src/upstream/validate.js';
import { sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const BODY = '{"count":1e400,"next":null,"previous":null,"results":[]}';

/** A real upstream answering every page with BODY. */
async function rawUpstream(): Promise<{ url: string }> {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'Content-Type': 'application/json' }).end(BODY);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

// Regression: `count: 1e400` was reported as "received null" (JSON.stringify of Infinity).
describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('a count past the range of a double', () => {
    it('a sync fails naming the number as out of range, never "null"', async () => {
      const store = await fresh();
      const failure = await sync(store, await rawUpstream()).catch((error: unknown) => error as Error);
      expect(failure).toBeInstanceOf(Error);
      expect((failure as Error).message).toBe(
        'page 1: envelope field "count": expected a finite number, received a number too large for a double (read as Infinity)',
      );
    });

    it('with a parser that keeps numbers as their text, the message quotes the text', () => {
      expect(() => validatePage(parse(BODY), 1)).toThrow(
        /^page 1: envelope field "count": expected number, received 1e400$/,
      );
    });
  });
});
