import { describe, expect, it } from 'vitest';
import { NO_PROBLEMS, runLoadDuringSyncs, type LoadPlan } from '../load/load-harness.js';

// The long form of test/load/load-during-sync.test.ts: run as `npm run soak` (SOAK=1); SOAK_SEED
// picks other data and mutations.
const plan: LoadPlan = {
  seed: Number(process.env.SOAK_SEED ?? 9_137),
  entries: 1_000,
  syncs: 50,
  connections: 64,
  responsesPerSnapshot: 2_000,
};

describe.skipIf(process.env.SOAK !== '1')('list endpoint under load soak: many syncs', () => {
  it(`answers only whole pages of one snapshot through ${plan.syncs} syncs (seed ${plan.seed})`, async () => {
    const outcome = await runLoadDuringSyncs(plan);
    console.log(
      `load soak: ${outcome.responses} responses, ${outcome.distinctBodies} distinct bodies, ${outcome.snapshots} snapshots`,
    );
    expect(outcome.problems).toEqual(NO_PROBLEMS);
    expect(outcome.snapshots).toBe(plan.syncs + 1);
    expect(outcome.responses).toBeGreaterThanOrEqual((plan.syncs + 1) * plan.responsesPerSnapshot);
  }, 600_000);
});
