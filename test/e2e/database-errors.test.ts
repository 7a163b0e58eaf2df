import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt());

describe('database errors from the CLI', () => {
  it('regression: a database that refuses writes makes sync exit 8 (not 1 UNEXPECTED) with a line saying what to do', async () => {
    const db = join(tempDir(), 'mirror.db');
    openDatabase(db).close();
    // Tests run as root, which file modes do not stop: a trigger refuses the write instead.
    const raw = new Database(db);
    raw.exec(
      "create trigger refuse before insert on runs begin select raise(abort, 'attempt to write a readonly database'); end",
    );
    raw.close();
    const upstream = await simulatedUpstream({ count: 3 });
    const sync = runCli(['sync', '--upstream', upstream.url, '--db', db], {});
    expect((await sync.exited).code).toBe(8);
    expect(sync.output()).toMatch(
      /\[DB_ERROR\]: database error \(SQLITE_CONSTRAINT\w*\): attempt to write a readonly database; /,
    );
  });

  it('a file that is not a database: every command exits 8 and says to point DATABASE_PATH elsewhere or restore', async () => {
    const db = join(tempDir(), 'mirror.db');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(db, 'this is not a database, only a file with text in it '.repeat(100));
    const runs = runCli(['runs', '--db', db], {});
    expect((await runs.exited).code).toBe(8);
    expect(runs.output()).toMatch(
      /^coworker-mirror: cannot prepare database .*: file is not a database\nhint: the file is not a SQLite database: point DATABASE_PATH/m,
    );
  });
});
