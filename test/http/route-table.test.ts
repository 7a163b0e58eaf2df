import { describe, expect, it } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { buildPageHistory, UUID } from '../web/page-history.js';

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

// Headers that differ between any two answers whoever gives them.
const VARYING = new Set(['date', 'connection', 'keep-alive', 'content-length']);

async function ask(url: string, method: string, adminToken?: string): Promise<Answer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (adminToken) headers.authorization = `Bearer ${adminToken}`;
  const res = await fetch(url, { method, headers });
  const answered: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!VARYING.has(name)) answered[name] = value;
  });
  return { status: res.status, headers: answered, body: await res.text() };
}

// A path of each pattern that exists in the page history (run 1, a listed coworker).
const concrete = (pattern: string): string =>
  pattern.replace(':uuid', UUID.jose).replace(':id', '1').replace('*', 'x');

const JSON_TYPE = 'application/json; charset=utf-8';
const HTML = 'text/html; charset=utf-8';
const CSV = 'text/csv; charset=utf-8; header=present';

/**
 * What each route answers for its concrete path with the admin token: its own status and content
 * type. A route added without a row here fails the test, as one answering 500 (or anything but
 * its own answer) does.
 */
const EXPECTED: Record<string, [status: number, contentType: string]> = {
  '/healthz': [200, JSON_TYPE],
  '/readyz': [200, JSON_TYPE],
  '/metrics': [200, 'text/plain; version=0.0.4; charset=utf-8'],
  '/api/mirror/runs/': [200, JSON_TYPE],
  '/api/mirror/runs/:id/': [200, JSON_TYPE],
  '/api/mirror/coworkers/': [200, JSON_TYPE],
  '/api/mirror/coworkers/:uuid/': [200, JSON_TYPE],
  '/api/mirror/coworkers/:uuid/history/': [200, JSON_TYPE],
  '/api/mirror/changes/': [200, JSON_TYPE],
  '/api/mirror/changes/export.csv': [200, CSV],
  '/api/mirror/changes/export.jsonl': [200, 'application/jsonl; charset=utf-8'],
  // The trigger stand-in says a run is in flight: the route's own refusal.
  'POST /api/mirror/sync/': [409, JSON_TYPE],
  '/api/mirror/deliveries/': [200, JSON_TYPE],
  // The page history holds no delivery 1: the route's own 404, in JSON, not Django's.
  '/api/mirror/deliveries/:id/': [404, JSON_TYPE],
  'POST /api/mirror/deliveries/:id/redeliver': [404, JSON_TYPE],
  '/': [200, HTML],
  '/changes/': [200, HTML],
  '/coworkers/': [200, HTML],
  '/coworkers/:uuid/': [200, HTML],
  '/team/': [200, HTML],
  '/runs/': [200, HTML],
  '/runs/:id/': [200, HTML],
  '/api/mirror/changes.atom': [200, 'application/atom+xml; charset=utf-8'],
  '/api/mirror/changes.csv': [200, CSV],
};

/** The row of a route: POST routes by method and pattern, assets by their kind. */
function expected(method: string, url: string): [number, string] | undefined {
  const asset = /^\/api\/mirror\/static\/[\w.-]+\.(css|js|svg)$/.exec(url);
  if (asset) {
    const types = {
      css: 'text/css; charset=utf-8',
      js: 'text/javascript; charset=utf-8',
      svg: 'image/svg+xml',
    };
    return [200, types[asset[1] as keyof typeof types]];
  }
  return method === 'POST' ? EXPECTED[`POST ${url}`] : EXPECTED[url];
}

describe('one route table', () => {
  it('every route registered in Fastify answers its own status and content type over a real socket', async () => {
    const history = await buildPageHistory();
    const adminToken = 't'.repeat(24);
    const mirror = await startMirror(history.store, { adminToken }, () =>
      Promise.resolve({ started: false, reason: 'running' } as never),
    );
    const routes = mirror.routes.routes.flatMap((r) => r.methods.map((method) => [method, r.url] as const));
    expect(routes.length).toBeGreaterThan(20);
    for (const [method, url] of routes) {
      const django404 = await ask(`${mirror.url}/no-such-path${url}`, method);
      expect(django404.status, `${method} /no-such-path${url}`).toBe(404);
      const answer = await ask(mirror.url + concrete(url), method, adminToken);
      expect(answer, `${method} ${url} got Django's 404`).not.toEqual(django404);
      const want = expected(method, url);
      expect(want, `${method} ${url} has no row in EXPECTED: add what it answers`).toBeDefined();
      expect([answer.status, answer.headers['content-type']], `${method} ${url}`).toEqual(want);
    }
  });

  it('a path is Fastify’s exactly when a registered route matches it, whatever its pattern', async () => {
    const history = await buildPageHistory();
    const mirror = await startMirror(history.store);
    const cases: [string, boolean][] = [
      ['/', true],
      ['/changes/', true],
      ['/coworkers/', true],
      ['/coworkers/abc/', true],
      ['/team/', true],
      ['/runs/', true],
      ['/runs/12/', true],
      ['/healthz', true],
      ['/api/mirror/runs/12/', true],
      ['/changes', false],
      ['/runs/12', false],
      ['/coworkers/a/b/', false],
      ['/api/mirror/nope/', false],
      ['/api/model/team-block-coworker/list/', false],
      ['/nope', false],
    ];
    for (const [path, routed] of cases) expect(mirror.routes.has(path), path).toBe(routed);
  });
});
