import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt());

async function cli(args: string[], env: Record<string, string> = {}) {
  const proc = runCli(args, env);
  const { code } = await proc.exited;
  return { code, output: proc.output() };
}

/** Runs the CLI and keeps stdout and stderr apart. */
async function cliStreams(args: string[], env: Record<string, string> = {}) {
  const proc = runCli(args, env);
  let stdout = '';
  let stderr = '';
  proc.child.stdout?.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  proc.child.stderr?.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const { code } = await proc.exited;
  return { code, stdout, stderr };
}

async function syncedDatabase(): Promise<{ db: string; url: string }> {
  const upstream = await simulatedUpstream({ seed: 31, count: 12 });
  const db = join(tempDir(), 'mirror.db');
  const sync = await cli(['sync', '--upstream', upstream.url, '--db', db]);
  expect(sync.code, sync.output).toBe(EXIT.ok);
  return { db, url: upstream.url };
}

const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

describe('the CLI at the front door (built CLI, real processes)', () => {
  it.each([
    [['runs']],
    [['changes']],
    [['history', 'z'.repeat(32)]],
    [['find', 'anna']],
    [['serve', '--port', '0']],
    [['deliveries']],
  ])('%j on a database that does not exist exits 2 naming it, and creates nothing', async (args) => {
    const dir = tempDir();
    const db = join(dir, 'typo', 'mirro.db');
    const { code, output } = await cli([...args, '--db', db]);
    expect(code).toBe(EXIT.usage);
    expect(output).toBe(
      `coworker-mirror: no database at ${db}; nothing was created. Check --db (or DATABASE_PATH), or run a sync first\n`,
    );
    expect(existsSync(join(dir, 'typo'))).toBe(false);
  });

  it('read commands work on a read-only file and in a read-only folder, changing nothing', async () => {
    const { db } = await syncedDatabase();
    const before = digest(db);
    chmodSync(db, 0o444);
    const onFile = await cli(['runs', '--json', '--db', db]);
    expect(onFile.code, onFile.output).toBe(EXIT.ok);
    expect(JSON.parse(onFile.output)).toMatchObject({ id: 1, status: 'succeeded' });
    chmodSync(db, 0o644);
    const folder = join(db, '..');
    chmodSync(folder, 0o555);
    onTestFinished(() => chmodSync(folder, 0o755));
    const inFolder = await cli(['changes', '--json', '--limit', '1', '--db', db]);
    expect(inFolder.code, inFolder.output).toBe(EXIT.ok);
    expect(digest(db)).toBe(before);
  });

  it('a database written by a newer version is refused by every command with exit 2, unchanged', async () => {
    const { db, url } = await syncedDatabase();
    const sqlite = new Database(db);
    sqlite.prepare('insert into __drizzle_migrations (hash, created_at) values (?, ?)').run('future', 9e12);
    sqlite.close();
    const before = digest(db);
    for (const args of [['runs'], ['sync', '--upstream', url], ['start', '--upstream', url, '--port', '0']]) {
      const { code, output } = await cli([...args, '--db', db]);
      expect(code, output).toBe(EXIT.usage);
      expect(output).toContain(`database ${db} was written by a newer version of coworker-mirror`);
    }
    expect(digest(db)).toBe(before);
  });

  it('changes --field with a typo exits 2 listing the fields', async () => {
    const { db } = await syncedDatabase();
    const { code, output } = await cli(['changes', '--field', 'nmae', '--db', db]);
    expect(code).toBe(EXIT.usage);
    expect(output).toContain(
      '--field: unknown field "nmae"; the fields are name, post, emoji_file, emoji_file_webm, show_image, images',
    );
  });

  it('sync: the summary alone on stdout, log lines on stderr', async () => {
    const upstream = await simulatedUpstream({ seed: 32, count: 10 });
    const db = join(tempDir(), 'mirror.db');
    const { code, stdout, stderr } = await cliStreams(['sync', '--upstream', upstream.url, '--db', db]);
    expect(code).toBe(EXIT.ok);
    expect(stdout).toMatch(
      /^run 1 succeeded: 10 entries on 2 pages; 10 added, 0 changed, 0 removed, 0 returned, 0 unchanged \(\d+\.\d s\)\n$/,
    );
    const logLines = stderr.trim().split('\n');
    expect(logLines.length).toBeGreaterThan(1);
    for (const line of logLines) expect(JSON.parse(line)).toHaveProperty('msg');
  });

  it('a broken database file: one or two lines saying what and what to do; the stack only at debug', async () => {
    const db = join(tempDir(), 'notes.db');
    writeFileSync(db, 'these are my notes, not a database '.repeat(200));
    const plain = await cliStreams(['runs', '--db', db]);
    expect(plain.code).toBe(EXIT.database);
    expect(plain.stderr.trim().split('\n')).toEqual([
      `coworker-mirror: cannot prepare database ${db}: file is not a database`,
      'hint: the file is not a SQLite database: point DATABASE_PATH at the mirror database or restore a backup',
    ]);
    const debug = await cliStreams(['runs', '--db', db], { LOG_LEVEL: 'debug' });
    expect(debug.stderr).toMatch(/\n\s+at /);
  });

  it('a database is bound to its upstream: another one exits 2 naming both, --rebind switches and is recorded', async () => {
    const { db, url: first } = await syncedDatabase();
    const other = await simulatedUpstream({ seed: 33, count: 5 });
    const refused = await cli(['sync', '--upstream', other.url, '--db', db]);
    expect(refused.code).toBe(EXIT.usage);
    expect(refused.output).toContain(`database ${db} mirrors ${first}, not ${other.url}.`);
    expect(refused.output).toContain('--rebind');
    // Another upstream replaces every entry: a drop held for confirmation but for SYNC_CONFIRM_DROP=0.
    const rebound = await cli(['sync', '--upstream', other.url, '--db', db, '--rebind'], {
      SYNC_CONFIRM_DROP: '0',
    });
    expect(rebound.code, rebound.output).toBe(EXIT.ok);
    const again = await cli(['sync', '--upstream', other.url, '--db', db]);
    expect(again.code, again.output).toBe(EXIT.ok);
    const runs = await cli(['runs', '--json', '--db', db]);
    const rows = runs.output
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; upstream: string; rebound_from: string | null });
    expect(rows.map((r) => [r.id, r.upstream, r.rebound_from])).toEqual([
      [3, other.url, null],
      [2, other.url, first],
      [1, first, null],
    ]);
  });

  it('start with NODE_ENV=production and no UPSTREAM_URL exits 2, naming it and DEMO=1', async () => {
    const { code, output } = await cli(['start', '--port', '0'], {
      NODE_ENV: 'production',
      DATABASE_PATH: join(tempDir(), 'm.db'),
      UPSTREM_URL: 'https://example.com',
    });
    expect(code).toBe(EXIT.usage);
    expect(output).toBe(
      'coworker-mirror: warning: unknown variable UPSTREM_URL is ignored; did you mean UPSTREAM_URL?\n' +
        'coworker-mirror: invalid configuration:\n' +
        '  UPSTREAM_URL: not set, and NODE_ENV=production: set UPSTREAM_URL to the site to mirror ' +
        '(e.g. https://example.com), or DEMO=1 to run the demo on purpose\n',
    );
  });

  it('a busy DEMO_UPSTREAM_PORT exits 2 naming it, without a stack', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    onTestFinished(() => new Promise<void>((r) => blocker.close(() => r())));
    const port = (blocker.address() as AddressInfo).port;
    const { code, output } = await cli(['start', '--port', '0'], {
      DEMO_UPSTREAM_PORT: String(port),
      DATABASE_PATH: join(tempDir(), 'demo.db'),
    });
    expect(code).toBe(EXIT.usage);
    // The media host takes the port after it and listens first: a parallel test's outgoing
    // connection may hold that one (the blocker's port is ephemeral), and it is this setting's too.
    expect(output).toMatch(
      new RegExp(
        `DEMO_UPSTREAM_PORT: cannot listen on 127\\.0\\.0\\.1:(${port}|${port + 1}) \\(EADDRINUSE\\); choose another DEMO_UPSTREAM_PORT`,
      ),
    );
    expect(output).not.toMatch(/\n\s+at /);
  });

  it('the full list URL pasted as the upstream is crawled as its base; a query is refused', async () => {
    const upstream = await simulatedUpstream({ seed: 34, count: 9 });
    const db = join(tempDir(), 'mirror.db');
    const pasted = await cli(['sync', '--upstream', `${upstream.url}${LIST_PATH}`, '--db', db]);
    expect(pasted.code, pasted.output).toBe(EXIT.ok);
    const query = await cli(['sync', '--upstream', `${upstream.url}${LIST_PATH}?page=2`, '--db', db]);
    expect(query.code).toBe(EXIT.usage);
    // Not shown: a query may carry a token.
    expect(query.output).toMatch(
      /--upstream: got \d+ characters, not shown: expected the site's base URL without a query or fragment/,
    );
  });

  it('simulate runs the simulated upstream alone until SIGTERM', async () => {
    const proc = runCli(['simulate', '--port', '0', '--count', '10'], {});
    const line = await proc.waitFor(/simulated upstream listening/);
    const { list } = JSON.parse(line) as { list: string };
    const page = await fetch(list);
    expect(page.status).toBe(200);
    expect(((await page.json()) as { count: number }).count).toBe(10);
    proc.child.kill('SIGTERM');
    expect(await proc.exited).toEqual({ code: 0, signal: null });
  });

  it('find and history --name find a coworker by part of the name', async () => {
    const { db } = await syncedDatabase();
    const found = await cli(['find', 'a', '--json', '--db', db]);
    const first = JSON.parse(found.output.split('\n')[0] ?? '') as { uuid: string; name: string };
    const exact = await cli(['find', first.name, '--json', '--db', db]);
    expect(exact.code).toBe(EXIT.ok);
    const history = await cli(['history', '--name', first.name, '--db', db], { TZ: 'UTC' });
    if (exact.output.trim().split('\n').length === 1) {
      expect(history.code, history.output).toBe(EXIT.ok);
      expect(history.output.split('\n')[0]).toBe(`${first.name}  ${first.uuid}`);
    } else {
      expect(history.code).toBe(EXIT.usage);
    }
    const nobody = await cli(['history', '--name', 'Nobody By This Name', '--db', db]);
    expect(nobody.code).toBe(EXIT.notFound);
  });
});

describe('folders', () => {
  it('sync still creates the database and its folder', async () => {
    const upstream = await simulatedUpstream({ seed: 35, count: 3 });
    const dir = join(tempDir(), 'new', 'place');
    mkdirSync(join(dir, '..'), { recursive: true });
    const { code } = await cli(['sync', '--upstream', upstream.url, '--db', join(dir, 'm.db')]);
    expect(code).toBe(EXIT.ok);
    expect(existsSync(join(dir, 'm.db'))).toBe(true);
  });
});
