import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint, type Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

interface Zone {
  target: string | string[];
}

// eslint.config.js is plain JavaScript without declarations: its blocks are read as data.
const configUrl = new URL('../../eslint.config.js', import.meta.url).href;
const eslintConfig = ((await import(configUrl)) as { default: Linter.Config[] }).default;

const root = fileURLToPath(new URL('../../', import.meta.url));
const srcDir = `${root}src/`;

/** The block of eslint.config.js that holds the stairs (`import-x/no-restricted-paths`). */
function stairsBlock(): Linter.Config {
  const block = eslintConfig.find((b) => Array.isArray(b.rules?.['import-x/no-restricted-paths']));
  if (block === undefined) throw new Error('eslint.config.js has no import-x/no-restricted-paths rule');
  return block;
}

function zones(): Zone[] {
  const rule = stairsBlock().rules?.['import-x/no-restricted-paths'] as [string, { zones: Zone[] }];
  return rule[1].zones;
}

const sourceFiles = readdirSync(srcDir, { recursive: true, encoding: 'utf8' })
  .filter((file) => /\.tsx?$/.test(file))
  .map((file) => `./src/${file.replaceAll('\\', '/')}`);

describe('the import rules hold every floor', () => {
  const targets = zones().flatMap((zone) => (Array.isArray(zone.target) ? zone.target : [zone.target]));

  it.each(sourceFiles)('%s is the target of an import zone', (file) => {
    const covered = targets.some((target) => file === target || file.startsWith(`${target}/`));
    expect(covered, `${file} falls under no import-x/no-restricted-paths zone`).toBe(true);
  });
});

// The stairs of docs/architecture.md, each as an import a file of one floor writes: lint must
// refuse the ones going up and let the ones going down pass. Only the stairs block is applied,
// with a parser that needs no type information, so a file that is not on disk can be linted.
const stairsLinter = new ESLint({
  cwd: root,
  overrideConfigFile: true,
  overrideConfig: [
    {
      ...stairsBlock(),
      files: ['src/**/*.ts', 'src/**/*.tsx'],
      languageOptions: { parser: (await import('typescript-eslint')).parser },
    },
  ],
});

async function stairsProblems(file: string, imported: string): Promise<string[]> {
  const [result] = await stairsLinter.lintText(`import '${imported}';\nexport {};\n`, {
    filePath: `${root}${file}`,
  });
  return (result?.messages ?? []).map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

const REFUSED: [file: string, imported: string][] = [
  ['src/db/probe.ts', '../http/http-server.js'],
  ['src/db/probe.ts', '../sync/run-sync.js'],
  ['src/db/probe.ts', '../web/render.js'],
  ['src/db/probe.ts', '../media/mirror-media.js'],
  ['src/db/probe.ts', '../webhooks/outbox.js'],
  ['src/drf/probe.ts', '../db/store.js'],
  ['src/drf/probe.ts', '../http/http-server.js'],
  ['src/upstream/probe.ts', '../db/store.js'],
  ['src/upstream/probe.ts', '../sync/run-sync.js'],
  ['src/sync/probe.ts', '../http/http-server.js'],
  ['src/web/probe.ts', '../http/http-server.js'],
  ['src/http/probe.ts', '../sync/run-sync.js'],
  ['src/http/probe.ts', '../upstream/client.js'],
  ['src/config/probe.ts', '../db/store.js'],
  ['src/simulated-upstream/probe.ts', '../db/store.js'],
  ['src/time/probe.ts', '../db/store.js'],
  ['src/errors.ts', './db/store.js'],
  ['src/demo/probe.ts', '../http/http-server.js'],
  ['src/main.ts', './cli/program.js'],
];

const ALLOWED: [file: string, imported: string][] = [
  ['src/http/probe.ts', '../db/store.js'],
  ['src/sync/probe.ts', '../upstream/crawl.js'],
  ['src/web/probe.ts', '../drf/answer.js'],
  ['src/drf/probe.ts', '../errors.js'],
  ['src/main.ts', './cli/exit-codes.js'],
];

describe('the stairs of docs/architecture.md, applied by lint', () => {
  it.each(REFUSED)('%s may not import %s', async (file, imported) => {
    const problems = await stairsProblems(file, imported);
    expect(
      problems.some((p) => p.startsWith('import-x/no-restricted-paths:')),
      problems.join('\n'),
    ).toBe(true);
  });

  it.each(ALLOWED)('%s may import %s', async (file, imported) => {
    expect(await stairsProblems(file, imported)).toEqual([]);
  });
});
