import { defineHostileSuite } from './hostile-suite.js';

// The CI form: 10,000 hostile requests and a 2,000-request differential slice against a real DRF.
// Replay another sequence with FUZZ_SEED=<n>; the long form is test/soak/fuzz-soak.test.ts.
defineHostileSuite({
  name: 'hostile request fuzzer',
  seed: Number(process.env.FUZZ_SEED ?? 20_261_121),
  requests: 10_000,
  differential: 2_000,
  lanes: 12,
  skip: false,
});
