import { readdirSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../src/cli/exit-codes.js';
import { buildProgram } from '../../src/cli/program.js';
import { settingList } from '../../src/config/load-config.js';

const read = (path: string): string => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');

/** The .ts and .tsx files under `folder`, as paths from the root. */
function sourceFiles(folder: string): string[] {
  return readdirSync(new URL(`../../${folder}/`, import.meta.url), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(`${folder}/${e.name}`)
      : /\.tsx?$/.test(e.name)
        ? [`${folder}/${e.name}`]
        : [],
  );
}

/** The text of every comment of a TypeScript file, found by the compiler's parser, not a pattern. */
function commentsOf(path: string, text: string): string[] {
  const file = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TSX);
  const found = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined): void => {
    for (const r of ranges ?? []) found.set(r.pos, text.slice(r.pos, r.end));
  };
  const visit = (node: ts.Node): void => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.forEachChild(visit);
  };
  visit(file);
  collect(ts.getLeadingCommentRanges(text, file.endOfFileToken.getFullStart()));
  return [...found.values()];
}

const configurationPage = read('docs/configuration.md');
const cliPage = read('docs/cli.md');
const everyPage = [
  readme,
  ...readdirSync(new URL('../../docs/', import.meta.url))
    .filter((name) => name.endsWith('.md'))
    .map((name) => read(`docs/${name}`)),
].join('\n');
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};
const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
const ci = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8');

