import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { BUILT_CLI, ensureBuilt } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

/** Alive and not a zombie: a reparented child may stay unreaped for a while after it exits. */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function gone(pid: number, withinMs: number): Promise<boolean> {
  for (const deadline = Date.now() + withinMs; Date.now() < deadline;) {
    if (!running(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !running(pid);
}

// Regression: a `sync` child whose `start` died kept running (once spinning at 100 % CPU) with
// nobody to report to. The IPC channel closes with the parent: the child aborts its run and exits.
describe('a sync child of start dies with its parent', () => {
  it('the parent killed by SIGKILL mid-run: the child aborts its run and exits', async () => {
    const upstream = await simulatedUpstream({ count: 5 });
    upstream.faults.set({ hang: {} });
    const db = join(tempDir(), 'mirror.db');
    // A stand-in for `start`: spawns the sync child with an IPC channel, as isolated-sync does.
    const parentScript = `
      const { spawn } = require('node:child_process');
      const child = spawn(process.execPath, [${JSON.stringify(BUILT_CLI)}, 'sync', '--sync-process'], {
        env: { PATH: process.env.PATH, UPSTREAM_URL: ${JSON.stringify(upstream.url)}, DATABASE_PATH: ${JSON.stringify(db)} },
        stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      });
      child.on('message', (m) => { if (m.type === 'run-started') console.log(child.pid); });`;
    const parent = spawn(process.execPath, ['-e', parentScript], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => parent.once('exit', resolve));
    onTestFinished(async () => {
      parent.kill('SIGKILL');
      await exited;
    });
    const childPid = await new Promise<number>((resolve) =>
      parent.stdout.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim()))),
    );
    onTestFinished(() => {
      if (running(childPid)) process.kill(childPid, 'SIGKILL');
    });
    parent.kill('SIGKILL');
    await exited;
    expect(await gone(childPid, 20_000)).toBe(true);
    const store = openDatabase(db);
    onTestFinished(() => store.close());
    expect(store.sqlite.prepare('select status, error_code as code from runs').all()).toEqual([
      { status: 'aborted', code: 'RUN_ABORTED' },
    ]);
  });
});
