import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { makeFolder } from '../../src/fs/make-folder.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

// Regression: `sync --db /proc/nope/x.db` spun forever at 100 % CPU in Node's recursive mkdir (the
// kernel answers ENOENT to a mkdir under /proc, and Node retries it), and a path under a regular
// file failed with "EEXIST: file already exists, mkdir".
describe('the folder of a database path', () => {
  it('under a regular file: says that the parent is a file', () => {
    const file = join(tempDir(), 'notes.txt');
    writeFileSync(file, 'a file');
    expect(() => openDatabase(join(file, 'x.db'))).toThrow(
      `cannot open database ${file}/x.db: ${file} is a file, not a folder;`,
    );
    expect(() => openDatabase(join(file, 'deeper', 'x.db'))).toThrow(`${file} is a file, not a folder`);
  });

  it('missing folders are made one by one, 0700, and existing ones are left as they are', () => {
    const root = tempDir();
    mkdirSync(join(root, 'kept'), { mode: 0o755 });
    makeFolder(join(root, 'kept', 'a', 'b'), 0o700);
    makeFolder(join(root, 'kept', 'a', 'b'), 0o700);
    expect(statSync(join(root, 'kept')).mode & 0o777).toBe(0o755);
    expect(statSync(join(root, 'kept', 'a', 'b')).mode & 0o777).toBe(0o700);
  });

  // In a child process: on the old code the spin is synchronous and would hang the test worker.
  it('sync --db /proc/nope/x.db exits 8 at once, naming the folder', async () => {
    const sync = runCli(['sync', '--upstream', 'http://127.0.0.1:9', '--db', '/proc/nope/x.db'], {});
    expect((await sync.exited).code).toBe(8);
    expect(sync.output()).toMatch(
      /^coworker-mirror: cannot open database \/proc\/nope\/x\.db: cannot create folder \/proc\/nope: /m,
    );
  });
});
