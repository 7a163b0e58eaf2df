import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { freePortPair } from '../helpers/free-port-pair.js';
import { BUILT_CLI, ensureBuilt, eventually } from '../helpers/process.js';
import { WAIT_MS } from '../helpers/patience.js';
import { tempDir } from '../helpers/temp-db.js';
import { newSecret, webhookReceiver } from '../helpers/webhook-receiver.js';

beforeAll(() => ensureBuilt());

interface RunJson {
  id: number;
  status: string;
  upstream: string;
  added: number;
  changed: number;
  removed: number;
  returned: number;
}

/** `start` with no upstream, run from `cwd` as a person runs it from a clone (./data is relative). */
async function startDemo(cwd: string, env: Record<string, string>) {
  const child = spawn(process.execPath, [BUILT_CLI, 'start', '--port', '0'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SYNC_CRON: '0 0 1 1 *', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Kept apart: chunks of the two streams interleaved in one string can split a line in two.
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const url = await eventually(
    () => /"url":"(http:[^"]+)"[^\n]*"msg":"coworker-mirror started"/.exec(stdout)?.[1],
    WAIT_MS,
    'the demo to start',
  );
  const runs = async () =>
    ((await (await fetch(`${url}/api/mirror/runs/`)).json()) as { results: RunJson[] }).results;
  return { child, exited, url, runs, output: () => `${stdout}\n${stderr}` };
}

describe('the demo', () => {
  it('keeps its own database, says "demo" everywhere, syncs at its mutation pace, and a restart records no false reverts', async () => {
    const cwd = tempDir();
    const demoPort = await freePortPair();
    // A change landing mid-crawl fails that run (UPSTREAM_UNSTABLE_ORDER), and at load 10-14 a sync
    // child took longer than the 400 ms this once was; 5 s leaves it room at the cost of ~10 s here.
    const first = await startDemo(cwd, { DEMO_UPSTREAM_PORT: String(demoPort), DEMO_MUTATE_EVERY: '5s' });
    // The schedule is yearly here: only the mutations' own syncs can make these runs.
    const before = await eventually(
      async () => {
        const runs = (await first.runs()).filter((r) => r.status === 'succeeded');
        return runs.length >= 3 && runs.some((r) => r.added + r.changed + r.removed + r.returned > 0)
          ? runs
          : undefined;
      },
      WAIT_MS,
      'runs that record the demo changing',
    );
    expect(before[0]?.upstream).toBe('demo: the built-in simulated upstream');
    const ready = (await (await fetch(`${first.url}/readyz`)).json()) as { mode?: string };
    expect(ready.mode).toBe('demo');
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const lines = first
      .output()
      .trim()
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => {
        try {
          return JSON.parse(l) as { mode?: string };
        } catch {
          return { mode: `not a JSON line: ${l}` };
        }
      });
    expect(lines.filter((l) => l.mode !== 'demo')).toEqual([]);
    expect(existsSync(join(cwd, 'data', 'demo.db'))).toBe(true);
    expect(existsSync(join(cwd, 'data', 'mirror.db'))).toBe(false);

    const db = new Database(join(cwd, 'data', 'demo.db'), { readonly: true });
    const media = db
      .prepare(
        "select json_extract(body, '$.emoji_file') from versions where json_extract(body, '$.emoji_file') is not null",
      )
      .pluck()
      .all() as string[];
    const lastRun = db.prepare("select max(id) from runs where status = 'succeeded'").pluck().get() as number;
    db.close();
    expect(media.length).toBeGreaterThan(0);
    // The demo's media host listens on the port after the upstream's, the same across restarts.
    for (const url of media) expect(url.startsWith(`http://127.0.0.1:${demoPort + 1}/media/`)).toBe(true);

    // Restarted with its data still and the mirror stale at once: the first run sees what was stored.
    const second = await startDemo(cwd, {
      DEMO_UPSTREAM_PORT: String(demoPort),
      DEMO_MUTATE_EVERY: '1h',
      STALE_AFTER: '1ms',
    });
    const resumed = await eventually(
      async () => (await second.runs()).find((r) => r.id > lastRun && r.status === 'succeeded'),
      WAIT_MS,
      'the first run after the restart',
    );
    expect(resumed).toMatchObject({ added: 0, changed: 0, removed: 0, returned: 0 });
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('regression: under DEMO=1 it syncs (its child was refused), and delivers webhooks from its own database (not ./data/mirror.db)', async () => {
    const cwd = tempDir();
    const secret = newSecret();
    const receiver = await webhookReceiver(secret);
    const demo = await startDemo(cwd, {
      DEMO_UPSTREAM_PORT: String(await freePortPair()),
      DEMO_MUTATE_EVERY: '1h',
      // As the production image runs the demo on purpose.
      DEMO: '1',
      WEBHOOK_URLS: receiver.url,
      WEBHOOK_SECRET: secret,
    });
    // The first sync adds the demo's whole team: one signed coworkers.changed reaches the receiver.
    const first = await eventually(() => receiver.received[0], WAIT_MS, 'the first delivery');
    expect(first.verifiedBySpec).toBe(true);
    expect((JSON.parse(first.body) as { type: string }).type).toBe('coworkers.changed');
    demo.child.kill('SIGTERM');
    expect(await demo.exited).toBe(0);
    expect(existsSync(join(cwd, 'data', 'mirror.db'))).toBe(false);
  });
});
