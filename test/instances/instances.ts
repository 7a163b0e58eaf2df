import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { eventually, runCli, type RunningProcess } from '../helpers/process.js';
import type { PostgresServer } from '../helpers/postgres.js';

// Real `start` processes sharing one database: what the multi-instance tests drive.

export const ADMIN_TOKEN = 'instances-admin-token-0123456789';
/** A schedule that never fires within a test: syncs happen when a test asks for them. */
export const NEVER = '0 0 1 1 *';

export interface Instance {
  proc: RunningProcess;
  url: string;
  /** GET the list endpoint's page 1: its status and body. */
  list(): Promise<{ status: number; body: string }>;
  /** Asks this instance for a sync now (the admin route). */
  trigger(): Promise<{ status: number; body: unknown }>;
}

/** Spawns `start` on `database` (a postgres:// URL or a SQLite file) and waits until it serves. */
export async function startInstance(
  database: string,
  upstream: string,
  env: Record<string, string> = {},
): Promise<Instance> {
  const proc = runCli(['start', '--port', '0'], {
    ...(database.startsWith('postgres') ? { DATABASE_URL: database } : { DATABASE_PATH: database }),
    UPSTREAM_URL: upstream,
    ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    SYNC_CRON: NEVER,
    ...env,
  });
  const line = await proc.waitFor(/"msg":"coworker-mirror started"/);
  const url = (JSON.parse(line) as { url: string }).url;
  return {
    proc,
    url,
    list: async () => {
      const response = await fetch(`${url}${LIST_PATH}?page=1`);
      return { status: response.status, body: await response.text() };
    },
    trigger: async () => {
      const response = await fetch(`${url}/api/mirror/sync/`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      return { status: response.status, body: await response.json() };
    },
  };
}

/** The `count` of a list answer. */
export function countOf(body: string): number {
  return (JSON.parse(body) as { count: number }).count;
}

/** Polls the instance's list endpoint until its count is `count`; the answer then. */
export function untilServes(instance: Instance, count: number): Promise<string> {
  return eventually(
    async () => {
      const { status, body } = await instance.list();
      return status === 200 && countOf(body) === count ? body : undefined;
    },
    undefined,
    `${instance.url} to serve ${count} entries`,
  );
}

export interface RunFacts {
  id: number;
  status: string;
  started_at: string;
  finished_at: string | null;
  error_code: string | null;
}

export async function runsOf(admin: pg.Pool): Promise<RunFacts[]> {
  const { rows } = await admin.query<RunFacts>(
    'select id::int as id, status, started_at, finished_at, error_code from runs order by id',
  );
  return rows;
}

/** The pids of a process's direct children (the `sync` child of a `start`). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter((p) => p !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** SIGKILLs a `start` and its sync child at once, as a host dying would. */
export function killInstance(instance: Instance): void {
  const pid = instance.proc.child.pid;
  if (pid === undefined) return;
  for (const child of childrenOf(pid)) process.kill(child, 'SIGKILL');
  instance.proc.child.kill('SIGKILL');
}

/** pg_ctl on a test server's data folder, as the user PostgreSQL runs as. */
export function pgCtl(server: PostgresServer, args: string[]): void {
  const bindir = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' }).stdout.trim();
  const pgCtlPath = join(bindir || '/usr/lib/postgresql/15/bin', 'pg_ctl');
  const full = [pgCtlPath, '-D', join(server.socketDir, 'data'), '-w', ...args];
  const asRoot = process.getuid?.() === 0;
  const result = asRoot
    ? spawnSync('runuser', ['-u', server.superuser, '--', ...full], { encoding: 'utf8' })
    : spawnSync(full[0] ?? '', full.slice(1), { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`pg_ctl ${args.join(' ')} failed:\n${result.stdout}${result.stderr}`);
}

/** Starts the stopped server again on its port and socket folder, as before. */
export function restartPostgres(server: PostgresServer): void {
  const options = `-p ${server.port} -k ${server.socketDir} -h 127.0.0.1 -c fsync=off`;
  pgCtl(server, ['start', '-l', join(server.socketDir, 'restarted.log'), '-o', options]);
}
