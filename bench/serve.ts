/**
 * Serving bench: requests/s and latency of the mirror's list endpoint against a ceiling, at
 * `--connections` connections (pipelining 1), `--duration` seconds per server and round, after a
 * short warm-up. (a) ceiling: a bare node:http server answering every request with one fixed
 * buffer, the mirror's own page-2 answer (same body, same headers); (b) the mirror over a snapshot
 * of `--entries` entries synced from the simulated upstream into a temp database, the load cycling
 * asked for page 2 (the same bytes as the ceiling; `--spread` cycles over several pages). Each
 * server runs in its own process (this script again, with `--serve`); the load comes from wrk
 * (Debian's /usr/bin/wrk, one thread), which saturates a Node process with room to spare, so the
 * ratio is the servers' and not the load generator's: each round prints wrk's own share of a core,
 * and the run says so when it nears one. Both servers run with `npm start`'s V8 flags, and the
 * ceiling is checked to send the mirror's status, headers (in order, keep-alive included) and
 * body. `--rounds` alternate the order; the best round of each server is compared. Percentiles
 * are wrk's `--latency` distribution.
 *
 *   npx tsx bench/serve.ts [--duration 10] [--connections 64] [--entries 1000] [--warmup 2] [--rounds 2]
 *                          [--spread] [--cpu-prof-dir DIR]   (DIR/mirror, DIR/ceiling: profiles, warm-up included)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../src/config/load-config.js';
import { openDatabase } from '../src/db/open.js';
import { buildServer } from '../src/http/server.js';
import { silentLogger } from '../src/logger.js';
import { startSimulatedUpstream } from '../src/simulated-upstream/index.js';
import { runSync } from '../src/sync/run-sync.js';
import { LIST_PATH } from '../src/upstream/contract.js';
import { checkGoal, machineLine, millis, ratio } from './lib/report.js';
import { benchSyncSettings } from './lib/settings.js';
import { withTempDir } from './lib/temp-dir.js';

const PAGE_SIZE = 8;
const SELF = fileURLToPath(import.meta.url);
const CHILD_START_TIMEOUT_MS = 30_000;
const CHILD_STOP_TIMEOUT_MS = 10_000;
const GOAL_RPS_RATIO = 0.85;
const GOAL_P99_RATIO = 1.5;
const WRK_THREADS = 1;
// Both servers run with the V8 flags `npm start` gives the mirror (package.json), so the ratio is the
// application's cost and the figures are production's.
const SERVER_NODE_FLAGS = ['--max-semi-space-size=2'];
// At or above this share of one core, wrk may be what limits the figures, not the server.
const WRK_BUSY_SHARE = 0.9;
// Headers node:http adds to every answer by itself; the ceiling gets its own.
const PER_CONNECTION_HEADERS = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    entries: { type: 'string', default: '1000' },
    warmup: { type: 'string', default: '2' },
    rounds: { type: 'string', default: '2' },
    'cpu-prof-dir': { type: 'string' },
    spread: { type: 'boolean', default: false },
    // Internal: run as one of the two servers.
    serve: { type: 'string' },
    db: { type: 'string' },
    answer: { type: 'string' },
  },
});

/** One fixed answer, as the ceiling sends it: the headers in wire order and case, and the body. */
interface FixedAnswer {
  status: number;
  rawHeaders: string[];
  body: Buffer;
}

interface LoadResult {
  requests: number;
  perSecond: number;
  p50: number;
  p99: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  /** The server process's CPU time (user + system) per response, in microseconds. */
  cpuPerResponse: number;
  /** wrk's CPU time over the run's wall time: near 1, the load generator limits the figures. */
  wrkCpuShare: number;
}

type WrkResult = Omit<LoadResult, 'cpuPerResponse'>;

