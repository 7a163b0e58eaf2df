import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { ensureBuilt, eventually, runCli } from '../helpers/process.js';
import { WAIT_MS } from '../helpers/patience.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { freePort } from '../helpers/postgres.js';
import { SECRET_CASES } from '../helpers/secret-settings.js';

beforeAll(() => ensureBuilt());

const PASSWORD = 'pw-7Hq2-never-shown';
const TOKEN = 'tok-9Vx4-never-shown';
const API_KEY = 'key-3Lm8-never-shown';

/**
 * Every byte the mirror left on disk (the database's main file, WAL and shared memory, and its
 * media folder with the local snapshot of what it served), as text to search.
 */
function databaseBytes(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1'))
    .join('\n');
}

const basic = (userPass: string) => `Basic ${Buffer.from(userPass).toString('base64')}`;

describe('secrets in the upstream URL, token and header', () => {
  it('the password is sent as Basic auth, and is in no log line, API answer or database byte', async () => {
    const upstream = await simulatedUpstream({ seed: 41, count: 20 });
    const dir = tempDir();
    const withCredentials = upstream.url.replace('http://', `http://mirror:${PASSWORD}@`);
    const proc = runCli(['start', '--port', '0'], {
      UPSTREAM_URL: withCredentials,
      DATABASE_PATH: join(dir, 'mirror.db'),
      SYNC_CRON: '0 0 1 1 *',
      LOG_LEVEL: 'trace',
      ADMIN_TOKEN: 'admin-token-0123456789',
    });
    const line = await proc.waitFor(/"msg":"coworker-mirror started"/);
    const url = (JSON.parse(line) as { url: string }).url;
    await eventually(
      async () =>
        ((await (await fetch(`${url}/readyz`)).json()) as { status: string }).status === 'ready' || undefined,
      WAIT_MS,
      'a successful run',
    );
    const answers: string[] = [];
    for (const path of [
      '/api/mirror/runs/',
      '/api/mirror/runs/1/',
      '/api/mirror/changes/',
      '/api/mirror/coworkers/',
      '/readyz',
      '/healthz',
      '/metrics',
      LIST_PATH,
    ]) {
      const res = await fetch(`${url}${path}`);
      const headers: string[] = [];
      res.headers.forEach((value, name) => headers.push(`${name}: ${value}`));
      answers.push(`${path} ${res.status} ${JSON.stringify(headers)} ${await res.text()}`);
    }
    const runs = (await (await fetch(`${url}/api/mirror/runs/`)).json()) as {
      results: { upstream: string }[];
    };
    expect(runs.results[0]?.upstream).toBe(upstream.url.replace('http://', 'http://mirror:***@'));
    proc.child.kill('SIGTERM');
    expect((await proc.exited).code).toBe(0);

    expect(upstream.requests.length).toBeGreaterThan(0);
    for (const request of upstream.requests) {
      expect(request.headers.authorization).toBe(basic(`mirror:${PASSWORD}`));
    }
    expect(proc.output()).toContain('mirror:***@');
    expect(proc.output()).not.toContain(PASSWORD);
    for (const answer of answers) expect(answer).not.toContain(PASSWORD);
    expect(databaseBytes(dir)).not.toContain(PASSWORD);
  });

  it('a bearer token and a header go to every request, and nowhere else', async () => {
    const upstream = await simulatedUpstream({ seed: 42, count: 12 });
    const dir = tempDir();
    const env = { UPSTREAM_TOKEN: TOKEN, UPSTREAM_HEADER: `X-Api-Key: ${API_KEY}`, LOG_LEVEL: 'trace' };
    const sync = runCli(['sync', '--upstream', upstream.url, '--db', join(dir, 'mirror.db')], env);
    expect((await sync.exited).code).toBe(EXIT.ok);
    const runs = runCli(['runs', '--json', '--db', join(dir, 'mirror.db')], {});
    expect((await runs.exited).code).toBe(EXIT.ok);
    expect(runs.output()).toContain('"status":"succeeded"');
    expect(upstream.requests.length).toBeGreaterThan(0);
    for (const request of upstream.requests) {
      expect(request.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-api-key': API_KEY });
    }
    for (const text of [sync.output(), runs.output(), databaseBytes(dir)]) {
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(API_KEY);
    }
  });

  it('a configuration error never echoes a secret', async () => {
    const proc = runCli(['start'], {
      ADMIN_TOKEN: 'short-secret',
      UPSTREAM_TOKEN: TOKEN,
      UPSTREAM_URL: `ftp://mirror:${PASSWORD}@example.com`,
    });
    expect((await proc.exited).code).toBe(EXIT.usage);
    expect(proc.output()).toContain(
      'ADMIN_TOKEN: got 12 characters, not shown: expected at least 16 characters',
    );
    expect(proc.output()).toContain(
      'UPSTREAM_URL: got 44 characters, not shown: expected an absolute http(s) URL',
    );
    for (const secret of ['short-secret', TOKEN, PASSWORD]) expect(proc.output()).not.toContain(secret);
  });
});

describe('every setting that may hold a secret is refused without it', () => {
  it.each(SECRET_CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const proc = runCli(['start'], c.env);
    expect((await proc.exited).code).toBe(EXIT.usage);
    const lines = proc.output().split('\n');
    expect(lines.filter((l) => l.startsWith('  '))).toEqual(c.issues.map((i) => `  ${i.name}: ${i.problem}`));
    for (const text of c.secrets) expect(proc.output()).not.toContain(text);
  });
});

