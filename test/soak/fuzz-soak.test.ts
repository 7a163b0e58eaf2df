import { defineHostileSuite } from '../fuzz/hostile-suite.js';

// The long form of test/fuzz/hostile-requests.test.ts: `SOAK=1 npx vitest run test/soak/fuzz-soak.test.ts`.
// SOAK_SEED replays another sequence.
defineHostileSuite({
  name: 'hostile request fuzzer soak',
  seed: Number(process.env.SOAK_SEED ?? 7_919),
  requests: 100_000,
  differential: 10_000,
  lanes: 16,
  timeoutMs: 600_000,
  skip: process.env.SOAK !== '1',
});
