import { describe, expect, it } from 'vitest';
import { MirrorError } from '../../src/errors.js';
import { STORE_KINDS, storeMaker } from '../helpers/postgres.js';

// A run's stage is opened, and its commit made, only while the run is running: both stores answer
// a run that already ended the same way, RUN_ABORTED, as a rejected promise (a caller's `await`
// and `.catch` see it alike; a synchronous throw escaped the SQLite store's promise).

describe.each(STORE_KINDS)('a run that already ended, on %s', (kind) => {
  const fresh = storeMaker(kind);

  it('has no stage to open: openStage rejects RUN_ABORTED and leaves the run as it ended', async () => {
    const store = await fresh();
    const run = await store.beginRun('http://upstream.invalid');
    await store.endRun({ runId: run.id, status: 'failed', error: { code: 'TEST', message: 'ended' } });
    await store.releaseRun(run.id);

    let opening: Promise<unknown> = Promise.resolve();
    expect(() => (opening = store.openStage(run.id))).not.toThrow();
    const outcome = await opening.then(
      () => new Error('the stage opened'),
      (error: unknown) => error,
    );
    expect(outcome).toBeInstanceOf(MirrorError);
    expect(outcome).toMatchObject({ code: 'RUN_ABORTED' });
    expect(await store.getRun(run.id)).toMatchObject({
      id: run.id,
      status: 'failed',
      errorCode: 'TEST',
      errorMessage: 'ended',
    });
  });
});
