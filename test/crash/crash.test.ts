import { describe, expect, it } from 'vitest';
import { runCrashCampaign, summarize } from './campaign.js';

// About 15 s on an idle two-core machine (8 child processes, 2,000-3,000 entries); the timeout is
// headroom for a loaded CI runner, not a claim about speed. The long form: test/soak/crash-soak.test.ts.
describe('crash safety: a sync SIGKILLed at random instants', () => {
  it('leaves a sound file, an all-or-nothing listing and exactly-once changes, kill after kill', async () => {
    const records = await runCrashCampaign({
      seed: 20_240_611,
      kills: 8,
      initialCount: 2_000,
      maxCount: 3_000,
      latencyMs: 1,
    });
    console.log(summarize(records));
    expect(records).toHaveLength(8);
  });
});
