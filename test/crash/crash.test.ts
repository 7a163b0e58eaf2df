import { describe, expect, it } from 'vitest';
import { STORE_KINDS, usePostgres } from '../helpers/postgres.js';
import { runCrashCampaign, summarize } from './campaign.js';
import { postgresCrashDatabase, sqliteCrashDatabase } from './crash-store.js';

// About 15 s on an idle two-core machine (8 child processes, 2,000-3,000 entries); the timeout is
// headroom for a loaded CI runner, not a claim about speed. The long form: test/soak/crash-soak.test.ts.
describe.each(STORE_KINDS)('crash safety on %s: a sync SIGKILLed at random instants', (kind) => {
  const pg = kind === 'postgres' ? usePostgres() : null;

  it('leaves a sound store, an all-or-nothing listing and exactly-once changes, kill after kill', async () => {
    const records = await runCrashCampaign({
      seed: 20_240_611,
      kills: 8,
      initialCount: 2_000,
      maxCount: 3_000,
      latencyMs: 1,
      database: pg === null ? sqliteCrashDatabase() : await postgresCrashDatabase(pg.server),
    });
    console.log(summarize(records));
    expect(records).toHaveLength(8);
  });
});
