import { describe, expect, it, onTestFinished } from 'vitest';
import { startReferenceServer } from '../http/drf/reference-server.js';
import { missing, referenceDrf } from '../helpers/requirements.js';
import {
  healthz,
  runDifferential,
  runFuzz,
  startFuzzTarget,
  summarizeFuzz,
  type FuzzTarget,
} from './fuzz-campaign.js';
import { toDifferentialSpec } from './differential-subset.js';
import { generateHostileRequests } from './hostile-requests.js';
import type { RawRequestSpec } from '../http/drf/differential-requests.js';

export interface HostileSuiteSettings {
  name: string;
  seed: number;
  requests: number;
  differential: number;
  /** Concurrent client connections. */
  lanes: number;
  /** Past the default test timeout (vitest.config.ts), for the long forms. */
  timeoutMs?: number;
  skip: boolean;
}

/** Records unhandled rejections and uncaught exceptions while a test runs. */
function watchProcess(): string[] {
  const fired: string[] = [];
  const onRejection = (reason: unknown): void => {
    fired.push(
      `unhandledRejection: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`,
    );
  };
  const onException = (error: Error): void => {
    fired.push(`uncaughtException: ${error.stack ?? error.message}`);
  };
  process.on('unhandledRejection', onRejection);
  process.on('uncaughtException', onException);
  onTestFinished(() => {
    process.off('unhandledRejection', onRejection);
    process.off('uncaughtException', onException);
  });
  return fired;
}

function uuidsOf(target: FuzzTarget): string[] {
  return [...new Set(target.upstream.data.entries().map((e) => String(e.uuid)))];
}

/** The first `count` generated requests the differential harness can send to both servers. */
function differentialSpecs(
  target: FuzzTarget,
  count: number,
  seed: number,
  proxied: boolean,
): RawRequestSpec[] {
  const specs: RawRequestSpec[] = [];
  for (let round = 0; specs.length < count; round += 1) {
    const pool = generateHostileRequests(count * 3, seed + 1_000 + round, { uuids: uuidsOf(target) });
    for (const request of pool) {
      const spec = toDifferentialSpec(request, proxied);
      if (spec !== null && specs.length < count) specs.push(spec);
    }
  }
  return specs;
}

const drf = referenceDrf();

/** The suite's own test timeout, or none given so the default (vitest.config.ts) holds. */
function timeoutOf(settings: HostileSuiteSettings): { timeout?: number } {
  return settings.timeoutMs === undefined ? {} : { timeout: settings.timeoutMs };
}

/** The fuzz campaign: every answer classified, the servers' health and logs checked after. */
function defineFuzz(settings: HostileSuiteSettings): void {
  it(
    `${settings.requests} seeded hostile requests (seed ${settings.seed}): no crash, no drop, ` +
      'no undocumented 5xx, nothing logged at error level',
    timeoutOf(settings),
    async () => {
      const fired = watchProcess();
      const target = await startFuzzTarget();
      const requests = generateHostileRequests(settings.requests, settings.seed, {
        uuids: uuidsOf(target),
      });
      const started = performance.now();
      const cpu = process.cpuUsage();
      const report = await runFuzz(target, requests, settings.lanes);
      const { user, system } = process.cpuUsage(cpu);
      const took = { ms: performance.now() - started, cpuMs: (user + system) / 1000 };
      console.log(`${settings.name}\n${summarizeFuzz(report, took)}`);

      expect(report.sent).toBe(settings.requests);
      expect(report.failures.slice(0, 10).join('\n\n')).toBe('');
      expect(report.failures).toHaveLength(0);
      // Each answerer was reached, so a green run keeps proving something.
      for (const kind of ['app 2xx', 'app 3xx', 'app 4xx', 'app 500 (documented DRF 500)'] as const) {
        expect(report.byOutcome.get(kind) ?? 0, kind).toBeGreaterThan(0);
      }
      expect(report.byOutcome.get('node parser refused (Fastify clientError)') ?? 0).toBeGreaterThan(0);
      const parserRefusals = [...target.plain.clientErrors.values(), ...target.proxied.clientErrors.values()];
      expect(parserRefusals.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(
        report.byOutcome.get('node parser refused (Fastify clientError)') ?? 0,
      );

      for (const port of [target.plain.port, target.proxied.port]) {
        expect(await healthz(port)).toEqual({ status: 200, body: '{"status":"ok"}' });
      }
      // The in-memory log did capture the servers' lines (Fastify's "Server listening" at info).
      expect(target.log.lines().length).toBeGreaterThan(0);
      expect(target.log.errors()).toEqual([]);
      expect(fired).toEqual([]);
    },
  );
}

/** The differential slice: list requests both servers parse, sent to the mirror and to DRF. */
function defineDifferential(settings: HostileSuiteSettings): void {
  const scenarios = [
    { proxied: false, count: settings.differential, what: 'default mirror vs DRF' },
    {
      proxied: true,
      count: Math.round(settings.differential / 4),
      what: 'proxy-trusting mirror vs DRF with USE_X_FORWARDED_HOST',
    },
  ];
  it.skipIf(missing(drf)).each(scenarios)(
    '$count seeded list requests, $what: same status, headers and bytes',
    timeoutOf(settings),
    async ({ proxied, count }) => {
      const target = await startFuzzTarget();
      const entries = target.upstream.data.entries();
      const reference = await startReferenceServer(drf.found ?? 'python3', entries, 8, proxied);
      onTestFinished(() => reference.stop());
      const specs = differentialSpecs(target, count, settings.seed + (proxied ? 1 : 0), proxied);
      const mirror = proxied ? target.proxied : target.plain;
      const started = performance.now();
      const report = await runDifferential(specs, reference.port, mirror.port, 4);
      const statuses = [...report.statuses.entries()].sort((a, b) => a[0] - b[0]);
      console.log(
        `${settings.name} differential (${proxied ? 'proxy-trusting' : 'default'}): ${report.compared} ` +
          `requests in ${Math.round(performance.now() - started)} ms, ${report.mismatches.length} ` +
          `mismatches; DRF statuses ${statuses.map(([s, n]) => `${s}×${n}`).join(' ')}`,
      );
      expect(report.mismatches.slice(0, 10).join('\n\n')).toBe('');
      expect(report.compared).toBe(count);
      expect(statuses.map(([s]) => s)).toEqual(expect.arrayContaining([200, 301, 400, 404, 405, 406, 500]));
      expect(target.log.errors()).toEqual([]);
    },
  );
}

/** The fuzz test and its differential slice, at the size `settings` asks for. */
export function defineHostileSuite(settings: HostileSuiteSettings): void {
  describe.skipIf(settings.skip)(settings.name, () => {
    // The differential runs after the fuzz in the same process, so module-level memos (negotiate,
    // indentOf) hold the fuzz's hostile keys: a memo one request can poison shows up as a mismatch
    // (that is how the collisions in cache-key-collisions.test.ts were found).
    defineFuzz(settings);
    defineDifferential(settings);
  });
}