function positiveInt(name: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer, got ${text}`);
  return n;
}

// --- the two servers, each run in a child process -------------------------------------------------

/** The production defaults, as `start` would serve with no environment. */
function productionConfig(): Config {
  return loadConfig({});
}

async function serveMirror(file: string): Promise<{ url: string; close: () => Promise<void> }> {
  const store = openDatabase(file);
  const server = await buildServer({ store, logger: silentLogger(), config: productionConfig() });
  const url = await server.listen(0, '127.0.0.1');
  return {
    url,
    close: async () => {
      await server.close();
      store.close();
    },
  };
}

async function serveCeiling(file: string): Promise<{ url: string; close: () => Promise<void> }> {
  // The mirror's idle keep-alive, so `Keep-Alive: timeout=65` is the mirror's header byte for byte.
  const { keepAliveTimeoutMs } = productionConfig().server;
  const saved = JSON.parse(readFileSync(file, 'utf8')) as {
    status: number;
    rawHeaders: string[];
    body: string;
  };
  const body = Buffer.from(saved.body, 'base64');
  const server = createServer((_req, res) => {
    res.writeHead(saved.status, saved.rawHeaders);
    res.end(body);
  });
  server.keepAliveTimeout = keepAliveTimeoutMs;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('ceiling server has no port');
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Child mode: serve, tell the parent the URL over IPC, stop when the parent disconnects. */
async function runChild(role: string): Promise<void> {
  const running =
    role === 'mirror'
      ? await serveMirror(values.db ?? '')
      : role === 'ceiling'
        ? await serveCeiling(values.answer ?? '')
        : undefined;
  if (!running) throw new Error(`--serve must be mirror or ceiling, got ${role}`);
  process.once('disconnect', () => {
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error(error);
        process.exit(1);
      },
    );
  });
  // The parent asks for the CPU time spent so far around each measurement.
  process.on('message', (message: unknown) => {
    if (message === 'cpu') process.send?.({ cpu: process.cpuUsage() });
  });
  process.send?.({ url: running.url });
}

// --- the parent: spawn, check, load, report ------------------------------------------------------

interface Child {
  url: string;
  /** CPU time (user + system) the server process has used so far, in microseconds. */
  cpuMicros: () => Promise<number>;
  stop: () => Promise<void>;
}

function startChild(role: 'mirror' | 'ceiling', args: string[]): Promise<Child> {
  const profileDir = values['cpu-prof-dir'];
  const profile = profileDir
    ? // One folder per server: tsx's loader thread writes a profile too, and a fixed
      // --cpu-prof-name would let the two overwrite each other.
      ['--cpu-prof', '--cpu-prof-dir', join(profileDir, role)]
    : [];
  const flags = [...SERVER_NODE_FLAGS, ...profile, '--import', 'tsx'];
  const child = spawn(process.execPath, [...flags, SELF, '--serve', role, ...args], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    if (child.connected) child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${role} server did not start within ${CHILD_START_TIMEOUT_MS} ms`));
    }, CHILD_START_TIMEOUT_MS);
    child.once('message', (message: { url: string }) => {
      clearTimeout(timer);
      resolve({ url: message.url, cpuMicros: () => askCpu(child), stop });
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${role} server exited before listening (code ${code}, signal ${signal})`));
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function askCpu(child: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (message: { cpu: NodeJS.CpuUsage }) =>
      resolve(message.cpu.user + message.cpu.system),
    );
    child.send('cpu');
  });
}

async function syncListing(file: string, entries: number): Promise<number> {
  const upstream = await startSimulatedUpstream({ seed: 11, count: entries, pageSize: PAGE_SIZE });
  const store = openDatabase(file);
  try {
    const summary = await runSync(benchSyncSettings(upstream.url), { store, logger: silentLogger() });
    if (summary.entries !== entries)
      throw new Error(`synced ${summary.entries} entries, expected ${entries}`);
    return summary.pages;
  } finally {
    store.close();
    await upstream.close();
  }
}

/** A spread of pages: the first ones, some in the middle, the last. */
function pagePaths(pages: number): string[] {
  const chosen = new Set([1, 2, 3, Math.ceil(pages / 4), Math.ceil(pages / 2), pages - 1, pages]);
  return [...chosen].filter((p) => p >= 1 && p <= pages).map((p) => `${LIST_PATH}?page=${p}`);
}

function fetchRaw(url: string): Promise<FixedAnswer> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, rawHeaders: res.rawHeaders, body: Buffer.concat(chunks) }),
      );
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** Checks once that every page the load asks for is a 200 with a JSON page of results. */
async function checkMirror(base: string, paths: readonly string[]): Promise<FixedAnswer[]> {
  const answers: FixedAnswer[] = [];
  for (const path of paths) {
    const answer = await fetchRaw(base + path);
    const results = (JSON.parse(answer.body.toString('utf8')) as { results?: unknown[] }).results;
    if (
      answer.status !== 200 ||
      answer.body.length === 0 ||
      !Array.isArray(results) ||
      results.length === 0
    ) {
      throw new Error(`mirror answered ${path} with ${answer.status}, ${answer.body.length} bytes`);
    }
    answers.push(answer);
  }
  return answers;
}

/** The ceiling's answer is the mirror's, byte for byte, but for the Date header's value. */
async function checkCeiling(base: string, mirror: FixedAnswer): Promise<void> {
  const ceiling = await fetchRaw(`${base}${LIST_PATH}?page=2`);
  const head = (a: FixedAnswer): string =>
    JSON.stringify([a.status, a.rawHeaders.map((v, i) => (a.rawHeaders[i - 1] === 'Date' ? '' : v))]);
  if (!ceiling.body.equals(mirror.body) || head(ceiling) !== head(mirror)) {
    throw new Error(`the ceiling does not send the mirror's bytes: ${head(ceiling)} against ${head(mirror)}`);
  }
  console.log(
    `ceiling check: same status, headers (in order, Date's value aside) and ${mirror.body.length} B body`,
  );
}

