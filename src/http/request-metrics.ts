import { Counter, type Histogram, type Registry } from 'prom-client';

/** Upper bounds of the request latency buckets, in seconds (+Inf is the count). */
const LATENCY_BUCKETS: readonly number[] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

// Any token is a method to DRF; the label keeps to a known few so clients cannot grow the series.
const METHOD_LABELS = ['GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH', 'DELETE', 'OTHER'] as const;
const METHOD_INDEX = new Map<string, number>(METHOD_LABELS.slice(0, -1).map((m, i) => [m, i]));
const OTHER_METHOD = METHOD_LABELS.length - 1;

/** One route's latencies: per-bucket counts (not yet cumulative), their sum and count. */
class LatencySeries {
  readonly counts = new Float64Array(LATENCY_BUCKETS.length);
  sum = 0;
  count = 0;

  constructor(readonly route: string) {}

  observe(seconds: number): void {
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    for (let i = 0; i < LATENCY_BUCKETS.length; i++) {
      if (seconds <= (LATENCY_BUCKETS[i] ?? Infinity)) {
        this.counts[i] = (this.counts[i] ?? 0) + 1;
        break;
      }
    }
    this.sum += seconds;
    this.count += 1;
  }
}

/** A value as prom-client's registry prints it: `name_bucket{le="…",route="…"} 3`. */
interface ExportedValue {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

/**
 * The request latency histogram, by route, kept in plain numbers: prom-client's Histogram builds a
 * closure and hashes the label set on every observation, a large share of the list path's own cost
 * at tens of thousands of requests a second. Registered in a prom-client registry, which reads it
 * through `get()` exactly as it reads its own histograms (same names, labels and order;
 * test/http/request-metrics.test.ts compares the two texts).
 */
export class LatencyHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #series = new Map<string, LatencySeries>();

  constructor(config: { name: string; help: string; registry: Registry }) {
    this.name = config.name;
    this.help = config.help;
    // The registry only calls name, help, type, aggregator, get() and reset().
    config.registry.registerMetric(this as unknown as Histogram<'route'>);
  }

  /** The route's series, to observe into directly (bind it once, observe per request). */
  labels(route: string): { observe(seconds: number): void } {
    let series = this.#series.get(route);
    if (!series) this.#series.set(route, (series = new LatencySeries(route)));
    return series;
  }

  observe(labels: { route: string }, seconds: number): void {
    this.labels(labels.route).observe(seconds);
  }

  /** As prom-client's reset: every series leaves the output until it is observed again. */
  reset(): void {
    for (const series of this.#series.values()) {
      series.counts.fill(0);
      series.sum = 0;
      series.count = 0;
    }
  }

  get(): Promise<{
    name: string;
    help: string;
    type: string;
    aggregator: string;
    values: ExportedValue[];
  }> {
    const values: ExportedValue[] = [];
    const bucket = `${this.name}_bucket`;
    // Like prom-client, a series appears once it has an observation (binding it is not one).
    for (const series of this.#series.values()) {
      if (series.count === 0) continue;
      const { route } = series;
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, i) => {
        cumulative += series.counts[i] ?? 0;
        values.push({ metricName: bucket, labels: { le, route }, value: cumulative });
      });
      values.push(
        { metricName: bucket, labels: { le: '+Inf', route }, value: series.count },
        { metricName: `${this.name}_sum`, labels: { route }, value: series.sum },
        { metricName: `${this.name}_count`, labels: { route }, value: series.count },
      );
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values,
    });
  }
}

/** Counts one request of a route on the hot path: a few additions, no label hashing. */
export type RouteRecorder = (method: string, status: number, seconds: number) => void;

export interface RequestMetrics {
  requests: Counter<'route' | 'method' | 'status'>;
  latency: LatencyHistogram;
  /** A recorder for one route (bind it once); its counts reach `requests` when it is collected. */
  recorder(route: string): RouteRecorder;
}

interface PendingCount {
  labels: { route: string; method: string; status: string };
  count: number;
}

/**
 * The request counter and latency histogram. Recorders add to plain numbers, which the counter
 * takes in (`inc` by the sum) when a scrape collects it, so every request is counted once.
 */
export function createRequestMetrics(
  registry: Registry,
  names: { requests: string; latency: string } = {
    requests: 'coworker_mirror_http_requests_total',
    latency: 'coworker_mirror_http_request_duration_seconds',
  },
): RequestMetrics {
  const pending: PendingCount[] = [];
  const requests = new Counter({
    name: names.requests,
    help: 'HTTP requests answered, by route, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
    collect() {
      for (const entry of pending) {
        if (entry.count === 0) continue;
        this.inc(entry.labels, entry.count);
        entry.count = 0;
      }
    },
  });
  const latency = new LatencyHistogram({
    name: names.latency,
    help: 'Time to answer an HTTP request, by route',
    registry,
  });
  const recorder = (route: string): RouteRecorder => {
    const series = latency.labels(route);
    // Keyed by a number: statuses are the server's own few, methods one of METHOD_LABELS.
    const counts = new Map<number, PendingCount>();
    return (method, status, seconds) => {
      const index = METHOD_INDEX.get(method) ?? OTHER_METHOD;
      const key = status * METHOD_LABELS.length + index;
      let entry = counts.get(key);
      if (entry === undefined) {
        const labels = { route, method: METHOD_LABELS[index] ?? 'OTHER', status: String(status) };
        counts.set(key, (entry = { labels, count: 0 }));
        pending.push(entry);
      }
      entry.count += 1;
      series.observe(seconds);
    };
  };
  return { requests, latency, recorder };
}
