/**
 * The list endpoint from a PostgreSQL-backed instance against a SQLite-backed one, same run: the same
 * `--entries` synced from the simulated upstream into a SQLite file and into a real PostgreSQL
 * (initdb in a temp folder), each served by the mirror in its own process (this script again, with
 * `--serve`), loaded by wrk (one thread, `--connections`, `--duration` s, after a warm-up) cycling
 * over every page. The snapshot is served from memory, so the database should not show: goal
 * PostgreSQL / SQLite requests/s ≥ 0.95. `--rounds` alternate the order; the ratio is of each server's
 * median round (a shared machine's neighbours move single rounds both ways).
 *
 *   npx tsx bench/pg-serve.ts [--entries 1000] [--duration 10] [--connections 64] [--rounds 5]
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { loadConfig } from '../src/config/load-config.js';
import { openDatabase } from '../src/db/open.js';
import { openPgStore } from '../src/db/postgres/store.js';
import type { Store } from '../src/db/store.js';
import { buildServer } from '../src/http/server.js';
import { silentLogger } from '../src/logger.js';
import { startSimulatedUpstream } from '../src/simulated-upstream/index.js';
import { runSync } from '../src/sync/run-sync.js';
import { LIST_PATH } from '../src/upstream/contract.js';
import { pgTarget, startPostgres } from '../test/helpers/postgres.js';
import { machineLine, ratio } from './lib/report.js';
import { median } from './lib/stats.js';
import { benchSyncSettings } from './lib/settings.js';
import { withTempDir } from './lib/temp-dir.js';

const SELF = fileURLToPath(import.meta.url);
const WRK = '/usr/bin/wrk';
const GOAL = 0.95;
const PAGE_SIZE = 8;

const { values } = parseArgs({
  options: {
    entries: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    rounds: { type: 'string', default: '5' },
    serve: { type: 'string' },
    db: { type: 'string' },
  },
});

type Kind = 'sqlite' | 'postgres';

async function openKind(kind: Kind, db: string): Promise<Store & { close(): void | Promise<void> }> {
  return kind === 'sqlite' ? openDatabase(db) : openPgStore(pgTarget(db), {});
}

/** The child: one mirror over the given database, its URL sent to the parent, closed on disconnect. */
async function serve(kind: Kind, db: string): Promise<void> {
  const store = await openKind(kind, db);
  const server = await buildServer({ store, logger: silentLogger(), config: loadConfig({}) });
  const url = await server.listen(0, '127.0.0.1');
  process.send?.({ url });
  process.once('disconnect', () => {
    void server.close().then(() => store.close());
  });
}

function startChild(kind: Kind, db: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    ['--max-semi-space-size=2', '--import', 'tsx', SELF, '--serve', kind, '--db', db],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('message', (message: { url: string }) => resolve({ url: message.url, child }));
    child.once('exit', (code) => reject(new Error(`${kind} server exited (${code}) before it listened`)));
  });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.disconnect();
  await exited;
}

async function sync(kind: Kind, db: string, upstream: string): Promise<void> {
  const store = await openKind(kind, db);
  try {
    await runSync(benchSyncSettings(upstream), { store, logger: silentLogger() });
  } finally {
    await store.close();
  }
}

/** wrk's requests/s over every page, cycled by its Lua hook. */
function wrk(url: string, script: string, seconds: number): { perSecond: number; non2xx: number } {
  const args = ['-t1', `-c${values.connections}`, `-d${seconds}s`, '-s', script, url];
  const out = spawnSync(WRK, args, { encoding: 'utf8' }).stdout;
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? Number.NaN);
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  return { perSecond, non2xx };
}

async function bench(dir: string): Promise<void> {
  const entries = Number(values.entries);
  const seconds = Number(values.duration);
  const upstream = await startSimulatedUpstream({ seed: 3, count: entries, pageSize: PAGE_SIZE });
  const pg = await startPostgres();
  const dbs: Record<Kind, string> = {
    sqlite: join(dir, 'mirror.db'),
    postgres: pg.url(await pg.createDatabase('serve')),
  };
  const children: ChildProcess[] = [];
  try {
    for (const kind of ['sqlite', 'postgres'] as const) await sync(kind, dbs[kind], upstream.url);
    const pages = Math.ceil(entries / PAGE_SIZE);
    const paths = Array.from({ length: pages }, (_, i) => `${LIST_PATH}?page=${i + 1}`);
    const script = join(dir, 'pages.lua');
    writeFileSync(
      script,
      `local paths = {${paths.map((p) => JSON.stringify(p)).join(',')}}\nlocal i = 0\n` +
        'request = function()\n  i = i % #paths + 1\n  return wrk.format("GET", paths[i])\nend\n',
    );
    const urls = {} as Record<Kind, string>;
    for (const kind of ['sqlite', 'postgres'] as const) {
      const started = await startChild(kind, dbs[kind]);
      children.push(started.child);
      urls[kind] = started.url;
      wrk(started.url, script, 2);
    }
    const perSecond: Record<Kind, number[]> = { sqlite: [], postgres: [] };
    for (let round = 0; round < Number(values.rounds); round++) {
      const order: Kind[] = round % 2 === 0 ? ['sqlite', 'postgres'] : ['postgres', 'sqlite'];
      for (const kind of order) {
        const r = wrk(urls[kind], script, seconds);
        if (r.non2xx > 0) throw new Error(`${kind}: ${r.non2xx} non-2xx answers`);
        console.log(
          `round ${round + 1} ${kind.padEnd(8)} ${Math.round(r.perSecond).toLocaleString('en-US')} req/s`,
        );
        perSecond[kind].push(r.perSecond);
      }
    }
    const mid = { sqlite: median(perSecond.sqlite), postgres: median(perSecond.postgres) };
    const r = mid.postgres / mid.sqlite;
    console.log(
      `pg-serve: ${entries.toLocaleString('en-US')} entries, ${pages} pages, wrk -t1 -c${values.connections} -d${seconds}s; ` +
        `median of ${values.rounds} rounds: sqlite ${Math.round(mid.sqlite)} req/s, postgres ${Math.round(mid.postgres)} req/s, ` +
        `ratio ${ratio(r)} — goal ≥ ${GOAL} ${r >= GOAL ? '✓' : '✗'}`,
    );
  } finally {
    await Promise.all(children.map(stopChild));
    await pg.stop();
    await upstream.close();
  }
}

if (values.serve !== undefined) {
  await serve(values.serve as Kind, values.db ?? '');
} else {
  console.log(machineLine());
  await withTempDir(bench);
}