describe('the README and docs/ document everything', () => {
  it.each(settingList.map((s) => [s.env, s] as const))(
    'documents %s in the configuration table',
    (env, s) => {
      const row = configurationPage
        .split('\n')
        .find((line) => new RegExp(`^\\|\\s*\`${env}\`\\s*\\|`).test(line));
      expect(row, `docs/configuration.md misses ${env}: run npm run docs:generate`).toBeDefined();
      if (s.flag) expect(row).toContain(`\`${s.flag}\``);
      expect(row).toContain(s.default === null ? '(unset)' : `\`${s.default}\``);
    },
  );

  // Derived from the commander program itself, so a new command or option cannot go undocumented.
  const commands = buildProgram().commands.map((c) => [c.name(), c] as const);

  it.each(commands)('shows the %s command', (name) => {
    expect(cliPage).toMatch(new RegExp(`coworker-mirror ${name}\\b`));
  });

  it.each(
    commands.flatMap(([name, c]) =>
      c.options
        .filter((o) => !o.hidden)
        .map((o) => [`${name} ${o.long ?? o.flags}`, o.long ?? o.flags] as const),
    ),
  )('documents the option %s', (_label, flag) => {
    expect(cliPage).toContain(`${flag}`);
    expect(cliPage).toMatch(new RegExp(`\`[^\`]*${flag.replace(/[-]/g, '\\-')}(?![\\w-])[^\`]*\``));
  });

  it.each(Object.entries(EXIT))('lists exit code %s (%i) in docs/cli.md', (_name, code) => {
    expect(cliPage).toMatch(new RegExp(`^\\| ${code} +\\| \\S`, 'm'));
  });

  // The limits table of docs/reliability.md is written by hand: its defaults must still be the code's.
  it('gives the limits in docs/reliability.md with the defaults of the settings table', () => {
    const rows = [...read('docs/reliability.md').matchAll(/^\|[^|]*\| `([A-Z_]+)` +\| `([^`]+)`/gm)];
    expect(rows.length).toBeGreaterThan(10);
    for (const [, env, shown] of rows) {
      expect(settingList.find((s) => s.env === env)?.default, env).toBe(shown);
    }
  });

  it('shows only npm scripts that exist', () => {
    const shown = [...everyPage.matchAll(/npm run ([a-z:-]+)/g)].map((m) => m[1] ?? '');
    expect(shown.length).toBeGreaterThan(5);
    for (const script of shown) expect(Object.keys(pkg.scripts), `npm run ${script}`).toContain(script);
  });

  it('keeps the README the front door: at most 160 lines, the rest in docs/', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(160);
  });

  // The figures page holds the current figures only; how they moved is in git.
  it('keeps docs/benchmarks.md to the current figures: at most 150 lines', () => {
    expect(read('docs/benchmarks.md').split('\n').length).toBeLessThanOrEqual(150);
  });

  // What a user reads says what the mirror does, not which of this project's issues made it so
  // ("issue 21"), and so do the comments of src (they say why, which outlives the tracker); an
  // upstream's tracker cited as "DRF issue #6886" is a source, and stays.
  it('names no tracker issue in the README, docs/, the CLI help or src', () => {
    const pages = (folder: string, ending: RegExp): string[] =>
      readdirSync(new URL(`../../${folder}/`, import.meta.url), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory()
          ? pages(`${folder}/${e.name}`, ending)
          : ending.test(e.name)
            ? [`${folder}/${e.name}`]
            : [],
      );
    const help = (c: Command): string[] => [c.helpInformation(), ...c.commands.flatMap(help)];
    const mentions = [
      ...['README.md', ...pages('docs', /\.md$/), ...pages('src', /\.tsx?$/)].map(
        (path) => [path, read(path)] as const,
      ),
      ...help(buildProgram()).map((text) => ['CLI help', text] as const),
    ].flatMap(([where, text]) => [...text.matchAll(/\bissue[ -]\d+/gi)].map((m) => `${where}: ${m[0]}`));
    expect(mentions).toEqual([]);
  });

  // A comment says why the code is so; a measured figure (a timing, a ratio, a peak) belongs to
  // bench/ and docs/benchmarks.md, where its command and date are, and goes stale in a comment.
  // A limit or a default (`2 s deadline`, `8 entries a page`) is a specification and stays.
  it('quotes no measured figure in the comments of src', () => {
    const measured = [
      /\bmeasured\b/i,
      /\bpeaked\b/i,
      /\btook\b[^.;]*\d\s?(µs|ms|s|min)\b/i,
      /[~≈]\s?\d[\d.,]*\s?(µs|us|ms|s|min|[kKMG]i?B)\b/,
      /\d\s?(µs|us|ms)\b/,
      /\d\.\d+\s?s\b/,
      // A ratio (`1.8×`), not a product (`2 × N`) or a size (`16×16`).
      /\d×(?!\d)/,
      /\d\s?x\b/,
    ];
    // Specifications in milliseconds: the longest timer Node takes, and a page's budget.
    const allowed = [
      'src/outbox/worker.ts: setTimeout holds 2^31 - 1 ms at most',
      'src/db/page-queries.ts: stays well under 100 ms',
    ];
    const quoted = sourceFiles('src').flatMap((path) =>
      commentsOf(path, read(path))
        .flatMap((comment) => comment.split('\n'))
        // Code in backticks is an example of a format (`500 ms`), not a figure.
        .map((line) => line.replace(/`[^`]*`/g, '``'))
        .filter((line) => measured.some((pattern) => pattern.test(line)))
        .filter(
          (line) =>
            !allowed.some((a) => a.startsWith(`${path}: `) && line.includes(a.slice(path.length + 2))),
        )
        .map((line) => `${path}: ${line.trim()}`),
    );
    expect(quoted).toEqual([]);
  });

  it('gives the one-command run and the test command', () => {
    expect(readme).toContain('npm ci && npm start');
    expect(readme).toMatch(/```sh\nnpm test\n```/);
    // The server must replace npm's shell (exec), or a signal to npm leaves it running; the build
    // before it must be the fast one, skipped when nothing changed.
    expect(pkg.scripts.start).toMatch(
      /^bash scripts\/build\.sh --if-stale && exec node [^&;|]*dist\/cli\.js start$/,
    );
    expect(pkg.scripts.build).toBe('bash scripts/build.sh');
  });

  it('says how to pick another port in the Quick start', () => {
    const quickStart = readme.slice(
      readme.indexOf('## Quick start'),
      readme.indexOf('\n## ', readme.indexOf('## Quick start') + 1),
    );
    expect(quickStart).toMatch(/PORT=\d+ npm start/);
  });

  // npm passes on the server's exit code: Ctrl-C (SIGINT to npm's process group) exits 0, as
  // test/e2e/npm-start.test.ts checks; npm 10 and 11 alike, so no 130 to explain.
  it('says what Ctrl-C on npm start exits with', () => {
    expect(readme).toMatch(
      /Ctrl-C in a\s+terminal[^.]*stops it the same way: `npm start` exits with the server's code, 0/,
    );
    expect(readme).not.toMatch(/exits\s+130/);
  });

  it('the Dockerfile builds with the steps CI runs', () => {
    expect(ci).toContain('npm ci');
    expect(dockerfile).toContain('RUN npm ci');
    expect(dockerfile).toContain('npm run build');
    expect(dockerfile).toMatch(/USER node/);
    expect(dockerfile).toMatch(/VOLUME \/data/);
    expect(dockerfile).toMatch(/DATABASE_PATH=\/data\/mirror\.db/);
  });
});
