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

async function ask(url: string, method: string): Promise<Answer> {
  const res = await fetch(url, { method, headers: { accept: 'application/json' } });
  const headers: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!VARYING.has(name)) headers[name] = value;
  });
  return { status: res.status, headers, body: await res.text() };
}

// A path of each pattern that exists in the page history (run 1, a listed coworker).
const concrete = (pattern: string): string =>
  pattern.replace(':uuid', UUID.jose).replace(':id', '1').replace('*', 'x');

describe('one route table (issue 19)', () => {
  it('every route registered in Fastify answers over a real socket, none with Django’s 404', async () => {
    const history = await buildPageHistory();
    const mirror = await startMirror(history.store, { adminToken: 't'.repeat(24) }, () =>
      Promise.resolve({ started: false, reason: 'running' } as never),
    );
    const routes = mirror.routes.routes.flatMap((r) => r.methods.map((method) => [method, r.url] as const));
    expect(routes.length).toBeGreaterThan(20);
    for (const [method, url] of routes) {
      const django404 = await ask(`${mirror.url}/no-such-path${url}`, method);
      expect(django404.status, `${method} /no-such-path${url}`).toBe(404);
      const answer = await ask(mirror.url + concrete(url), method);
      expect(answer, `${method} ${url} got Django's 404`).not.toEqual(django404);
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