function withoutPerConnectionHeaders(rawHeaders: readonly string[]): string[] {
  const kept: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] ?? '';
    if (!PER_CONNECTION_HEADERS.has(name.toLowerCase())) kept.push(name, rawHeaders[i + 1] ?? '');
  }
  return kept;
}

const WRK = '/usr/bin/wrk';

/** wrk's Lua hook: each request takes the next path, so one run cycles over all of them. */
function wrkScript(dir: string, paths: readonly string[]): string {
  const file = join(dir, 'paths.lua');
  const list = paths.map((path) => JSON.stringify(path)).join(', ');
  writeFileSync(
    file,
    `local paths = { ${list} }\nlocal i = 0\n` +
      'request = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i])\nend\n',
  );
  return file;
}

/**
 * CPU seconds (user + system) of this process's children that have exited and been reaped:
 * /proc/self/stat's cutime and cstime, in clock ticks of 1/100 s (USER_HZ on Linux).
 */
function reapedChildrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  // Fields after the command name in parentheses, which may itself hold spaces: state is field 3.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[16 - 3]) + Number(fields[17 - 3])) / 100;
}

/** A wrk latency figure (`812.00us`, `1.20ms`, `2.01s`) in milliseconds. */
function wrkMillis(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text ?? '');
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

/** Parses wrk's `--latency` report. */
export function parseWrk(output: string): Omit<WrkResult, 'wrkCpuShare'> {
  const requests = Number(/(\d+) requests in/.exec(output)?.[1] ?? Number.NaN);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  return {
    requests,
    perSecond: Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? Number.NaN),
    p50: wrkMillis(/^\s+50%\s+(\S+)/m.exec(output)?.[1]),
    p99: wrkMillis(/^\s+99%\s+(\S+)/m.exec(output)?.[1]),
    errors: socket ? Number(socket[1]) + Number(socket[2]) + Number(socket[3]) : 0,
    timeouts: socket ? Number(socket[4]) : 0,
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1] ?? 0),
  };
}

/**
 * wrk (C, epoll) drives the load: one thread is enough to saturate one Node process many times over,
 * so the server, not the load generator, is what is measured (autocannon on the same 2 cores
 * saturated first and reported every server alike).
 */
function load(base: string, script: string, seconds: number, connections: number): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const childCpuBefore = reapedChildrenCpuSeconds();
    const started = performance.now();
    const args = ['-t', String(WRK_THREADS), '-c', String(connections), '-d', `${seconds}s`, '--latency'];
    const child = spawn(WRK, [...args, '-s', script, base], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const result = parseWrk(out);
      // wrk is the only child that exits during a run, so what reaped children used is its CPU.
      const wrkCpuShare =
        (reapedChildrenCpuSeconds() - childCpuBefore) / ((performance.now() - started) / 1000);
      if (code !== 0 || !Number.isFinite(result.perSecond)) reject(new Error(`wrk failed (${code}): ${out}`));
      else resolve({ ...result, wrkCpuShare });
    });
  });
}

