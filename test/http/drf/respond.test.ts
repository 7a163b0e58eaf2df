import { describe, expect, it } from 'vitest';
import { MirrorError } from '../../../src/errors.js';
import {
  isListPath,
  respondDjangoNotFound,
  respondList,
  type DrfOptions,
  type DrfRequest,
} from '../../../src/drf/respond.js';
import { prepareSnapshot } from '../../../src/drf/snapshot.js';

const LIST = '/api/model/team-block-coworker/list/';
const entry = (i: number): string =>
  JSON.stringify({ uuid: `u${i}`, name: i === 0 ? '<script>"x"&</script>' : `N${i}`, post: 'p', images: [] });
const snapshot = prepareSnapshot({
  id: 'run-1',
  entries: Array.from({ length: 10 }, (_, i) => entry(i)),
  pageSize: 4,
  optionsBody: '{"name":"Upstream said so"}',
  fetchedAt: new Date('2026-11-21T10:00:00.000Z'),
});
const plain: DrfOptions = { trustProxyHeaders: false, publicBaseUrl: null, cacheControl: null };
const get = (url: string, headers: DrfRequest['headers'] = {}, method = 'GET'): DrfRequest => ({
  method,
  url,
  headers: { host: 'mirror.test', ...headers },
});
const headerOf = (headers: [string, string][], name: string): string | undefined =>
  headers.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[1];

