import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase, openExistingDatabase } from '../../src/db/open.js';
import { LIST_PATH } from '../../src/upstream/contract.js';
import { startMirror } from '../helpers/mirror-server.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

/** A tmpfs mounted on a fresh folder, unmounted when the test ends; null (and why) where none can be. */
function tmpfs(): { dir: string; readOnly: () => void } | string {
  const dir = tempDir();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    return `a tmpfs cannot be mounted here (needs root or CAP_SYS_ADMIN): ${String((error as Error).message).trim()}`;
  }
  onTestFinished(() => {
    execFileSync('umount', [dir]);
  });
  return { dir, readOnly: () => execFileSync('mount', ['-o', 'remount,ro', dir], { stdio: 'pipe' }) };
}

// Regression: a WAL database on a read-only filesystem could not be opened: SQLite needs its -shm
// file, which it cannot create there. `runs` exited 8 and `serve` did not start. It is now opened
// `immutable` when its folder cannot be written and no -shm is beside it.
describe('a WAL database alone on a read-only mount', () => {
  it('runs reads it and serve serves it', async (context) => {
    const mount = tmpfs();
    if (typeof mount === 'string') return context.skip(mount);
    const file = join(mount.dir, 'mirror.db');
    const writer = openDatabase(file);
    await sync(writer, await simulatedUpstream({ seed: 3, count: 7 }));
    writer.close();
    expect(existsSync(`${file}-shm`)).toBe(false);
    mount.readOnly();

    const runs = runCli(['runs', '--json', '--db', file], {});
    expect((await runs.exited).code, runs.output()).toBe(0);
    expect(JSON.parse(runs.output().trim())).toMatchObject({ id: 1, status: 'succeeded', entries: 7 });

    const store = openExistingDatabase(file);
    onTestFinished(() => store.close());
    expect(store.immutable).toBe(true);
    const mirror = await startMirror(store);
    await mirror.snapshots.integrity.check();
    const list = await fetch(`${mirror.url}${LIST_PATH}`);
    expect(list.status).toBe(200);
    expect(((await list.json()) as { count: number }).count).toBe(7);
    expect((await fetch(`${mirror.url}/readyz`)).status).toBe(200);
  });
});
