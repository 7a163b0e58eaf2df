import { describe, expect, it } from 'vitest';
import { NO_PROBLEMS, runLoadDuringSyncs, type LoadPlan } from './load-harness.js';

describe('list endpoint under load while syncs commit', () => {
  const plan: LoadPlan = { seed: 4_242, entries: 200, syncs: 10, connections: 64, responsesPerSnapshot: 500 };

  it('answers every request with a whole page of one snapshot, never a mix, through ten syncs', async () => {
    const outcome = await runLoadDuringSyncs(plan);
    expect(outcome.problems).toEqual(NO_PROBLEMS);
    expect(outcome.snapshots).toBe(plan.syncs + 1);
    expect(outcome.responses).toBeGreaterThanOrEqual((plan.syncs + 1) * plan.responsesPerSnapshot);
  });
});