describe('errors after the configuration never show a secret', () => {
  it('a database that cannot be reached: exit 8, the password masked', async () => {
    const url = `postgres://mirror:${PASSWORD}@127.0.0.1:${await freePort()}/mirror?connect_timeout=2`;
    for (const args of [['runs'], ['sync', '--upstream', 'http://127.0.0.1:9']]) {
      const proc = runCli(args, { DATABASE_URL: url });
      expect((await proc.exited).code).toBe(EXIT.database);
      expect(proc.output()).toContain('mirror:***@127.0.0.1');
      expect(proc.output()).not.toContain(PASSWORD);
    }
  });

  it('an upstream and a webhook that refuse: the run, the delivery log and the database show neither secret', async () => {
    const dir = tempDir();
    const db = join(dir, 'mirror.db');
    const hook = `http://127.0.0.1:${await freePort()}/build_hooks/${TOKEN}`;
    const env = {
      DATABASE_PATH: db,
      UPSTREAM_URL: `http://mirror:${PASSWORD}@127.0.0.1:${await freePort()}`,
      WEBHOOK_URLS: hook,
      WEBHOOK_FAILURE_THRESHOLD: '1',
      WEBHOOK_RETRY_SCHEDULE: '1h',
      UPSTREAM_MAX_ATTEMPTS: '1',
    };
    const sync = runCli(['sync'], env);
    expect((await sync.exited).code).toBe(EXIT.upstreamUnreachable);
    const runs = runCli(['runs', '--json'], { DATABASE_PATH: db });
    expect((await runs.exited).code).toBe(EXIT.ok);
    expect(runs.output()).toContain('"status":"failed"');
    // The delivery log, as one who holds the database but not the configuration reads it.
    const deliveries = runCli(['deliveries', '--json'], { DATABASE_PATH: db });
    expect((await deliveries.exited).code).toBe(EXIT.ok);
    const [delivery] = deliveries
      .output()
      .trim()
      .split('\n')
      .map(
        (line) =>
          JSON.parse(line) as {
            endpoint: { url: string };
            last_attempt: { error: { message: string } | null } | null;
          },
      );
    expect(delivery?.last_attempt?.error?.message).toBe('connection refused');
    // The endpoint by its key, keyed under the database's own: not the URL's plain SHA-256.
    const plainDigest = createHash('sha256').update(new URL(hook).href).digest('hex');
    expect(delivery?.endpoint.url).toMatch(/^webhook:[0-9a-f]{64}$/);
    expect(delivery?.endpoint.url).not.toBe(`webhook:${plainDigest}`);
    for (const text of [sync.output(), runs.output(), deliveries.output(), databaseBytes(dir)]) {
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(TOKEN);
      expect(text).not.toContain(plainDigest);
    }
  });
});
