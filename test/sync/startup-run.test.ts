import type { RunStart, Store } from '../../src/db/store.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { previousCronRun } from '../../src/sync/next-cron-run.js';
import { startupRun, type StartupFacts } from '../../src/sync/startup-run.js';
import { silentLogger } from '../../src/logger.js';
import { runSync } from '../../src/sync/run-sync.js';
import { syncConfig } from '../helpers/config.js';
import { STORE_KINDS, storeOpener } from '../helpers/postgres.js';
import { simulatedUpstream } from '../helpers/sync.js';

// Ticks are local times; these are written for UTC.
const savedTz = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'UTC';
});
afterAll(() => {
  if (savedTz === undefined) delete process.env.TZ;
  else process.env.TZ = savedTz;
});

describe('the last tick of a schedule at or before a time', () => {
  it.each([
    ['*/10 * * * * *', '2026-11-22T10:00:25.700Z', '2026-11-22T10:00:20.000Z'],
    ['*/10 * * * * *', '2026-11-22T10:00:20.000Z', '2026-11-22T10:00:20.000Z'],
    ['*/10 * * * *', '2026-11-22T10:09:59.999Z', '2026-11-22T10:00:00.000Z'],
    ['*/10 * * * *', '2026-11-22T00:05:00.000Z', '2026-11-22T00:00:00.000Z'],
    ['15,45 */3 * * *', '2026-11-22T00:10:00.000Z', '2026-11-21T21:45:00.000Z'],
    // A Sunday: the Friday before.
    ['0 9 * * mon-fri', '2026-11-22T10:00:00.000Z', '2026-11-20T09:00:00.000Z'],
    ['0 0 1 1 *', '2026-11-22T10:00:00.000Z', '2026-01-01T00:00:00.000Z'],
    ['0 0 L * *', '2026-03-15T00:00:00.000Z', '2026-02-28T00:00:00.000Z'],
    // The rarest tick there is: once in four years.
    ['0 0 29 2 *', '2026-11-22T10:00:00.000Z', '2024-02-29T00:00:00.000Z'],
  ])('%s at %s: %s', (expression, at, expected) => {
    expect(previousCronRun(expression, new Date(at))?.toISOString()).toBe(expected);
  });
});

const CRON = '*/10 * * * * *';
const NOW = new Date('2026-11-22T10:00:25.700Z');
/** The last tick before NOW. */
const LAST_TICK = '2026-11-22T10:00:20.000Z';
const HOUR = 3_600_000;
/** A schedule whose last tick stays put while a test runs: this year's first second. */
const YEARLY = '0 0 1 1 *';

function facts(store: Store, cronExpression = CRON, now = NOW): StartupFacts {
  return { cronExpression, now, staleAfterMs: HOUR, store };
}

/** A failed run that began at `at`, started as `start`. */
async function pastRun(store: Store, start: RunStart, at: string): Promise<void> {
  const run = await store.beginRun('http://up.example/', start, new Date(at));
  await store.endRun({
    runId: run.id,
    status: 'failed',
    error: { code: 'UPSTREAM_NETWORK', message: 'down' },
  });
  await store.releaseRun(run.id);
}

/** A real, succeeded run of a listing, started as `start`, now. */
async function succeededRun(store: Store, start: RunStart): Promise<void> {
  const upstream = await simulatedUpstream({ count: 3 });
  await runSync(syncConfig(upstream.url), { store, logger: silentLogger(), start });
}

describe.each(STORE_KINDS)('what `start` runs as it starts, on %s', (kind) => {
  const stores = storeOpener(kind);

  it('a mirror that never ran: one start-up run that claims the last tick, so instances starting together make one', async () => {
    const store = await stores.open();
    expect(await startupRun(facts(store))).toEqual({
      start: { trigger: 'startup', scheduledFor: LAST_TICK },
      why: 'empty',
      lastRunAt: null,
      ageMs: null,
    });
  });

  it('regression: an hour of ticks missed while no instance ran is one catch-up run, of the last tick, not a storm', async () => {
    const store = await stores.open();
    await pastRun(
      store,
      { trigger: 'schedule', scheduledFor: '2026-11-22T09:00:00.000Z' },
      '2026-11-22T09:00:03.000Z',
    );
    const run = await startupRun(facts(store));
    expect(run).toEqual({
      start: { trigger: 'catch-up', scheduledFor: LAST_TICK },
      why: 'missed',
      lastRunAt: '2026-11-22T09:00:03.000Z',
      ageMs: null,
    });
    // A second instance starting at the same moment decides the same, and the store lets one in.
    const other = await stores.another(store);
    expect(await startupRun(facts(other))).toEqual(run);
    const won = await store.beginRun('http://up.example/', run?.start, NOW);
    await expect(other.beginRun('http://up.example/', run?.start, NOW)).rejects.toMatchObject({
      code: 'TICK_SERVED',
      details: { tick: LAST_TICK, runId: won.id },
    });
    // While that run is under way, an instance starting finds nothing to do.
    expect(await startupRun(facts(other))).toBeNull();
    await store.releaseRun(won.id);
  });

  it('the last tick served and the listing fresh: nothing; older than STALE_AFTER: a start-up run that claims no tick', async () => {
    const store = await stores.open();
    const tick = previousCronRun(YEARLY, new Date())?.toISOString() ?? '';
    await succeededRun(store, { trigger: 'schedule', scheduledFor: tick });
    expect(await startupRun(facts(store, YEARLY, new Date()))).toBeNull();
    const later = new Date(Date.now() + 2 * HOUR);
    expect(await startupRun(facts(store, YEARLY, later))).toMatchObject({
      start: { trigger: 'startup', scheduledFor: null },
      why: 'stale',
    });
  });

  it('a run since the last tick claimed none (an admin run): fresh, nothing; failed, a start-up run that claims the tick', async () => {
    const store = await stores.open();
    const tick = previousCronRun(YEARLY, new Date())?.toISOString() ?? '';
    await pastRun(store, { trigger: 'admin', scheduledFor: null }, new Date().toISOString());
    expect(await startupRun(facts(store, YEARLY, new Date()))).toMatchObject({
      start: { trigger: 'startup', scheduledFor: tick },
      why: 'empty',
    });
    await succeededRun(store, { trigger: 'admin', scheduledFor: null });
    expect(await startupRun(facts(store, YEARLY, new Date()))).toBeNull();
  });
});
