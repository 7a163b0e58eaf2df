import { defaultServerConfig } from '../helpers/mirror-server.js';
import { spawnSync } from 'node:child_process';
import { rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { toMirrorError } from '../../src/errors.js';
import { exitCodeFor } from '../../src/cli/exit-codes.js';
import { silentLogger } from '../../src/logger.js';
import { buildServer } from '../../src/http/server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

/** The pid of a process that has exited: provably dead on this host. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

function insertRunningRun(file: string, pid: number): void {
  const raw = new Database(file);
  const at = new Date().toISOString();
  raw
    .prepare(
      `insert into runs (status, started_at, upstream, holder_pid, holder_host, holder_token, heartbeat_at)
       values ('running', ?, 'http://upstream.invalid', ?, ?, 'a-dead-process', ?)`,
    )
    .run(at, pid, hostname(), at);
  raw.close();
}

const serverConfig = { server: { ...defaultServerConfig, snapshotPollMs: 20 } };

describe('the truth about the database', () => {
  it('creates the database, its WAL and SHM files 0600 in a 0700 folder', () => {
    const dir = join(tempDir(), 'data');
    const store = openDatabase(join(dir, 'mirror.db'));
    store.sqlite.prepare("insert into options_bodies (body) values ('{}')").run();
    for (const file of ['mirror.db', 'mirror.db-wal', 'mirror.db-shm']) {
      expect({ file, mode: statSync(join(dir, file)).mode & 0o777 }).toEqual({ file, mode: 0o600 });
    }
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    store.close();
  });

  it('regression: a run whose holder was SIGKILLed reads as aborted in any process that opens the database', async () => {
    const file = join(tempDir(), 'mirror.db');
    openDatabase(file).close();
    insertRunningRun(file, deadPid());

    const readOnly = openDatabase(file, { readonly: true });
    // Shown as aborted without writing: the row itself is untouched.
    expect(await readOnly.getRun(1)).toMatchObject({ status: 'aborted', errorCode: 'RUN_ABORTED' });
    expect((await readOnly.listRuns({ limit: 5 }))[0]?.status).toBe('aborted');
    expect(readOnly.sqlite.prepare('select status from runs').pluck().get()).toBe('running');
    readOnly.close();

    const reader = openDatabase(file);
    expect(reader.sqlite.prepare('select status, error_code from runs').get()).toEqual({
      status: 'aborted',
      error_code: 'RUN_ABORTED',
    });
    reader.close();
  });

  it('serve notices a holder that dies while it runs, within one poll', async () => {
    const file = join(tempDir(), 'mirror.db');
    const store = openDatabase(file);
    const server = await buildServer({ store, logger: silentLogger(), config: serverConfig });
    await server.listen(0, '127.0.0.1');
    insertRunningRun(file, deadPid());
    await expect.poll(() => store.sqlite.prepare('select status from runs').pluck().get()).toBe('aborted');
    await server.close();
    store.close();
  });

  it('database errors are exit 8 with a line saying what to do', () => {
    const file = join(tempDir(), 'mirror.db');
    openDatabase(file).close();
    const readOnly = new Database(file, { readonly: true });
    let thrown: unknown;
    try {
      readOnly.prepare("insert into options_bodies (body) values ('{}')").run();
    } catch (error) {
      thrown = error;
    }
    readOnly.close();
    const error = toMirrorError(thrown);
    expect(error.code).toBe('DB_ERROR');
    expect(error.message).toMatch(/^database error \(SQLITE_READONLY\): .*; make the database file/);
    expect(exitCodeFor(error.code)).toBe(8);
  });

  it('regression: /readyz checks the database and says what is wrong with a damaged file', async () => {
    const dir = tempDir();
    const file = join(dir, 'mirror.db');
    const upstream = await simulatedUpstream({ count: 400 });
    const writer = openDatabase(file);
    await sync(writer, upstream);
    writer.sqlite.pragma('wal_checkpoint(TRUNCATE)');
    writer.close();
    const store = openDatabase(file);
    const server = await buildServer({ store, logger: silentLogger(), config: serverConfig });
    const url = await server.listen(0, '127.0.0.1');
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    truncateSync(file, Math.floor(statSync(file).size / 2));
    const res = await fetch(`${url}/readyz`);
    const body = (await res.json()) as { status: string; reason: string };
    expect(res.status).toBe(503);
    expect(body.status).toBe('unready');
    expect(body.reason).toMatch(/^database error \(SQLITE_(CORRUPT|IOERR)\w*\): .*(backup|disk)/);
    await server.close();
    store.close();
  });

  it('regression: the database file deleted and recreated under serve is noticed, logged and unready', async () => {
    const dir = tempDir();
    const file = join(dir, 'mirror.db');
    const upstream = await simulatedUpstream({ count: 10 });
    const store = openDatabase(file);
    await sync(store, upstream);
    const lines: string[] = [];
    const logger = silentLogger();
    const capture = (obj: { problem?: string }) => void lines.push(obj.problem ?? '');
    logger.error = capture;
    const server = await buildServer({ store, logger, config: serverConfig });
    const url = await server.listen(0, '127.0.0.1');
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    rmSync(file);
    writeFileSync(file, '');
    await expect.poll(() => lines.length).toBeGreaterThan(0);
    expect(lines[0]).toMatch(/was replaced while open/);
    const res = await fetch(`${url}/readyz`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { reason: string }).reason).toMatch(/replaced while open/);
    await server.close();
    store.close();
  });
});
