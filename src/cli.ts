#!/usr/bin/env -S node --max-semi-space-size=2
// A 2 MB young generation (V8's default grows to 16 MB a semi-space) keeps a 100,000-entry sync
// under 300 MB peak RSS at the same speed; measured in README "Benchmarks". `npm start` and the
// Dockerfile pass the same flag, since `node dist/cli.js` does not read this line.
import { Command, CommanderError, Option } from 'commander';
import { loadConfig, settings, type Config, type FlagValues, type SettingKey } from './config.js';
import { ConfigError, toMirrorError } from './errors.js';
import { EXIT, exitCodeFor } from './exit-codes.js';
import { createLogger } from './logger.js';
import { VERSION } from './version.js';
import { runHistoryCommand, runChangesCommand, runRunsCommand } from './cli/history-commands.js';
import { runSyncCommand } from './cli/sync-command.js';
import { parseWhen } from './cli/parse-when.js';
import { runServeCommand, runStartCommand } from './main.js';

/** Adds the flag of each named setting, with its variable and default in the help text. */
function withSettings(command: Command, keys: readonly SettingKey[]): Command {
  for (const key of keys) {
    const s = settings[key];
    if (!s.flag) continue;
    const isSwitch = s.default === 'false';
    const option = new Option(
      isSwitch ? s.flag : `${s.flag} <value>`,
      `${s.doc} [env ${s.env}${s.default && !isSwitch ? `, default ${s.default}` : ''}]`,
    );
    command.addOption(option);
  }
  return command;
}

/** Commander names options after their flags (`--max-pages` → maxPages); map them back to settings. */
function configFrom(options: Record<string, unknown>): Config {
  const flags: FlagValues = {};
  for (const [key, s] of Object.entries(settings) as [SettingKey, (typeof settings)[SettingKey]][]) {
    if (!s.flag) continue;
    const value = options[new Option(s.flag).attributeName()];
    if (typeof value === 'string' || typeof value === 'boolean') flags[key] = value;
  }
  return loadConfig(process.env, flags);
}

const SYNC_KEYS: SettingKey[] = [
  'upstreamUrl',
  'databasePath',
  'concurrency',
  'maxPages',
  'allowEmpty',
  'logLevel',
];
const SERVE_KEYS: SettingKey[] = ['databasePath', 'port', 'host', 'publicBaseUrl', 'trustProxy', 'logLevel'];

export function buildProgram(): Command {
  const program = new Command('coworker-mirror')
    .description('Mirror, version and serve a paginated DRF listing of coworkers')
    .version(VERSION)
    .showHelpAfterError()
    // Throw instead of exiting, so usage errors get our exit code 2 (subcommands inherit this).
    .exitOverride();

  withSettings(
    program.command('sync').description('Run one sync: crawl every page, validate, store the changes'),
    SYNC_KEYS,
  ).action(async (flags: Record<string, unknown>) => {
    process.exitCode = await runSyncCommand(configFrom(flags));
  });

  withSettings(
    program
      .command('history')
      .description('Versions and changes of one coworker')
      .argument('<uuid>', 'the coworker uuid')
      .option('--json', 'JSON Lines output'),
    ['databasePath'],
  ).action((uuid: string, flags: Record<string, unknown> & { json?: boolean }) => {
    process.exitCode = runHistoryCommand(configFrom(flags), uuid, flags.json === true);
  });

  withSettings(
    program
      .command('changes')
      .description('Changes, newest first')
      .option('--since <when>', 'ISO time, or a duration back from now (7d, 12h, 30m)')
      .option('--until <when>', 'ISO time, or a duration back from now')
      .option('--field <name>', 'only changes of this field')
      .option('--uuid <uuid>', 'only changes of this coworker')
      .addOption(
        new Option('--kind <kind>', 'only this kind').choices(['added', 'changed', 'removed', 'returned']),
      )
      .option('--limit <n>', 'at most this many', '1000')
      .option('--json', 'JSON Lines output'),
    ['databasePath'],
  ).action((flags: Record<string, unknown> & ChangeFlags) => {
    process.exitCode = runChangesCommand(configFrom(flags), {
      since: parseWhen('--since', flags.since),
      until: parseWhen('--until', flags.until),
      field: flags.field,
      uuid: flags.uuid,
      kind: flags.kind,
      limit: parseLimit(flags.limit),
      json: flags.json === true,
    });
  });

  withSettings(
    program
      .command('runs')
      .description('Sync runs, newest first')
      .option('--limit <n>', 'at most this many', '20')
      .option('--json', 'JSON Lines output'),
    ['databasePath'],
  ).action((flags: Record<string, unknown> & { limit?: string; json?: boolean }) => {
    process.exitCode = runRunsCommand(configFrom(flags), parseLimit(flags.limit), flags.json === true);
  });

  withSettings(
    program
      .command('serve')
      .description('Serve the mirror over HTTP (list endpoint, history API, health, metrics)'),
    SERVE_KEYS,
  ).action(async (flags: Record<string, unknown>) => {
    process.exitCode = await runServeCommand(configFrom(flags));
  });

  withSettings(
    program
      .command('start')
      .description(
        'The main job: scheduled sync plus the server in one process (demo upstream when none is named)',
      ),
    [...new Set<SettingKey>([...SYNC_KEYS, ...SERVE_KEYS, 'syncCron'])],
  ).action(async (flags: Record<string, unknown>) => {
    process.exitCode = await runStartCommand(configFrom(flags));
  });

  return program;
}

interface ChangeFlags {
  since?: string;
  until?: string;
  field?: string;
  uuid?: string;
  kind?: 'added' | 'changed' | 'removed' | 'returned';
  limit?: string;
  json?: boolean;
}

function parseLimit(value: string | undefined): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) {
    throw new ConfigError([
      { name: '--limit', problem: `expected a whole number of at least 1 (got ${JSON.stringify(value)})` },
    ]);
  }
  return n;
}

async function main(): Promise<void> {
  try {
    // Commander's own usage errors (unknown option, bad choice, missing argument) are exit 2 like
    // ours; --help and --version stay 0.
    await buildProgram().parseAsync(process.argv);
  } catch (thrown) {
    if (thrown instanceof CommanderError) {
      process.exitCode = thrown.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    const error = toMirrorError(thrown);
    if (error instanceof ConfigError) {
      process.stderr.write(`coworker-mirror: ${error.message}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    // A database error is the operator's to fix: one plain line says what to do, the log has the rest.
    if (error.code === 'DB_ERROR') process.stderr.write(`coworker-mirror: ${error.message}\n`);
    createLogger({ level: 'error', pretty: false, destination: process.stderr }).error(
      { err: error, code: error.code },
      error.message,
    );
    process.exitCode = exitCodeFor(error.code);
  }
}

await main();
