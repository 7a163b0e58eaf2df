/**
 * `npm run docs:generate` rewrites the generated parts of docs/configuration.md and docs/cli.md;
 * `npm run docs:check` (CI) writes them to a temporary folder instead and fails, with the diff and
 * the command that fixes it, when the committed pages differ. Leaves the tree as it found it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { ROOT, generatedPages } from './docs-pages.js';

async function generate(): Promise<number> {
  for (const page of await generatedPages()) {
    writeFileSync(join(ROOT, page.path), page.text);
    process.stdout.write(`docs:generate: wrote ${page.path}\n`);
  }
  return 0;
}

async function check(): Promise<number> {
  const temp = mkdtempSync(join(tmpdir(), 'docs-check-'));
  try {
    const stale: string[] = [];
    for (const page of await generatedPages()) {
      const fresh = join(temp, basename(page.path));
      writeFileSync(fresh, page.text);
      if (readFileSync(join(ROOT, page.path), 'utf8') === page.text) continue;
      stale.push(page.path);
      const diff = spawnSync('diff', ['-u', join(ROOT, page.path), fresh], { encoding: 'utf8' });
      process.stderr.write(diff.stdout);
    }
    if (stale.length === 0) {
      process.stdout.write('docs:check: the generated docs are up to date\n');
      return 0;
    }
    process.stderr.write(
      `docs:check: ${stale.join(', ')} out of date with src/config/setting-table.ts or src/cli/program.ts ` +
        '(diff above: committed, then regenerated). Run: npm run docs:generate, and commit the result.\n',
    );
    return 1;
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

process.exitCode = await (process.argv.includes('--check') ? check() : generate());
