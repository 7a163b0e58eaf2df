import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';
import type { MirrorDatabase } from '../../src/db/open.js';
import type { ServerConfig } from '../../src/config/load-config.js';
import { buildServer, type MirrorServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import type { SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { comparedHeaders } from '../helpers/golden-files.js';
import { toRawRequest, type RawRequestSpec } from '../http/drf/differential-requests.js';
import { sendRaw, type RawResponse } from '../http/drf/raw-http.js';
import { defaultServerConfig } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDatabase } from '../helpers/temp-db.js';
import { toWire, wantsKeepAlive, type HostileRequest } from './hostile-requests.js';
import { ADMIN_TOKEN } from './hostile-values.js';
import { MemoryLog } from './memory-log.js';
import { classify, describeFailure, documentedDrf500, type OutcomeKind } from './outcomes.js';
import { runOnLanes, WireLane } from './wire-lane.js';

interface RunningMirror {
  server: MirrorServer;
  port: number;
  /** `clientError` codes node's parser raised on this server's connections, by code. */
  clientErrors: Map<string, number>;
}

export interface FuzzTarget {
  store: MirrorDatabase;
  upstream: SimulatedUpstream;
  /** trustProxy off, as the reference DRF. */
  plain: RunningMirror;
  /** trustProxy on, Cache-Control set, admin route enabled. */
  proxied: RunningMirror;
  log: MemoryLog;
}

async function startMirror(
  store: MirrorDatabase,
  log: MemoryLog,
  options: Partial<ServerConfig>,
): Promise<RunningMirror> {
  const logger = createLogger({ level: 'info', pretty: false, destination: log });
  const server = await buildServer({
    store,
    logger,
    config: { server: { ...defaultServerConfig, ...options } },
    syncTrigger: () => Promise.resolve({ started: false, runningRunId: null }),
  });
  await server.listen(0, '127.0.0.1');
  onTestFinished(() => server.close());
  const clientErrors = new Map<string, number>();
  // Fastify's own clientError listener answers; this one only counts.
  server.server.on('clientError', (error: NodeJS.ErrnoException) => {
    const code = error.code ?? 'unknown';
    clientErrors.set(code, (clientErrors.get(code) ?? 0) + 1);
  });
  return { server, port: (server.server.address() as AddressInfo).port, clientErrors };
}

/**
 * A synced temp database (`count` rows from the simulated upstream: repeated uuids, non-ASCII
 * names) served by two real mirrors on loopback, both logging into memory. Stopped when the test ends.
 */
export async function startFuzzTarget(count = 50): Promise<FuzzTarget> {
  const store = tempDatabase();
  const upstream = await simulatedUpstream({ count, seed: 4242 });
  await sync(store, upstream);
  const log = new MemoryLog();
  const plain = await startMirror(store, log, {});
  const proxied = await startMirror(store, log, {
    trustProxy: true,
    cacheControl: 'public, max-age=60',
    adminToken: ADMIN_TOKEN,
  });
  return { store, upstream, plain, proxied, log };
}

export interface FuzzReport {
  sent: number;
  byOutcome: Map<OutcomeKind, number>;
  byStatus: Map<number, number>;
  /** Why each documented DRF 500 happened, by cause. */
  drf500Causes: Map<string, number>;
  breakages: Map<string, number>;
  connections: number;
  failures: string[];
}

function bump<K>(map: Map<K, number>, key: K): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Sends every request on `lanes` concurrent keep-alive connections and classifies each answer. */
export async function runFuzz(
  target: FuzzTarget,
  requests: readonly HostileRequest[],
  lanes: number,
): Promise<FuzzReport> {
  const report: FuzzReport = {
    sent: 0,
    byOutcome: new Map(),
    byStatus: new Map(),
    drf500Causes: new Map(),
    breakages: new Map(),
    connections: 0,
    failures: [],
  };
  const previous = new WeakMap<WireLane, HostileRequest>();
  const portOf = (r: HostileRequest): number => (r.proxied ? target.proxied.port : target.plain.port);
  const { connections } = await runOnLanes(requests, lanes, portOf, async (request, lane) => {
    const exchange = await lane.exchange(
      toWire(request),
      request.method.toUpperCase() === 'HEAD',
      wantsKeepAlive(request),
    );
    report.sent += 1;
    const prior = lane.reused ? previous.get(lane) : undefined;
    const outcome = classify(request, exchange, prior);
    bump(report.byOutcome, outcome.kind);
    if (outcome.status !== null) bump(report.byStatus, outcome.status);
    if (request.breakage !== null) bump(report.breakages, request.breakage);
    if (exchange.kind === 'answered' && outcome.kind === 'app 500 (documented DRF 500)') {
      bump(report.drf500Causes, documentedDrf500(request, exchange.response) ?? '?');
    }
    if (outcome.problem !== null) {
      const context = prior
        ? `\n  after, on the same connection: ${JSON.stringify(toWire(prior).toString('latin1').slice(0, 300))}`
        : '';
      report.failures.push(describeFailure(request, exchange, outcome) + context);
    }
    previous.set(lane, request);
  });
  report.connections = connections;
  return report;
}

/** GET /healthz on a fresh connection: the process still answers after the campaign. */
export async function healthz(port: number): Promise<{ status: number; body: string }> {
  const lane = new WireLane(port);
  try {
    const bytes = Buffer.from('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    const exchange = await lane.exchange(bytes, false, false);
    if (exchange.kind === 'dropped') return { status: 0, body: exchange.reason };
    return { status: exchange.response.status, body: exchange.response.body.toString('utf8') };
  } finally {
    lane.close();
  }
}

/** `took`: wall time, and CPU time of this process (client and both servers share it). */
export function summarizeFuzz(report: FuzzReport, took: { ms: number; cpuMs: number }): string {
  const sorted = <K>(map: Map<K, number>): string =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([k, n]) => `    ${String(k)}: ${n}`)
      .join('\n');
  return [
    `${report.sent} requests on ${report.connections} connections in ${Math.round(took.ms)} ms (${Math.round(took.cpuMs)} ms CPU)`,
    `  by outcome:\n${sorted(report.byOutcome)}`,
    `  by status: ${[...report.byStatus.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([s, n]) => `${s}×${n}`)
      .join(' ')}`,
    `  documented DRF 500 causes:\n${sorted(report.drf500Causes)}`,
    `  deliberate breakages:\n${sorted(report.breakages)}`,
    `  failures: ${report.failures.length}`,
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Differential slice

/** DRF's browsable API page: its HTML is not reproduced, only its status and headers. */
function isBrowsable(r: RawResponse): boolean {
  const type = r.headers.find(([n]) => n.toLowerCase() === 'content-type')?.[1] ?? '';
  return type.startsWith('text/html') && r.headers.some(([n]) => n.toLowerCase() === 'vary');
}

function describeAnswer(r: RawResponse, skipBody: boolean): string {
  const body = skipBody ? '<html body not compared>' : r.body.toString('utf8').slice(0, 200);
  return [String(r.status), ...comparedHeaders(r.headers), body].join('\n');
}

export interface DifferentialReport {
  compared: number;
  statuses: Map<number, number>;
  mismatches: string[];
}

/**
 * Sends each spec (as the existing differential harness frames it) to the reference DRF and to the
 * mirror, and compares status, Content-Type/Vary/Allow/Location and body bytes.
 */
export async function runDifferential(
  specs: readonly RawRequestSpec[],
  referencePort: number,
  mirrorPort: number,
  lanes: number,
): Promise<DifferentialReport> {
  const report: DifferentialReport = { compared: 0, statuses: new Map(), mismatches: [] };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < specs.length) {
      const spec = specs[next] as RawRequestSpec;
      next += 1;
      const raw = toRawRequest(spec);
      const isHead = spec.method.toUpperCase() === 'HEAD';
      const [expected, actual] = await Promise.all([
        sendRaw(referencePort, raw, isHead),
        sendRaw(mirrorPort, raw, isHead),
      ]);
      report.compared += 1;
      bump(report.statuses, expected.status);
      const skipBody = isBrowsable(expected) && isBrowsable(actual);
      const want = describeAnswer(expected, skipBody);
      const got = describeAnswer(actual, skipBody);
      if (want !== got || (!skipBody && !expected.body.equals(actual.body))) {
        report.mismatches.push(
          `request: ${JSON.stringify(raw.toString('latin1')).slice(0, 700)}\n--- DRF:\n${want}\n--- mirror:\n${got}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: lanes }, worker));
  return report;
}