describe('respondList: what the mirror adds to DRF answers', () => {
  it("sends DRF headers first, then validators, then Django's middleware headers, on a 200 page", () => {
    const answer = respondList(get(`${LIST}?page=2`), snapshot, { ...plain, cacheControl: 'max-age=60' });
    expect(answer.headers.map(([n]) => n)).toEqual([
      'Content-Type',
      'Vary',
      'Allow',
      'ETag',
      'Last-Modified',
      'Cache-Control',
      'X-Mirror-Fetched-At',
      'X-Frame-Options',
      'Content-Length',
      'X-Content-Type-Options',
      'Referrer-Policy',
    ]);
    expect(headerOf(answer.headers, 'Last-Modified')).toBe('Sat, 21 Nov 2026 10:00:00 GMT');
    expect(headerOf(answer.headers, 'X-Mirror-Fetched-At')).toBe('2026-11-21T10:00:00.000Z');
    expect(headerOf(answer.headers, 'ETag')).toMatch(/^"[\w-]+"$/);
  });

  it('answers If-None-Match with 304 and no body, and only for the same representation', () => {
    const first = respondList(get(`${LIST}?page=2`), snapshot, plain);
    const etag = headerOf(first.headers, 'ETag') ?? '';
    const again = respondList(
      get(`${LIST}?page=2`, { 'if-none-match': `"other", W/${etag}` }),
      snapshot,
      plain,
    );
    expect(again.status).toBe(304);
    expect(Buffer.concat(again.body)).toHaveLength(0);
    expect(headerOf(again.headers, 'ETag')).toBe(etag);
    const indented = respondList(
      get(`${LIST}?page=2`, { 'if-none-match': etag, accept: 'application/json; indent=2' }),
      snapshot,
      plain,
    );
    expect(indented.status).toBe(200);
    const otherPage = respondList(get(`${LIST}?page=3`, { 'if-none-match': etag }), snapshot, plain);
    expect(otherPage.status).toBe(200);
  });

  it('puts no validators on error answers', () => {
    const answer = respondList(get(`${LIST}?page=9`), snapshot, plain);
    expect(answer.status).toBe(404);
    expect(answer.headers).toEqual([
      ['Content-Type', 'application/json'],
      ['Vary', 'Accept'],
      ['Allow', 'GET, HEAD, OPTIONS'],
      ['X-Frame-Options', 'DENY'],
      ['Content-Length', '26'],
      ['X-Content-Type-Options', 'nosniff'],
      ['Referrer-Policy', 'same-origin'],
    ]);
    expect(Buffer.concat(answer.body).toString()).toBe('{"detail":"Invalid page."}');
  });

  it('answers HEAD with the GET headers, the GET body length and no body', () => {
    const getAnswer = respondList(get(LIST), snapshot, plain);
    const head = respondList(get(LIST, {}, 'HEAD'), snapshot, plain);
    expect(Buffer.concat(head.body)).toHaveLength(0);
    expect(head.headers).toEqual(getAnswer.headers);
    expect(headerOf(head.headers, 'Content-Length')).toBe(String(Buffer.concat(getAnswer.body).length));
  });

  it('answers 503 without a snapshot, never an empty list', () => {
    const answer = respondList(get(LIST), null, plain);
    expect(answer.status).toBe(503);
    expect(Buffer.concat(answer.body).toString()).toBe(
      '{"detail":"The mirror has no snapshot yet: no sync has succeeded."}',
    );
    expect(respondList(get(LIST, {}, 'POST'), null, plain).status).toBe(405);
  });

  it('serves an empty listing as page 1 with count 0', () => {
    const empty = prepareSnapshot({
      id: 'e',
      entries: [],
      pageSize: 8,
      optionsBody: null,
      fetchedAt: new Date(0),
    });
    expect(respondList(get(LIST), empty, plain).body.join('')).toBe(
      '{"count":0,"next":null,"previous":null,"results":[]}',
    );
    expect(respondList(get(`${LIST}?page=last`), empty, plain).status).toBe(200);
    expect(respondList(get(`${LIST}?page=2`), empty, plain).status).toBe(404);
  });

  it('builds links from publicBaseUrl, or from trusted X-Forwarded-Host/-Proto', () => {
    const viaBase = respondList(get(`${LIST}?page=2&x=1`), snapshot, {
      ...plain,
      publicBaseUrl: 'https://public.example/',
    });
    expect(JSON.parse(Buffer.concat(viaBase.body).toString())).toMatchObject({
      next: `https://public.example${LIST}?page=3&x=1`,
      previous: `https://public.example${LIST}?x=1`,
    });
    const proxied = { 'x-forwarded-host': 'edge.example', 'x-forwarded-proto': 'https' };
    const trusted = respondList(get(`${LIST}`, proxied), snapshot, { ...plain, trustProxyHeaders: true });
    expect(JSON.parse(Buffer.concat(trusted.body).toString())).toMatchObject({
      next: `https://edge.example${LIST}?page=2`,
    });
    const untrusted = respondList(get(`${LIST}`, proxied), snapshot, plain);
    expect(JSON.parse(Buffer.concat(untrusted.body).toString())).toMatchObject({
      next: `http://mirror.test${LIST}?page=2`,
    });
  });

  it('serves the captured OPTIONS body verbatim, and re-renders it only when indented', () => {
    expect(respondList(get(LIST, {}, 'OPTIONS'), snapshot, plain).body.join('')).toBe(
      '{"name":"Upstream said so"}',
    );
    const indented = respondList(
      get(LIST, { accept: 'application/json; indent=1' }, 'OPTIONS'),
      snapshot,
      plain,
    );
    expect(Buffer.concat(indented.body).toString()).toBe('{\n "name": "Upstream said so"\n}');
  });

  it('gives browsers escaped HTML with working links, under DRF status rules', () => {
    const answer = respondList(get(`${LIST}?format=api`), snapshot, plain);
    expect(answer.status).toBe(200);
    expect(headerOf(answer.headers, 'Content-Type')).toBe('text/html; charset=utf-8');
    const html = Buffer.concat(answer.body).toString();
    expect(html).toContain('&quot;&lt;script&gt;\\&quot;x\\&quot;&amp;&lt;/script&gt;&quot;');
    expect(html).not.toContain('<script>');
    expect(html).toContain(`href="http://mirror.test${LIST}?format=api&amp;page=2"`);
    expect(respondList(get(`${LIST}?page=0`, { accept: 'text/html' }), snapshot, plain).status).toBe(404);
  });

  it('redirects the slashless path and answers Django pages elsewhere', () => {
    const redirect = respondList(get('/api/model/team-block-coworker/list?a=%7B b'), snapshot, plain);
    expect(redirect.status).toBe(301);
    expect(headerOf(redirect.headers, 'Location')).toBe(`${LIST}?a=%7B%20b`);
    expect(respondDjangoNotFound(get('/elsewhere')).status).toBe(404);
    expect(respondDjangoNotFound(get('/elsewhere', { host: 'bad_host' })).status).toBe(400);
    expect(respondList(get(LIST, { host: '[1:2]' }), snapshot, plain).status).toBe(500);
  });

  it.each([
    [LIST, true],
    ['/api/model/team-block-coworker/list', true],
    ['/api/model/team-block-coworker/%6Cist/?x', true],
    ['/api/model/team-block-coworker/list//', false],
    ['/api/other/', false],
  ])('isListPath(%s) → %s', (url, expected) => {
    expect(isListPath(url)).toBe(expected);
  });
});

describe('prepareSnapshot', () => {
  it('precomputes DRF bytes for each page', () => {
    expect(snapshot.numPages).toBe(3);
    expect(snapshot.pageTails[2]?.toString()).toBe(`"results":[${entry(8)},${entry(9)}]}`);
  });

  it.each([
    [{ entries: ['{not json'] }, 'SNAPSHOT_INVALID'],
    [{ pageSize: 0 }, 'SNAPSHOT_INVALID'],
  ])('rejects %j with %s', (patch, code) => {
    const bad = { id: 'x', entries: [], pageSize: 8, optionsBody: null, fetchedAt: new Date(0), ...patch };
    expect(() => prepareSnapshot(bad)).toThrow(MirrorError);
    expect(() => prepareSnapshot(bad)).toThrow(expect.objectContaining({ code }) as Error);
  });
});
