import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { ensureBuilt, runCli } from '../helpers/process.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

// Regression: a HOST that resolves to nothing was reported as "a bug in coworker-mirror" (exit 1).
describe('a bad --host is a configuration error', () => {
  it.each(['nope.invalid', '999.1.1.1'])('serve --host %s exits 2 naming HOST', async (host) => {
    const db = join(tempDir(), 'mirror.db');
    openDatabase(db).close();
    const serve = runCli(['serve', '--db', db, '--port', '0', '--host', host], {});
    expect((await serve.exited).code).toBe(2);
    expect(serve.output()).toContain(
      `coworker-mirror: invalid configuration:\n  HOST: cannot listen on ${JSON.stringify(host)} (ENOTFOUND): it is not an address of this machine;`,
    );
    expect(serve.output()).not.toContain('a bug in coworker-mirror');
  });
});
