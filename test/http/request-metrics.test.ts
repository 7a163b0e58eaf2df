import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createRequestMetrics, LatencyHistogram } from '../../src/http/request-metrics.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';

const LIST = '/api/model/team-block-coworker/list/';
const NAMES = { requests: 'requests_total', latency: 'latency_seconds' };

// Bucket edges, values between them, zero, and values past the last bound.
const OBSERVED: [string, number][] = [
  ['list', 0.0005],
  ['list', 0.0004],
  ['other', 0.003],
  ['list', 0.25],
  ['list', 0.7],
  ['list', 3.5],
  ['refused', 0],
  ['other', 0.0011],
];

/** prom-client's own histogram with the same name, help and buckets, to compare texts with. */
function promClientText(observed: readonly [string, number][]): Promise<string> {
  const registry = new Registry();
  const reference = new Histogram({
    name: NAMES.latency,
    help: 'Time to answer an HTTP request, by route',
    labelNames: ['route'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers: [registry],
  });
  for (const [route, seconds] of observed) reference.observe({ route }, seconds);
  return registry.metrics();
}

function count(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('request metrics kept in plain numbers', () => {
  it("print exactly as prom-client's histogram prints the same observations", async () => {
    const registry = new Registry();
    const { latency } = createRequestMetrics(registry, NAMES);
    const bound = latency.labels('list');
    for (const [route, seconds] of OBSERVED) {
      if (route === 'list') bound.observe(seconds);
      else latency.observe({ route }, seconds);
    }
    expect(await registry.getSingleMetricAsString(NAMES.latency)).toBe(
      (await promClientText(OBSERVED)).trimEnd(),
    );
  });

  it('a bound series prints nothing until observed, and again nothing after a reset', async () => {
    const registry = new Registry();
    const latency = new LatencyHistogram({ name: NAMES.latency, help: 'h', registry });
    const bound = latency.labels('list');
    expect(await registry.getSingleMetricAsString(NAMES.latency)).not.toContain('route="list"');
    bound.observe(0.002);
    expect(await registry.getSingleMetricAsString(NAMES.latency)).toContain(
      `${NAMES.latency}_count{route="list"} 1`,
    );
    registry.resetMetrics();
    expect(await registry.getSingleMetricAsString(NAMES.latency)).not.toContain('route="list"');
    bound.observe(0.002);
    expect(await registry.getSingleMetricAsString(NAMES.latency)).toContain(
      `${NAMES.latency}_count{route="list"} 1`,
    );
  });

  it('recorders count every request once, across scrapes, with unknown methods as OTHER', async () => {
    const registry = new Registry();
    const metrics = createRequestMetrics(registry, NAMES);
    const list = metrics.recorder('list');
    const refused = metrics.recorder('refused');
    for (let i = 0; i < 7; i += 1) list('GET', 200, 0.0001);
    list('HEAD', 200, 0.0001);
    list('PROPFIND', 405, 0.0001);
    refused('get', 400, 0.0001);
    // Counted straight on prom-client's counter (as the Fastify routes do): both add up.
    metrics.requests.inc({ route: 'list', method: 'GET', status: '200' });
    const first = await registry.metrics();
    expect(count(first, `${NAMES.requests}{route="list",method="GET",status="200"}`)).toBe(8);
    expect(count(first, `${NAMES.requests}{route="list",method="HEAD",status="200"}`)).toBe(1);
    expect(count(first, `${NAMES.requests}{route="list",method="OTHER",status="405"}`)).toBe(1);
    expect(count(first, `${NAMES.requests}{route="refused",method="OTHER",status="400"}`)).toBe(1);
    expect(count(first, `${NAMES.latency}_count{route="list"}`)).toBe(9);
    expect(count(first, `${NAMES.latency}_count{route="refused"}`)).toBe(1);
    // A second scrape adds nothing; new requests add to what was counted.
    expect(await registry.metrics()).toBe(first);
    list('GET', 200, 0.0001);
    const second = await registry.metrics();
    expect(count(second, `${NAMES.requests}{route="list",method="GET",status="200"}`)).toBe(9);
    expect(count(second, `${NAMES.latency}_count{route="list"}`)).toBe(10);
  });

  it('a real server counts every list request and a 404 in /metrics, once each', async () => {
    const store = tempDatabase();
    await sync(store, await simulatedUpstream({ count: 20 }));
    const mirror = await startMirror(store);
    for (let i = 0; i < 30; i += 1) await (await fetch(`${mirror.url}${LIST}?page=${(i % 3) + 1}`)).text();
    await (await fetch(`${mirror.url}/nowhere/`)).text();
    const before = await (await fetch(`${mirror.url}/metrics`)).text();
    expect(count(before, 'coworker_mirror_http_requests_total{route="list",method="GET",status="200"}')).toBe(
      30,
    );
    expect(
      count(before, 'coworker_mirror_http_requests_total{route="other",method="GET",status="404"}'),
    ).toBe(1);
    expect(count(before, 'coworker_mirror_http_request_duration_seconds_count{route="list"}')).toBe(30);
    for (let i = 0; i < 5; i += 1) await (await fetch(`${mirror.url}${LIST}`, { method: 'HEAD' })).text();
    const after = await (await fetch(`${mirror.url}/metrics`)).text();
    expect(count(after, 'coworker_mirror_http_requests_total{route="list",method="GET",status="200"}')).toBe(
      30,
    );
    expect(count(after, 'coworker_mirror_http_requests_total{route="list",method="HEAD",status="200"}')).toBe(
      5,
    );
    expect(count(after, 'coworker_mirror_http_request_duration_seconds_count{route="list"}')).toBe(35);
    // The scrape itself is Fastify's and counted there.
    expect(after).toMatch(
      /coworker_mirror_http_requests_total\{route="\/metrics",method="GET",status="200"\} 1/,
    );
  });
});
