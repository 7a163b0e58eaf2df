import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BUILT_CLI, ROOT, ensureBuilt } from '../helpers/process.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { oncePerFile } from '../helpers/scope.js';
import { tempDir } from '../helpers/temp-db.js';

/** A resolve hook (run off the main thread) appending every resolved URL to MODULE_LOG. */
const HOOK = `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (process.env.MODULE_LOG) appendFileSync(process.env.MODULE_LOG, resolved.url + '\\n');
  return resolved;
}
`;

/**
 * Given to \`node --import\`: ES modules through the hook, and at exit the CommonJS files \`require()\`
 * loaded (fastify, prom-client and most packages are CommonJS).
 */
const PRELOAD = `import { appendFileSync } from 'node:fs';
import { createRequire, register } from 'node:module';
import { pathToFileURL } from 'node:url';
register('./hook.mjs', import.meta.url);
const require = createRequire(import.meta.url);
process.on('exit', () => {
  const files = Object.keys(require('node:module')._cache).map((file) => pathToFileURL(file).href);
  if (process.env.MODULE_LOG) appendFileSync(process.env.MODULE_LOG, files.join('\\n') + '\\n');
});
`;

const run = promisify(execFile);

/** The packages (and src folders, as dist/ files) a command that does not use them must not load. */
const SERVER_STACK = ['fastify', 'prom-client', '@opentelemetry/api', 'find-my-way', 'dist/http/'];
const PAGES = ['preact', 'preact-render-to-string', 'feed', 'dist/web/'];
/** The delivery side: a run's own outbox rows (dist/webhooks/outbox.js) are part of every sync. */
const WEBHOOKS = [
  'standardwebhooks',
  'nodemailer',
  'dist/webhooks/service.js',
  'dist/webhooks/channel.js',
  'dist/outbox/worker.js',
  'dist/notify/send.js',
  'dist/notify/channel.js',
];
const SIMULATED = ['dist/simulated-upstream/', 'dist/demo/start-demo.js'];
const STORE = ['better-sqlite3', 'drizzle-orm', 'pg'];
/** The settings' zod schemas and their loader: a command that parses no setting with them loads none. */
const SCHEMAS = [
  'zod',
  'dist/config/settings.js',
  'dist/config/load-config.js',
  'dist/config/schema-kit.js',
  'dist/config/values.js',
];

/** What one run of the built CLI loaded: package names and files under dist/. */
async function loadedBy(
  preload: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<Set<string>> {
  const log = join(tempDir(), 'modules.log');
  await run(process.execPath, ['--import', preload, BUILT_CLI, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', MODULE_LOG: log, ...env },
  });
  const loaded = new Set<string>();
  for (const url of readFileSync(log, 'utf8').split('\n')) {
    const pkg = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
    if (pkg) loaded.add(pkg);
    const built = /\/(dist\/.+)$/.exec(url)?.[1];
    if (built && !url.includes('/node_modules/')) loaded.add(built);
  }
  return loaded;
}

/** The entries of `unwanted` that `loaded` holds (a `dist/x/` entry matches every file under it). */
function present(loaded: Set<string>, unwanted: readonly string[]): string[] {
  return unwanted.filter((u) => [...loaded].some((l) => l === u || (u.endsWith('/') && l.startsWith(u))));
}

describe('each command loads only what it uses (regression: --version loaded the server stack)', () => {
  const fixture = oncePerFile(async (defer) => {
    ensureBuilt();
    const hooks = tempDir(defer);
    writeFileSync(join(hooks, 'hook.mjs'), HOOK);
    const preload = join(hooks, 'preload.mjs');
    writeFileSync(preload, PRELOAD);
    const upstream = await simulatedUpstream({ seed: 5, count: 12 }, defer);
    const db = join(tempDir(defer), 'mirror.db');
    const env = { PATH: process.env.PATH ?? '', UPSTREAM_URL: upstream.url };
    await run(process.execPath, [BUILT_CLI, 'sync', '--db', db], { cwd: ROOT, env });
    const found = await run(process.execPath, [BUILT_CLI, 'find', '', '--json', '--db', db], {
      cwd: ROOT,
      env,
    });
    const first = JSON.parse(found.stdout.split('\n')[0] ?? '') as { uuid: string };
    return { preload, db, upstreamUrl: upstream.url, uuid: first.uuid };
  });

  it('--version loads no package at all', async () => {
    const loaded = await loadedBy(fixture().preload, ['--version']);
    expect([...loaded].filter((m) => !m.startsWith('dist/'))).toEqual([]);
  });

  it.each([[['--help']], [['runs', '--help']], [['sync', '--help']]])(
    '%j loads neither the store, any stack nor the settings schemas (zod)',
    async (args) => {
      const loaded = await loadedBy(fixture().preload, args);
      expect(
        present(loaded, [...STORE, ...SERVER_STACK, ...PAGES, ...WEBHOOKS, ...SIMULATED, ...SCHEMAS]),
      ).toEqual([]);
    },
  );

  it('sync loads no server, page, webhook or simulated-upstream module when no endpoint is named', async () => {
    const { preload, db, upstreamUrl } = fixture();
    const loaded = await loadedBy(preload, ['sync', '--db', db], { UPSTREAM_URL: upstreamUrl });
    expect(loaded.has('better-sqlite3')).toBe(true);
    expect(present(loaded, [...SERVER_STACK, ...PAGES, ...WEBHOOKS, ...SIMULATED])).toEqual([]);
  });

  it('runs on a current SQLite database loads neither the ORM, its migrator nor zod (regression: 4×, then 3× a bare node)', async () => {
    const { preload, db } = fixture();
    const loaded = await loadedBy(preload, ['runs', '--db', db]);
    expect(loaded.has('better-sqlite3')).toBe(true);
    expect(
      present(loaded, [
        'drizzle-orm',
        'string-width',
        'dist/db/open.js',
        'dist/db/sqlite/store.js',
        'dist/upstream/contract.js',
        ...SCHEMAS,
      ]),
    ).toEqual([]);
  });

  it.each([
    ['runs', ['runs']],
    ['history', ['history', '{uuid}']],
    ['changes', ['changes', '--limit', '5']],
    ['changes --json', ['changes', '--json']],
    ['find', ['find', 'a']],
  ])('%s loads the store and nothing of the server, pages or webhooks', async (_name, args) => {
    const { preload, db, uuid } = fixture();
    const loaded = await loadedBy(preload, [...args.map((a) => (a === '{uuid}' ? uuid : a)), '--db', db]);
    expect(loaded.has('better-sqlite3')).toBe(true);
    expect(present(loaded, [...SERVER_STACK, ...PAGES, ...WEBHOOKS, ...SIMULATED, 'pg', 'undici'])).toEqual(
      [],
    );
  });
});
