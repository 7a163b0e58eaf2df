import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase, type MirrorDatabase } from '../../src/db/open.js';
import { startMirror } from '../helpers/mirror-server.js';
import { simulatedUpstream, sync } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

function reopen(file: string): MirrorDatabase {
  const store = openDatabase(file);
  onTestFinished(() => store.close());
  return store;
}

/** A mirror of 200 coworkers whose `changes` b-tree has a damaged leaf in its middle. */
async function damagedDatabase(): Promise<string> {
  const file = join(tempDir(), 'mirror.db');
  const store = openDatabase(file);
  await sync(store, await simulatedUpstream({ seed: 1, count: 200 }));
  const leaves = store.sqlite
    .prepare("select pageno from dbstat where name = 'changes' and pagetype = 'leaf' order by pageno")
    .pluck()
    .all() as number[];
  const pageSize = store.sqlite.pragma('page_size', { simple: true }) as number;
  store.sqlite.pragma('wal_checkpoint(TRUNCATE)');
  store.close();
  // Not the newest (rightmost) leaf, which is all the per-probe read touches.
  const page = leaves[1] ?? 0;
  const fd = openSync(file, 'r+');
  writeSync(fd, Buffer.alloc(300, 0x41), 0, 300, (page - 1) * pageSize + 3000);
  closeSync(fd);
  return file;
}

// Regression: a corrupted database (`PRAGMA integrity_check`: ~100 errors) kept /readyz at 200:
// readiness read only the newest row of each table.
describe('readiness checks the whole file', () => {
  it('a database damaged in the middle of a b-tree: /readyz answers 503 naming quick_check', async () => {
    const store = reopen(await damagedDatabase());
    const mirror = await startMirror(store);
    await mirror.snapshots.integrity.check();
    const res = await fetch(`${mirror.url}/readyz`);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; reason: string };
    expect(body.status).toBe('unready');
    expect(body.reason).toMatch(
      /^database is damaged: quick_check found \*\*\* in database main \*\*\* Tree \d+ page \d+/,
    );
  });

  it('a healthy database stays ready after the check', async () => {
    const file = join(tempDir(), 'mirror.db');
    const store = reopen(file);
    await sync(store, await simulatedUpstream({ seed: 1, count: 20 }));
    const mirror = await startMirror(store);
    await mirror.snapshots.integrity.check();
    expect((await fetch(`${mirror.url}/readyz`)).status).toBe(200);
  });
});