type Role = 'ceiling' | 'mirror';
type Rounds = Record<Role, LoadResult[]>;

/**
 * Both servers, `rounds` times, the order alternating so a change in the machine's other load
 * does not always land on the same one. Each is warmed up first (JIT, sockets, the mirror's
 * per-media-type caches).
 */
async function measureRounds(
  servers: Record<Role, Child>,
  script: string,
  settings: { seconds: number; warmup: number; connections: number; rounds: number },
): Promise<Rounds> {
  const results: Rounds = { ceiling: [], mirror: [] };
  if (settings.warmup > 0) {
    for (const role of ['ceiling', 'mirror'] as const) {
      await load(servers[role].url, script, settings.warmup, settings.connections);
    }
  }
  for (let round = 0; round < settings.rounds; round++) {
    const order: Role[] = round % 2 === 0 ? ['ceiling', 'mirror'] : ['mirror', 'ceiling'];
    for (const role of order) {
      const server = servers[role];
      const cpuBefore = await server.cpuMicros();
      const result = await load(server.url, script, settings.seconds, settings.connections);
      const cpu = (await server.cpuMicros()) - cpuBefore;
      results[role].push({ ...result, cpuPerResponse: cpu / result.requests });
    }
  }
  return results;
}

/** The round with the most requests/s: other load on the machine only ever takes some away. */
function best(results: readonly LoadResult[]): LoadResult {
  const top = results.reduce<LoadResult | undefined>(
    (a, b) => (a === undefined || b.perSecond > a.perSecond ? b : a),
    undefined,
  );
  if (!top) throw new Error('no round measured');
  return top;
}

function line(label: string, r: LoadResult): string {
  const rps = Math.round(r.perSecond).toLocaleString('en-US');
  return (
    `${label} ${rps.padStart(7)} req/s  p50 ${millis(r.p50).padStart(8)}  p99 ${millis(r.p99).padStart(8)}` +
    `  server CPU ${r.cpuPerResponse.toFixed(1)} µs/response  wrk ${Math.round(r.wrkCpuShare * 100)} % of a core` +
    `  [${r.requests.toLocaleString('en-US')} responses, ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx]`
  );
}

function saveAnswer(dir: string, answer: FixedAnswer): string {
  const file = join(dir, 'ceiling-answer.json');
  const rawHeaders = withoutPerConnectionHeaders(answer.rawHeaders);
  writeFileSync(
    file,
    JSON.stringify({ status: answer.status, rawHeaders, body: answer.body.toString('base64') }),
  );
  return file;
}

function printResults(results: Rounds, labels: Record<Role, string>): void {
  const width = Math.max(labels.ceiling.length, labels.mirror.length) + 1;
  if (results.mirror.length > 1) {
    results.mirror.forEach((mirror, i) => {
      const ceiling = results.ceiling[i];
      if (!ceiling) return;
      console.log(
        `round ${i + 1}: ceiling ${Math.round(ceiling.perSecond).toLocaleString('en-US')} req/s, ` +
          `p99 ${millis(ceiling.p99)}, ${ceiling.cpuPerResponse.toFixed(1)} µs CPU/response; ` +
          `mirror ${Math.round(mirror.perSecond).toLocaleString('en-US')} req/s, p99 ${millis(mirror.p99)}, ` +
          `${mirror.cpuPerResponse.toFixed(1)} µs CPU/response`,
      );
    });
    console.log('best round of each:');
  }
  console.log(line(`${labels.ceiling}:`.padEnd(width), best(results.ceiling)));
  console.log(line(`${labels.mirror}:`.padEnd(width), best(results.mirror)));
  report(best(results.ceiling), best(results.mirror));
  const all = [...results.ceiling, ...results.mirror];
  const busiest = Math.max(...all.map((r) => r.wrkCpuShare));
  console.log(
    `wrk used at most ${Math.round(busiest * 100)} % of a core in any round` +
      (busiest >= WRK_BUSY_SHARE ? ': ✗ the load generator may be the limit, not the server' : ''),
  );
  const failures = all.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0);
  if (failures > 0) {
    console.log(`✗ ${failures} errors, timeouts or non-2xx answers: the figures above are not comparable`);
    process.exitCode = 1;
  }
}

