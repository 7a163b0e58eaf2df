import { copyFileSync, existsSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { LOCAL_SNAPSHOT_FILE } from '../../src/http/local-snapshot-file.js';
import type { SimulatedUpstream } from '../../src/simulated-upstream/index.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { describePostgres, usePostgres } from '../helpers/postgres.js';
import { ensureBuilt, eventually, runCli, type RunningProcess } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';
import { hostFiles, mediaHost, sha256 } from '../media/harness.js';

// A restart while PostgreSQL is away: the instance serves the local snapshot it last served, and
// completes its start once the database is back. Real processes, a real PostgreSQL stopped and
// started again on the same data.

beforeAll(() => ensureBuilt(), 120_000);

/** The Done criterion: the same bytes within this, from the process's start, with the database away. */
const SERVED_WITHIN_MS = 15_000;

/** What a client sees of one answer: enough to say "the same bytes as before". */
interface Answer {
  status: number;
  type: string | null;
  etag: string | null;
  lastModified: string | null;
  body: string;
}

async function answerOf(url: string): Promise<Answer> {
  const res = await fetch(url);
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    etag: res.headers.get('etag'),
    lastModified: res.headers.get('last-modified'),
    body: Buffer.from(await res.arrayBuffer()).toString('base64'),
  };
}

/** The list's pages and one media file its answers point at, as the served base answers them. */
function servedPaths(media: Map<string, Buffer>): string[] {
  const [url, bytes] = [...media][0] ?? ['', Buffer.alloc(0)];
  return [
    LIST_PATH,
    `${LIST_PATH}?page=2`,
    `${LIST_PATH}?page=3`,
    `${LIST_PATH}?format=json&page=2`,
    `/media/${sha256(bytes)}/${url.split('/').at(-1) ?? ''}`,
  ];
}

async function answersOf(base: string, paths: string[]): Promise<Record<string, Answer>> {
  const answers: Record<string, Answer> = {};
  for (const path of paths) answers[path] = await answerOf(`${base}${path}`);
  return answers;
}

/** The URL the server says it serves, or a failure with its output when it exits first. */
async function baseOf(server: RunningProcess): Promise<string> {
  const exited = server.exited.then(({ code }) => {
    throw new Error(`exited ${code} before serving:\n${server.output().slice(-3000)}`);
  });
  const line = await Promise.race([
    server.waitFor(/"msg":"serving the mirror"|"msg":"coworker-mirror started"/),
    exited,
  ]);
  return (JSON.parse(line) as { url: string }).url;
}

/** Far past any start-up's bound: a refused start still running then serves what it should not. */
const HANG_MS = 60_000;

/** The exit code, or a failure naming the output when the process is still running after HANG_MS. */
async function exitCode(command: RunningProcess): Promise<number | null> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`still running after ${HANG_MS} ms:\n${command.output().slice(-3000)}`)),
      HANG_MS,
    );
  });
  try {
    return (await Promise.race([command.exited, hung])).code;
  } finally {
    clearTimeout(timer);
  }
}

async function stopped(server: RunningProcess): Promise<number | null> {
  server.child.kill('SIGTERM');
  return (await server.exited).code;
}

interface Mirror {
  cwd: string;
  env: Record<string, string>;
  upstream: SimulatedUpstream;
  media: Map<string, Buffer>;
  /** The local snapshot of its media folder. */
  file: string;
}

/** A mirror on its own PostgreSQL database, synced once with media, in a working folder of its own. */
async function syncedMirror(url: string, database: string, port: number, seed: number): Promise<Mirror> {
  const host = await mediaHost();
  const upstream = await simulatedUpstream({ seed, count: 20, mediaBaseUrl: host.mediaBaseUrl });
  const cwd = tempDir();
  const env = {
    DATABASE_URL: url,
    MEDIA_ORIGINS: host.url,
    MEDIA_TIMEOUT: '5s',
    MEDIA_REWRITE: 'true',
    // The answers name the mirror by this, so they are the same bytes whatever port a restart gets.
    PUBLIC_BASE_URL: 'http://mirror.test',
    SNAPSHOT_POLL: '200ms',
  };
  const sync = runCli(['sync', '--upstream', upstream.url], env, cwd);
  expect({ code: (await sync.exited).code }).toEqual({ code: 0 });
  const media = hostFiles(upstream, host);
  const file = join(cwd, 'data', `${database}@127.0.0.1-${port}.media`, LOCAL_SNAPSHOT_FILE);
  return { cwd, env, upstream, media, file };
}

/** Serves the mirror with its database up until the local snapshot is written; returns what it served. */
async function servedWhileUp(mirror: Mirror): Promise<Record<string, Answer>> {
  const serve = runCli(['serve', '--port', '0'], mirror.env, mirror.cwd);
  const base = await baseOf(serve);
  await serve.waitFor(/"msg":"local snapshot written"/);
  const answers = await answersOf(base, servedPaths(mirror.media));
  expect(await stopped(serve)).toBe(0);
  return answers;
}

