import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/process.js';
import { BENCHES, needsPostgres, smokeBenches } from './smoke.js';

describe('the bench catalogue', () => {
  it('lists every script in bench/, so each runs here at a tiny size and none rots', () => {
    const scripts = readdirSync(join(ROOT, 'bench'))
      .filter((name) => name.endsWith('.ts') && name !== 'run-all.ts')
      .map((name) => name.replace(/\.ts$/, ''))
      .sort();
    expect(BENCHES.map((bench) => bench.name).sort()).toEqual(scripts);
  });
});

smokeBenches(
  'every bench on the embedded store, once at a tiny size',
  BENCHES.filter((bench) => !needsPostgres(bench)),
);
