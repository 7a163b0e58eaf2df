import { describe, expect, it } from 'vitest';
import { runCrashCampaign, summarize } from '../crash/campaign.js';

// The long form of test/crash/crash.test.ts: run as `SOAK=1 npx vitest run test/soak`.
// SOAK_SEED replays another sequence of plans and mutations (kill instants still vary with timing).
const soak = process.env.SOAK === '1';
const seed = Number(process.env.SOAK_SEED ?? 7_319);
const kills = 60;

describe.skipIf(!soak)('crash safety soak: many SIGKILLs at random instants', () => {
  it(`survives ${kills} kills during crawl and commit (seed ${seed})`, async () => {
    const records = await runCrashCampaign({
      seed,
      kills,
      initialCount: 3_000,
      maxCount: 5_000,
      latencyMs: 2,
    });
    console.log(summarize(records));
    expect(records).toHaveLength(kills);
    // The point of the soak: some kills did land inside the commit's write transaction.
    expect(records.some((r) => r.stage === 'commit' && !r.committed)).toBe(true);
  }, 600_000);
});
