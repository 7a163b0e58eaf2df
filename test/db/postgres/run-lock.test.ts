import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { parsePostgresUrl, type PostgresTarget } from '../../../src/config/database-url.js';
import { applicationName } from '../../../src/db/postgres/open.js';
import { runLockHolder, takeRunLock } from '../../../src/db/postgres/run-lock.js';
import { MirrorError } from '../../../src/errors.js';
import { ChildRun } from '../../crash/sync-child.js';
import { describePostgres, usePostgres } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/process.js';

const HOLDER = fileURLToPath(new URL('./lock-holder.ts', import.meta.url));

function target(url: string): PostgresTarget {
  const parsed = parsePostgresUrl(url);
  if (!parsed.ok) throw new Error(parsed.problem);
  return parsed.value;
}

async function refusal(promise: Promise<unknown>): Promise<MirrorError> {
  const error = await promise.then(
    () => new Error('expected the lock to be refused'),
    (e: unknown) => e,
  );
  if (!(error instanceof MirrorError)) throw error;
  return error;
}

describePostgres('PostgreSQL run lock', () => {
  const pg = usePostgres();

  async function holderProcess(instanceId: string): Promise<ChildRun> {
    const child = new ChildRun(HOLDER, [pg.url, instanceId]);
    const line = await child.waitFor((l) => l.marker === 'held' || l.marker === 'refused');
    if (line?.marker !== 'held')
      throw new Error(`the holder did not take the lock: ${child.stdout}${child.stderr}`);
    return child;
  }

  it('is exclusive across processes, names its holder, and is freed when the holder is SIGKILLed', async () => {
    const holder = await holderProcess('host-a/101/aaaaaa');
    const admin = pg.server.admin(pg.database);

    const seen = await runLockHolder(admin);
    expect(seen).toMatchObject({
      applicationName: 'coworker-mirror host-a/101/aaaaaa',
      clientAddress: '127.0.0.1',
    });

    // A second process is refused, and so is this one.
    const second = new ChildRun(HOLDER, [pg.url, 'host-b/202/bbbbbb']);
    const refused = await second.waitFor((l) => l.marker !== undefined);
    expect(refused?.marker).toBe('refused');
    expect(refused?.code).toBe('SYNC_LOCKED');
    expect((await second.exited).code).toBe(4);
    const error = await refusal(takeRunLock(target(pg.url), 'host-c/303/cccccc'));
    expect(error.code).toBe('SYNC_LOCKED');
    expect(error.message).toBe(
      `another sync holds the lock on ${target(pg.url).label}: coworker-mirror host-a/101/aaaaaa ` +
        `(backend pid ${seen?.backendPid} from 127.0.0.1, since ${seen?.since})`,
    );
    expect(error.details).toEqual({ database: target(pg.url).label, holder: seen });

    holder.kill();
    await holder.exited;
    // The server ends the dead client's session as soon as it reads the closed socket.
    await eventually(
      async () => ((await runLockHolder(admin)) === null ? true : undefined),
      20_000,
      'lock freed',
    );
    const lock = await takeRunLock(target(pg.url), 'host-c/303/cccccc');
    expect(await runLockHolder(admin)).toMatchObject({
      applicationName: 'coworker-mirror host-c/303/cccccc',
    });
    await lock.release();
  });

  it('a released lock is free at once', async () => {
    const first = await takeRunLock(target(pg.url), 'host-a/1/aaaaaa');
    await first.release();
    const second = await takeRunLock(target(pg.url), 'host-b/2/bbbbbb');
    await second.release();
    expect(await runLockHolder(pg.server.admin(pg.database))).toBeNull();
  });

  it('tells its holder when the connection is lost: the lock went with it', async () => {
    const lock = await takeRunLock(target(pg.url), 'host-a/1/aaaaaa');
    const admin = pg.server.admin(pg.database);
    const holder = await runLockHolder(admin);
    const lost = new Promise<unknown>((resolve) =>
      lock.lost.addEventListener('abort', () => resolve(lock.lost.reason)),
    );
    await admin.query('select pg_terminate_backend($1)', [holder?.backendPid]);
    const reason = await lost;
    expect(reason).toBeInstanceOf(MirrorError);
    expect((reason as MirrorError).code).toBe('DB_ERROR');
    expect((reason as MirrorError).message).toBe(
      `lost the connection holding the run lock on ${target(pg.url).label}: the server ended the session ` +
        '(pg_terminate_backend, or a shutdown or restart): run again',
    );
    const next = await takeRunLock(target(pg.url), 'host-b/2/bbbbbb');
    await next.release();
    await lock.release();
  });

  it('names the instance as application_name, cut to the 63 bytes PostgreSQL keeps', () => {
    expect(applicationName('h/1/abcdef')).toBe('coworker-mirror h/1/abcdef');
    expect(Buffer.byteLength(applicationName(`${'é'.repeat(40)}/1/abcdef`))).toBeLessThanOrEqual(63);
    expect(applicationName(`${'é'.repeat(40)}/1/abcdef`)).toBe(`coworker-mirror ${'é'.repeat(23)}`);
  });
});
