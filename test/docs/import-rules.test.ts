import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Zone {
  target: string | string[];
}

// eslint.config.js is plain JavaScript without declarations: its blocks are read as data.
const configUrl = new URL('../../eslint.config.js', import.meta.url).href;
const eslintConfig = ((await import(configUrl)) as { default: { rules?: Record<string, unknown> }[] })
  .default;

const srcDir = fileURLToPath(new URL('../../src/', import.meta.url));

/** The zones of `import-x/no-restricted-paths`, as eslint.config.js declares them. */
function zones(): Zone[] {
  for (const block of eslintConfig) {
    const rule = block.rules?.['import-x/no-restricted-paths'];
    if (Array.isArray(rule)) return (rule[1] as { zones: Zone[] }).zones;
  }
  throw new Error('eslint.config.js has no import-x/no-restricted-paths rule');
}

const sourceFiles = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => /\.tsx?$/.test(file))
  .map((file) => `./src/${file.replaceAll('\\', '/')}`);

describe('the import rules hold every floor (issue 19)', () => {
  const targets = zones().flatMap((zone) => (Array.isArray(zone.target) ? zone.target : [zone.target]));

  it.each(sourceFiles)('%s is the target of an import zone', (file) => {
    const covered = targets.some((target) => file === target || file.startsWith(`${target}/`));
    expect(covered, `${file} falls under no import-x/no-restricted-paths zone`).toBe(true);
  });
});