describePostgres('an instance restarted while PostgreSQL is away', () => {
  const pg = usePostgres();

  it('serves the same bytes from its local snapshot within 15 s, says why on /readyz, and follows commits once the database is back', async () => {
    const { port } = pg.server;
    const mirror = await syncedMirror(pg.url, pg.database, port, 31);
    const before = await servedWhileUp(mirror);
    expect(Object.values(before).map((a) => a.status)).toEqual([200, 200, 200, 200, 200]);

    await pg.server.shutDown();
    const started = performance.now();
    const serve = runCli(['serve', '--port', '0'], mirror.env, mirror.cwd);
    const base = await baseOf(serve);
    const firstOk = await eventually(async () =>
      (await fetch(`${base}${LIST_PATH}`)).ok ? true : undefined,
    );
    const servedAfterMs = performance.now() - started;
    expect(firstOk).toBe(true);
    expect(servedAfterMs).toBeLessThan(SERVED_WITHIN_MS);
    console.info(
      `cold start: first 200 of the list ${Math.round(servedAfterMs)} ms after the process started`,
    );

    expect(await answersOf(base, servedPaths(mirror.media))).toEqual(before);
    const readyz = await fetch(`${base}/readyz`);
    expect({ status: readyz.status, body: (await readyz.json()) as unknown }).toEqual({
      status: 503,
      body: {
        status: 'unready',
        reason: expect.stringMatching(
          /^serving the local snapshot of run 1 from \S+Z because the database is unavailable \(cannot connect to PostgreSQL at postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:\d+\/mirror_[0-9a-f]+: nothing accepts connections at 127\.0\.0\.1:\d+: .*\)$/,
        ) as unknown,
      },
    });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics.split('\n').find((l) => l.startsWith('coworker_mirror_database_up '))).toBe(
      'coworker_mirror_database_up 0',
    );
    const page = await fetch(`${base}/changes/`, { headers: { accept: 'text/html' } });
    expect([page.status, page.headers.get('content-type'), page.headers.get('retry-after')]).toEqual([
      503,
      'text/html; charset=utf-8',
      '5',
    ]);
    expect(serve.output()).toMatch(
      /"msg":"database unavailable at start: serving the local snapshot until it answers"/,
    );

    // The database back: the instance completes its start, then follows a new commit.
    await pg.server.startAgain();
    await eventually(async () => ((await fetch(`${base}/readyz`)).status === 200 ? true : undefined));
    await serve.waitFor(/"msg":"database reachable again; completing the start"/);
    mirror.upstream.data.add(3);
    const sync = runCli(['sync', '--upstream', mirror.upstream.url], mirror.env, mirror.cwd);
    expect((await sync.exited).code).toBe(0);
    const grown = await eventually(async () => {
      const body = (await (await fetch(`${base}${LIST_PATH}`)).json()) as { count: number };
      return body.count === 23 ? body.count : undefined;
    });
    expect(grown).toBe(23);
    await serve.waitFor(/"runId":2,.*"msg":"local snapshot written"/);
    expect(await stopped(serve)).toBe(0);
    // Only one line for the outage, however many attempts it took.
    expect(
      serve.output().match(/"msg":"database still unavailable; trying again in the background"/g)?.length ??
        0,
    ).toBeLessThanOrEqual(1);
  });

  it('refuses a local snapshot that is torn, of another mirror or missing, by name, and exits 8 as before; SIGTERM while waiting exits 0', async () => {
    const { port } = pg.server;
    const [first, second] = [await pg.server.createDatabase(), await pg.server.createDatabase()];
    const one = await syncedMirror(pg.server.url(first), first, port, 32);
    const two = await syncedMirror(pg.server.url(second), second, port, 33);
    await servedWhileUp(one);
    await servedWhileUp(two);
    const good = readFileSync(two.file);
    await pg.server.shutDown();

    const refusedWith = async (reason: RegExp) => {
      const serve = runCli(['serve', '--port', '0'], two.env, two.cwd);
      expect(await exitCode(serve)).toBe(EXIT.database);
      const message =
        serve
          .output()
          .split('\n')
          .find((l) => l.startsWith('coworker-mirror: ')) ?? '';
      expect(message).toMatch(/cannot connect to PostgreSQL at .*nothing accepts connections/);
      expect(message).toMatch(reason);
      expect(serve.output()).toMatch(/"msg":"local snapshot refused; it is not served"/);
    };
    const at = two.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

    const flipped = Buffer.from(good);
    flipped[flipped.length >> 1] = (flipped[flipped.length >> 1] ?? 0) ^ 0x01;
    writeFileSync(two.file, flipped);
    await refusedWith(
      new RegExp(
        `the local snapshot was not served: ${at}: its checksum does not match: the file is torn or altered$`,
      ),
    );

    writeFileSync(two.file, good);
    truncateSync(two.file, good.length - 100);
    await refusedWith(
      new RegExp(
        `the local snapshot was not served: ${at}: its checksum does not match: the file is torn or altered$`,
      ),
    );

    copyFileSync(one.file, two.file);
    await refusedWith(
      new RegExp(
        `the local snapshot was not served: ${at}: written for another mirror \\(mirror id [0-9a-f-]{36}, database \\S+/${first}\\), while owner\\.json names mirror id [0-9a-f-]{36}$`,
      ),
    );

    rmSync(two.file);
    expect(existsSync(two.file)).toBe(false);
    await refusedWith(
      new RegExp(
        `the local snapshot was not served: ${at}: no local snapshot there \\(none was written yet\\)$`,
      ),
    );

    // Whole and its own again: `start` serves it, and a SIGTERM while it waits for the database ends it cleanly.
    writeFileSync(two.file, good);
    const start = runCli(['start', '--port', '0', '--upstream', two.upstream.url], two.env, two.cwd);
    const base = await baseOf(start);
    expect((await fetch(`${base}${LIST_PATH}`)).status).toBe(200);
    expect(await stopped(start)).toBe(0);
    await pg.server.startAgain();
  });
});
