import { describe, expect, it } from 'vitest';
import { startMirror } from '../helpers/mirror-server.js';
import { oncePerFile } from '../helpers/scope.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const entry = (uuid: string, post: string) => ({
  uuid,
  name: 'Ann',
  post,
  emoji_file: null,
  emoji_file_webm: null,
  show_image: true,
  images: [],
});

describe.each(STORE_KINDS)('history API on %s', (kind) => {
  const fresh = storeMaker(kind);

  /** Three runs, once for the file: A and B added, then A's post changed, then B removed. */
  const history = oncePerFile(async (defer) => {
    const store = await fresh(defer);
    const upstream = await simulatedUpstream({ entries: [entry(A, 'Dev'), entry(B, 'QA')] }, defer);
    await sync(store, upstream); // run 1: both added
    upstream.data.setEntries([entry(A, 'Lead'), entry(B, 'QA')]);
    await sync(store, upstream); // run 2: A's post changed
    upstream.data.setEntries([entry(A, 'Lead')]);
    await sync(store, upstream); // run 3: B removed
    return store;
  });

  /** A server of its own over the shared history, so no server state (metrics, caches) crosses tests. */
  async function scenario() {
    const store = history();
    const mirror = await startMirror(store);
    const get = async (path: string) => {
      const res = await fetch(`${mirror.url}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    return { store, mirror, get };
  }

  it('runs/ newest first in a DRF page envelope, and runs/<id>/', async () => {
    const { get, mirror } = await scenario();
    const runs = await get('/api/mirror/runs/?page_size=2');
    expect(runs.status).toBe(200);
    expect(runs.body).toMatchObject({
      count: 3,
      next: `${mirror.url}/api/mirror/runs/?page=2&page_size=2`,
      previous: null,
    });
    expect((runs.body.results as { id: number }[]).map((r) => r.id)).toEqual([3, 2]);
    const one = await get('/api/mirror/runs/2/');
    expect(one.body).toMatchObject({ id: 2, status: 'succeeded', changed: 1, unchanged: 1, error: null });
    expect((await get('/api/mirror/runs/99/')).status).toBe(404);
  });

  it('coworkers/ lists current ones; coworkers/<uuid>/ shows appearances or the tombstone', async () => {
    const { get } = await scenario();
    const list = await get('/api/mirror/coworkers/');
    expect(list.body).toMatchObject({
      count: 1,
      results: [{ uuid: A, first_seen_run: 1, last_seen_run: 3, removed: false }],
    });
    const a = await get(`/api/mirror/coworkers/${A}/`);
    expect(a.body).toMatchObject({
      uuid: A,
      appearances: [{ appearance: 0, valid_from_run: 2, entry: entry(A, 'Lead') }],
    });
    const b = await get(`/api/mirror/coworkers/${B}/`);
    expect(b.body).toMatchObject({
      uuid: B,
      removed: true,
      removed_run: 3,
      last_seen_run: 2,
      appearances: [],
    });
  });

  it('coworkers/<uuid>/history/ has versions with validity and changes', async () => {
    const { get } = await scenario();
    const h = await get(`/api/mirror/coworkers/${A}/history/`);
    expect(h.body.versions).toEqual([
      { id: 1, uuid: A, appearance: 0, valid_from_run: 1, valid_to_run: 2, entry: entry(A, 'Dev') },
      { id: 3, uuid: A, appearance: 0, valid_from_run: 2, valid_to_run: null, entry: entry(A, 'Lead') },
    ]);
    expect((h.body.changes as { kind: string }[]).map((c) => c.kind)).toEqual(['added', 'changed']);
  });

  it('changes/ newest first, filtered, keyset-paged', async () => {
    const { get } = await scenario();
    const all = await get('/api/mirror/changes/');
    expect((all.body.results as { kind: string }[]).map((c) => c.kind)).toEqual([
      'removed',
      'changed',
      'added',
      'added',
    ]);
    const field = await get('/api/mirror/changes/?field=post');
    expect(field.body.results).toEqual([
      expect.objectContaining({ run: 2, uuid: A, kind: 'changed', field: 'post', old: 'Dev', new: 'Lead' }),
    ]);
    const kind = await get('/api/mirror/changes/?kind=removed');
    expect((kind.body.results as { uuid: string }[]).map((c) => c.uuid)).toEqual([B]);
    const paged = await get('/api/mirror/changes/?page_size=3');
    expect((paged.body.results as unknown[]).length).toBe(3);
    const next = new URL(String(paged.body.next));
    const rest = await get(`${next.pathname}${next.search}`);
    expect((rest.body.results as { kind: string }[]).map((c) => c.kind)).toEqual(['added']);
    expect(rest.body.next).toBeNull();
    const future = await get('/api/mirror/changes/?since=2999-01-01T00:00:00Z');
    expect(future.body.results).toEqual([]);
    const run1 = await get('/api/mirror/runs/1/');
    const untilRun1 = await get(`/api/mirror/changes/?until=${String(run1.body.finished_at)}`);
    expect((untilRun1.body.results as { run: number; kind: string }[]).map((c) => [c.run, c.kind])).toEqual([
      [1, 'added'],
      [1, 'added'],
    ]);
    const beforeAll = await get('/api/mirror/changes/?until=2000-01-01T00:00:00Z');
    expect(beforeAll.body.results).toEqual([]);
    const recent = await get('/api/mirror/changes/?since=1h');
    expect((recent.body.results as unknown[]).length).toBe(4);
  });

  it.each([
    ['/api/mirror/changes/?since=yesterday', 'since'],
    // Regression: read by Date.parse, this year sorted as text before every stored time.
    ['/api/mirror/changes/?since=%2B275760-09-13T00:00:00Z', 'since'],
    ['/api/mirror/changes/?until=2026-02-30', 'until'],
    ['/api/mirror/changes/?kind=moved', 'kind'],
    ['/api/mirror/changes/?uuid=NOPE', 'uuid'],
    ['/api/mirror/changes/?page_size=0', 'page_size'],
    ['/api/mirror/changes/?colour=red', 'colour'],
    ['/api/mirror/changes/?field=a&field=b', 'field'],
    ['/api/mirror/runs/?page=x', 'page'],
    ['/api/mirror/runs/?page_size=501', 'page_size'],
    ['/api/mirror/coworkers/NOT-A-UUID/', 'uuid'],
    ['/api/mirror/runs/abc/', 'id'],
  ])('%s → 400 naming %s', async (path, parameter) => {
    const { get } = await scenario();
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(res.body.parameter).toBe(parameter);
    expect(String(res.body.detail)).toContain(parameter);
  });

  it('links name the public base URL, or the trusted proxy host, like the list endpoint', async () => {
    const store = history();
    const pub = await startMirror(store, { publicBaseUrl: 'https://mirror.example.com' });
    const viaPublic = (await (await fetch(`${pub.url}/api/mirror/runs/?page_size=1`)).json()) as {
      next: string;
    };
    expect(viaPublic.next).toBe('https://mirror.example.com/api/mirror/runs/?page=2&page_size=1');
    const proxied = await startMirror(store, { trustProxy: true });
    const res = await fetch(`${proxied.url}/api/mirror/changes/?page_size=1`, {
      headers: { 'X-Forwarded-Host': 'team.example.org', 'X-Forwarded-Proto': 'https' },
    });
    expect(((await res.json()) as { next: string }).next).toMatch(
      /^https:\/\/team\.example\.org\/api\/mirror\/changes\/\?before=/,
    );
  });

  it('unknown uuid → 404', async () => {
    const { get } = await scenario();
    const res = await get(`/api/mirror/coworkers/${'z'.repeat(32)}/history/`);
    expect(res.status).toBe(404);
    expect(res.body.detail).toContain('z'.repeat(32));
  });

  it('/healthz, /readyz and /metrics', async () => {
    const { get, mirror } = await scenario();
    expect((await get('/healthz')).body).toEqual({ status: 'ok' });
    expect((await get('/readyz')).body).toMatchObject({ status: 'ready', run: 3 });
    await fetch(`${mirror.url}/api/model/team-block-coworker/list/`);
    const metrics = await (await fetch(`${mirror.url}/metrics`)).text();
    expect(metrics).toContain('coworker_mirror_runs{status="succeeded"} 3');
    expect(metrics).toContain('coworker_mirror_entries_served 1');
    expect(metrics).toMatch(
      /coworker_mirror_http_requests_total\{route="list",method="GET",status="200"\} 1/,
    );
    expect(metrics).toContain('coworker_mirror_last_success_timestamp_seconds');
    expect(metrics).toContain('coworker_mirror_http_request_duration_seconds_bucket');
  });

  it('/readyz is 503 before any run and when the last success is too old', async () => {
    const store = await fresh();
    const empty = await startMirror(store);
    expect((await fetch(`${empty.url}/readyz`)).status).toBe(503);
    await sync(store, await simulatedUpstream({ count: 3 }));
    const stale = await startMirror(store, { staleAfterMs: 0 });
    await new Promise((r) => setTimeout(r, 5));
    const res = await fetch(`${stale.url}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ status: 'stale', run: 1 });
  });
});