async function runBench(): Promise<void> {
  const seconds = positiveInt('duration', values.duration);
  const connections = positiveInt('connections', values.connections);
  const entries = positiveInt('entries', values.entries);
  const rounds = positiveInt('rounds', values.rounds);
  const warmup = Math.min(Number(values.warmup), seconds);
  await withTempDir(async (dir) => {
    const db = join(dir, 'mirror.db');
    const pages = await syncListing(db, entries);
    const paths = pagePaths(pages);
    console.log(
      `serve: ${entries.toLocaleString('en-US')} entries (${pages} pages of ${PAGE_SIZE}), ${connections} connections, ` +
        `wrk, ${rounds} × ${seconds} s per server after ${warmup} s warm-up, each server in its own process ` +
        `(node ${SERVER_NODE_FLAGS.join(' ')})`,
    );
    console.log(machineLine());
    const mirror = await startChild('mirror', ['--db', db]);
    try {
      const answers = await checkMirror(mirror.url, paths);
      const page2 = answers[1] ?? answers[0];
      if (!page2) throw new Error('no page answered');
      const sizes = answers.map((a) => a.body.length);
      console.log(
        `mirror check: ${paths.length} pages (?page=${paths.map((p) => p.split('=')[1]).join(',')}) → all 200, ` +
          `bodies ${Math.min(...sizes)}–${Math.max(...sizes)} B`,
      );
      const ceiling = await startChild('ceiling', ['--answer', saveAnswer(dir, page2)]);
      try {
        await checkCeiling(ceiling.url, page2);
        const settings = { seconds, warmup, connections, rounds };
        // Page 2 alone by default: the mirror then sends the very bytes the ceiling sends.
        const loadPaths = values.spread ? paths : [`${LIST_PATH}?page=2`];
        const results = await measureRounds({ ceiling, mirror }, wrkScript(dir, loadPaths), settings);
        printResults(results, {
          ceiling: `ceiling (bare node:http, fixed page-2 answer, ${page2.body.length} B)`,
          mirror: values.spread
            ? `mirror (list endpoint, ${paths.length} pages cycled)`
            : 'mirror (list endpoint, page 2)',
        });
      } finally {
        await ceiling.stop();
      }
    } finally {
      await mirror.stop();
    }
  });
}

function report(ceiling: LoadResult, mirror: LoadResult): void {
  const rpsRatio = mirror.perSecond / ceiling.perSecond;
  const p99Ratio = mirror.p99 / ceiling.p99;
  // checkGoal records upper bounds only; the throughput goal (mirror/ceiling ≥ 0.7) is recorded as
  // its inverse and printed the way it is stated.
  checkGoal('serve', 'serve ceiling/mirror req/s', 1 / rpsRatio, 1 / GOAL_RPS_RATIO, '×');
  const rpsMet = Number.isFinite(rpsRatio) && rpsRatio >= GOAL_RPS_RATIO;
  console.log(`mirror/ceiling req/s: ${ratio(rpsRatio)} — goal ≥ ${GOAL_RPS_RATIO} ${rpsMet ? '✓' : '✗'}`);
  console.log(
    `mirror p99 / ceiling p99: ${ratio(p99Ratio)} ${checkGoal('serve', 'serve mirror p99 / ceiling p99', p99Ratio, GOAL_P99_RATIO, '×')}`,
  );
  // No goal: the cost the throughput ratio comes from once the server, not the load, is the limit.
  console.log(
    `mirror/ceiling server CPU per response: ${ratio(mirror.cpuPerResponse / ceiling.cpuPerResponse)}`,
  );
}

if (values.serve !== undefined) await runChild(values.serve);
else await runBench();
