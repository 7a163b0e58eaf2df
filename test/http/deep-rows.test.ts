import type { ServerResponse } from 'node:http';
import { syncConfig } from '../helpers/config.js';
import { defaultServerConfig } from '../helpers/mirror-server.js';
import { describe, expect, it, onTestFinished } from 'vitest';
import { pyJsonDumps, type JsonValue } from '../../src/drf/python-json.js';
import { buildServer } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { canonicalJson, stringifyJson } from '../../src/json/safe-json.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { makeEntry, startFakeDrf } from '../upstream/fake-drf.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const DEPTH = 50_000;
const deepText = (leaf: string) => '['.repeat(DEPTH) + leaf + ']'.repeat(DEPTH);

function send(res: ServerResponse, body: string): void {
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

describe.each(STORE_KINDS)('on %s', (kind) => {
  const fresh = storeMaker(kind);

  describe('no stored row can stop the server', () => {
    it('the serializers are iterative: 50,000 levels in, the same bytes as the recursive forms would give', () => {
      const value = JSON.parse(deepText('{"b":1,"a":[true,null,"x"]}')) as JsonValue;
      const compact = pyJsonDumps(value);
      expect(compact).toBe(deepText('{"b":1,"a":[true,null,"x"]}'));
      const indented = JSON.parse('['.repeat(2000) + '1' + ']'.repeat(2000)) as JsonValue;
      expect(pyJsonDumps(indented, 1).split('\n')).toHaveLength(4001);
      expect(stringifyJson(value)).toBe(compact);
      expect(canonicalJson(compact)).toBe(deepText('{"a":[true,null,"x"],"b":1}'));
      // Shallow values: exactly JSON.stringify and the recursive Python form.
      const shallow = { z: [1, 2.5, 1e-7, { y: 'é\u2028' }], a: {} };
      expect(stringifyJson(shallow)).toBe(JSON.stringify(shallow));
      expect(pyJsonDumps(shallow, 4)).toBe(
        '{\n    "z": [\n        1,\n        2.5,\n        1e-07,\n        {\n            "y": "é\\u2028"\n        }\n    ],\n    "a": {}\n}',
      );
    });

    it('regression: a row stored before entry depth was bounded is served, time-travelled, rendered and diffed', async () => {
      const store = await fresh();
      let leaf = '1';
      const upstream = await startFakeDrf({
        intercept: (req, res) => {
          if (req.method !== 'GET') return false;
          const entry = JSON.stringify(makeEntry(0)).slice(0, -1) + `,"extra":${deepText(leaf)}}`;
          send(res, `{"count":1,"next":null,"previous":null,"results":[${entry}]}`);
          return true;
        },
      });
      onTestFinished(() => upstream.close());
      // As an older version stored it: no depth bound.
      const config = syncConfig(upstream.baseUrl, { SYNC_MAX_ENTRY_BYTES: '10000000' });
      // Deeper than SYNC_MAX_ENTRY_DEPTH may be set: as if unbounded.
      const settings = { ...config, sync: { ...config.sync, maxEntryDepth: 1_000_000 } };
      await runSync(settings, { store, logger: silentLogger() });
      const firstRunAt = new Date().toISOString();
      leaf = '2';
      await expect(runSync(settings, { store, logger: silentLogger() })).resolves.toMatchObject({
        counts: { changed: 1 },
      });

      const server = await buildServer({
        store,
        logger: silentLogger(),
        config: { server: { ...defaultServerConfig, snapshotPollMs: 1000 } },
      });
      onTestFinished(() => server.close());
      const url = await server.listen(0, '127.0.0.1');
      const now = await fetch(`${url}${LIST_PATH}`);
      expect(now.status).toBe(200);
      expect(await now.text()).toContain(deepText('2'));
      const past = await fetch(`${url}${LIST_PATH}?as_of=${firstRunAt}`);
      expect(past.status).toBe(200);
      expect(await past.text()).toContain(deepText('1'));
      // Indented 2 spaces a level, 50,000 levels is gigabytes of text: that one answer may fail,
      // but it fails alone and the server answers the next request.
      const indented = await fetch(`${url}${LIST_PATH}`, {
        headers: { accept: 'application/json; indent=2' },
      });
      // Not read: cancelling ends the connection, so closing the server waits for no giant body.
      await indented.body?.cancel();
      const html = await fetch(`${url}${LIST_PATH}`, { headers: { accept: 'text/html' } });
      expect(html.status).toBe(200);
      await html.arrayBuffer();
      const again = await fetch(`${url}${LIST_PATH}`);
      expect(again.status).toBe(200);
      await again.arrayBuffer();
      // The pages read names with SQLite's JSON functions, whose parser stops at 1,000 levels: the
      // deep row must not fail them (it failed the coworker directory, and with it the server's start).
      for (const page of ['/', '/changes/', '/coworkers/', '/team/', '/api/mirror/changes.csv']) {
        const res = await fetch(`${url}${page}`);
        expect(res.status, page).toBe(200);
        // Read whole: an unread answer larger than the socket buffers kept the server's close waiting.
        await res.arrayBuffer();
      }
    });
  });
});
