import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { settingList } from '../../src/config/load-config.js';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  scripts: Record<string, string>;
};
const dockerfile = readFileSync(new URL('../../Dockerfile', import.meta.url), 'utf8');
const ci = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8');

describe('README is the front door', () => {
  it.each(settingList.map((s) => [s.env, s] as const))(
    'documents %s in the configuration table',
    (env, s) => {
      const row = readme.split('\n').find((line) => new RegExp(`^\\|\\s*\`${env}\`\\s*\\|`).test(line));
      expect(row, `README configuration table misses ${env}`).toBeDefined();
      if (s.flag) expect(row).toContain(`\`${s.flag}\``);
      expect(row).toContain(s.default === null ? '(unset)' : `\`${s.default}\``);
    },
  );

  // Derived from the commander program itself, so a new command or option cannot go undocumented.
  const commands = buildProgram().commands.map((c) => [c.name(), c] as const);

  it.each(commands)('shows the %s command', (name) => {
    expect(readme).toMatch(new RegExp(`coworker-mirror ${name}\\b`));
  });

  it.each(
    commands.flatMap(([name, c]) =>
      c.options
        .filter((o) => !o.hidden)
        .map((o) => [`${name} ${o.long ?? o.flags}`, o.long ?? o.flags] as const),
    ),
  )('documents the option %s', (_label, flag) => {
    expect(readme).toContain(`${flag}`);
    expect(readme).toMatch(new RegExp(`\`[^\`]*${flag.replace(/[-]/g, '\\-')}(?![\\w-])[^\`]*\``));
  });

  it('shows only npm scripts that exist', () => {
    const shown = [...readme.matchAll(/npm run ([a-z:-]+)/g)].map((m) => m[1] ?? '');
    expect(shown.length).toBeGreaterThan(5);
    for (const script of shown) expect(Object.keys(pkg.scripts), `npm run ${script}`).toContain(script);
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

  it('the Dockerfile builds with the steps CI runs', () => {
    expect(ci).toContain('npm ci');
    expect(dockerfile).toContain('RUN npm ci');
    expect(dockerfile).toContain('npm run build');
    expect(dockerfile).toMatch(/USER node/);
    expect(dockerfile).toMatch(/VOLUME \/data/);
    expect(dockerfile).toMatch(/DATABASE_PATH=\/data\/mirror\.db/);
  });
});
