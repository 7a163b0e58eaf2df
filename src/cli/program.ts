import type { RunStart } from '../db/store.js';
/**
 * The commander program: commands, their flags (one per setting, from config/setting-table.ts) and thin adapters
 * to the command modules. Built, never run here: `cli.ts` runs it, the docs generator and test read it.
 * Each action imports its command module when it runs, so a command pays only for what it uses
 * (`runs` never loads the HTTP server, `--help` loads no store); test/cli/lazy-commands.test.ts holds it.
 */
import { Command, Option } from 'commander';
import type { Config } from '../config/load-config.js';
import type { StoreConfig } from '../config/load-settings.js';
import type { FlagValues } from '../config/raw-settings.js';
import { settingList, settingOf, type SettingKey } from '../config/setting-table.js';
import { parseDuration } from '../time/duration.js';
import { ConfigError } from '../errors.js';
import { VERSION } from '../version.js';
import { unknownVariableWarnings } from './report.js';
import { parseWhen } from './parse-when.js';
import { registerDeliveriesCommand } from './deliveries-command.js';
import { registerNotifyCommand } from './notify-command.js';
import { changeKinds, runTriggers, type ChangeKind, type RunTrigger } from '../db/enums.js';
import type { LogFormat } from '../sync/child-output.js';

/** Adds the flag of each named setting, with its variable and default in the help text. */
function withSettings(command: Command, keys: readonly SettingKey[]): Command {
  for (const key of keys) {
    const s = settingOf(key);
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
function flagValues(options: Record<string, unknown>): FlagValues {
  const flags: FlagValues = {};
  for (const s of settingList) {
    if (!s.flag) continue;
    const value = options[new Option(s.flag).attributeName()];
    if (typeof value === 'string' || typeof value === 'boolean') flags[s.key] = value;
  }
  return flags;
}

function warnUnknown(config: Pick<Config, 'unknownVariables'>): void {
  for (const line of unknownVariableWarnings(config.unknownVariables)) process.stderr.write(`${line}\n`);
}

/** The whole config, every setting parsed by its zod schema (loaded here: building the program loads none). */
async function configFrom(options: Record<string, unknown>): Promise<Config> {
  const { loadConfig } = await import('../config/load-config.js');
  const config = loadConfig(process.env, flagValues(options));
  warnUnknown(config);
  return config;
}

/** A read command's config: its database settings alone, by the same loader without zod. */
async function storeConfigFrom(options: Record<string, unknown>): Promise<StoreConfig> {
  const { loadSettings } = await import('../config/load-settings.js');
  const config = loadSettings(process.env, flagValues(options), { only: 'database' });
  warnUnknown(config);
  return config;
}

const REBIND_HELP =
  'mirror this upstream into a database bound to another one from now on (recorded on the run)';

const SYNC_KEYS: SettingKey[] = [
  'upstream.url',
  'database.path',
  'sync.concurrency',
  'sync.maxPages',
  'sync.allowEmpty',
  'sync.confirmDrop',
  'log.level',
];
const SERVE_KEYS: SettingKey[] = [
  'database.path',
  'server.port',
  'server.host',
  'server.internalPort',
  'server.internalHost',
  'server.internalBaseUrl',
  'server.publicBaseUrl',
  'server.trustProxy',
  'log.level',
];

export function buildProgram(): Command {
  const program = new Command('coworker-mirror')
    .description('Mirror, version and serve a paginated DRF listing of coworkers')
    .version(VERSION)
    .showHelpAfterError()
    // Throw instead of exiting, so usage errors get our exit code 2 (subcommands inherit this).
    .exitOverride();
  addSyncCommand(program);
  addReadCommands(program);
  addServerCommands(program);
  addSimulateCommand(program);
  registerDeliveriesCommand(program, { withSettings, configFrom });
  registerNotifyCommand(program, { withSettings, configFrom });
  return program;
}

interface SyncFlags {
  rebind?: boolean;
  upstreamLabel?: string;
  logFormat?: LogFormat;
  trigger?: RunTrigger;
  scheduledFor?: string;
  syncProcess?: boolean;
  forStart?: boolean;
  terminal?: boolean;
}

function addSyncCommand(program: Command): void {
  withSettings(
    program
      .command('sync')
      .description('Run one sync: crawl every page, validate, store the changes')
      .option('--rebind', REBIND_HELP)
      // Internal: `start` runs each sync as this command and names the demo's upstream so, and
      // what started the run and the tick it claims.
      .addOption(new Option('--upstream-label <label>').hideHelp())
      .addOption(new Option('--trigger <kind>').choices(runTriggers).hideHelp())
      .addOption(new Option('--scheduled-for <time>').hideHelp())
      // Internal: `start` tells its child how it logs itself, so the two write one format.
      .addOption(
        new Option('--log-format <format>').choices(['pretty', 'json'] satisfies LogFormat[]).hideHelp(),
      )
      // Internal (src/sync/isolated-sync.ts): this process is the sync process of a `sync` or a
      // `start`, with an IPC channel to it; its stderr terminal, if any, is its fd 4.
      .addOption(new Option('--sync-process').hideHelp())
      .addOption(new Option('--for-start').hideHelp())
      .addOption(new Option('--terminal').hideHelp()),
    SYNC_KEYS,
  ).action(async (flags: Record<string, unknown> & SyncFlags) => {
    const config = await configFrom(flags);
    const start = runStartOf(flags);
    const upstreamLabel = flags.upstreamLabel ? { upstreamLabel: flags.upstreamLabel } : {};
    if (flags.syncProcess !== true) {
      // Whoever types or schedules `sync` gets the one way a sync runs: its own process.
      const { superviseSyncCommand } = await import('./sync-supervisor.js');
      process.exitCode = await superviseSyncCommand(config, {
        args: process.argv.slice(3),
        start,
        ...upstreamLabel,
      });
      return;
    }
    if (!process.send) {
      throw new ConfigError([
        { name: '--sync-process', problem: 'internal: only a process that runs `sync` passes it' },
      ]);
    }
    const { runSyncCommand } = await import('./sync-command.js');
    process.exitCode = await runSyncCommand(config, {
      rebind: flags.rebind === true,
      ...upstreamLabel,
      ...(flags.logFormat ? { logFormat: flags.logFormat } : {}),
      forStart: flags.forStart === true,
      terminal: flags.terminal === true,
      start,
    });
  });
}

/** What started a `sync`: a person or a script (`command`) unless `start` says otherwise. */
function runStartOf(flags: SyncFlags): RunStart {
  const tick = flags.scheduledFor;
  // A tick is the text every instance claims it by: one exact ISO form, nothing else.
  if (tick !== undefined && (Number.isNaN(Date.parse(tick)) || new Date(tick).toISOString() !== tick)) {
    throw new ConfigError([
      { name: '--scheduled-for', problem: `not an ISO time like 2026-01-01T00:00:00.000Z: ${tick}` },
    ]);
  }
  return { trigger: flags.trigger ?? 'command', scheduledFor: tick ?? null };
}

/** The commands that read the history: history, find, changes, runs. */
function addReadCommands(program: Command): void {
  withSettings(
    program
      .command('history')
      .description('Versions and changes of one coworker, by uuid or by name')
      .argument('[uuid]', 'the coworker uuid')
      .option('--name <text>', 'the coworker whose name contains this text (see find)')
      .option('--json', 'JSON Lines output'),
    ['database.path'],
  ).action(
    async (uuid: string | undefined, flags: Record<string, unknown> & { json?: boolean; name?: string }) => {
      if ((uuid === undefined) === (flags.name === undefined)) {
        throw new ConfigError([{ name: 'history', problem: 'give either a uuid or --name <text>' }]);
      }
      const target = uuid !== undefined ? { uuid } : { name: flags.name ?? '' };
      const { runHistoryCommand } = await import('./history-commands.js');
      process.exitCode = await runHistoryCommand(await configFrom(flags), target, flags.json === true);
    },
  );

  withSettings(
    program
      .command('find')
      .description('Coworkers whose name contains the text, with their uuids')
      .argument('<text>', 'part of a name, any case')
      .option('--json', 'JSON Lines output'),
    ['database.path'],
  ).action(async (text: string, flags: Record<string, unknown> & { json?: boolean }) => {
    const { runFindCommand } = await import('./history-commands.js');
    process.exitCode = await runFindCommand(await configFrom(flags), text, flags.json === true);
  });

  addChangesCommand(program);
  addPruneCommand(program);

  withSettings(
    program
      .command('runs')
      .description('Sync runs, newest first')
      .option('--limit <n>', 'at most this many', '20')
      .option('--json', 'JSON Lines output'),
    ['database.path'],
  ).action(async (flags: Record<string, unknown> & { limit?: string; json?: boolean }) => {
    // Both load at once: their files are read while the other's are compiled.
    const [{ runRunsCommand }, config] = await Promise.all([
      import('./runs-command.js'),
      storeConfigFrom(flags),
    ]);
    process.exitCode = await runRunsCommand(config, parseLimit(flags.limit), flags.json === true);
  });
}

function addChangesCommand(program: Command): void {
  withSettings(
    program
      .command('changes')
      .description('Changes, newest first')
      .option('--since <when>', 'ISO time, or a duration back from now (7d, 12h, 30m)')
      .option('--until <when>', 'ISO time, or a duration back from now')
      .option('--field <name>', 'only changes of this field')
      .option('--uuid <uuid>', 'only changes of this coworker')
      .addOption(new Option('--kind <kind>', 'only this kind').choices(changeKinds))
      .option('--limit <n>', 'at most this many, or "all"', '1000')
      .option('--json', 'JSON Lines output, streamed')
      .option('--csv', 'CSV output (the columns of /api/mirror/changes.csv), streamed'),
    ['database.path'],
  ).action(async (flags: Record<string, unknown> & ChangeFlags) => {
    const config = await configFrom(flags);
    const options = {
      since: parseWhen('--since', flags.since),
      until: parseWhen('--until', flags.until),
      field: flags.field,
      uuid: flags.uuid,
      kind: flags.kind,
      limit: flags.limit === 'all' ? undefined : parseLimit(flags.limit),
      json: flags.json === true,
      csv: flags.csv === true,
    };
    const { runChangesCommand } = await import('./history-commands.js');
    process.exitCode = await runChangesCommand(config, options);
  });
}

function addPruneCommand(program: Command): void {
  withSettings(
    program
      .command('prune')
      .description(
        'Forget coworkers removed long ago, and history older than a horizon (takes the sync lock)',
      )
      .option(
        '--removed-before <duration>',
        'delete every row of coworkers removed longer ago than this (0s: all)',
      )
      .option(
        '--older-than <duration>',
        'delete changes and closed versions older than this, keeping current state',
      )
      .option('--json', 'one JSON object'),
    ['database.path'],
  ).action(async (flags: Record<string, unknown> & PruneFlags) => {
    if (flags.removedBefore === undefined && flags.olderThan === undefined) {
      throw new ConfigError([
        { name: 'prune', problem: 'give --removed-before <duration>, --older-than <duration>, or both' },
      ]);
    }
    const ages = {
      removedAfterMs:
        flags.removedBefore === undefined ? null : parseDurationFlag('--removed-before', flags.removedBefore),
      olderThanMs: flags.olderThan === undefined ? null : parseDurationFlag('--older-than', flags.olderThan),
    };
    const config = await configFrom(flags);
    const { runPruneCommand } = await import('./prune-command.js');
    process.exitCode = await runPruneCommand(config, ages, flags.json === true);
  });
}

/** `serve` alone, and `start`: the server with its scheduled syncs. */
function addServerCommands(program: Command): void {
  withSettings(
    program
      .command('serve')
      .description('Serve the mirror over HTTP (list endpoint, history API, health, metrics)'),
    SERVE_KEYS,
  ).action(async (flags: Record<string, unknown>) => {
    const { runServeCommand } = await import('../main.js');
    process.exitCode = await runServeCommand(await configFrom(flags));
  });

  withSettings(
    program
      .command('start')
      .description(
        'The main job: scheduled sync plus the server in one process (demo upstream when none is named)',
      ),
    [...new Set<SettingKey>([...SYNC_KEYS, ...SERVE_KEYS, 'sync.cron'])],
  )
    .option('--rebind', REBIND_HELP)
    .action(async (flags: Record<string, unknown> & { rebind?: boolean }) => {
      const { runStartCommand } = await import('../main.js');
      process.exitCode = await runStartCommand(await configFrom(flags), { rebind: flags.rebind === true });
    });
}

function addSimulateCommand(program: Command): void {
  withSettings(
    program
      .command('simulate')
      .description(
        'Run the simulated upstream alone (invented coworkers, DRF-like pages, and their media) until stopped',
      )
      .option(
        '--port <n>',
        'port to listen on; its media host takes the next one (0: any free ports)',
        '8766',
      )
      .option('--host <address>', 'address to listen on', '127.0.0.1')
      .option('--seed <n>', 'seed of the invented data', '1')
      .option('--count <n>', 'number of coworkers', '45')
      .option('--mutate-every <duration>', 'change the data this often (0: never)', '2m'),
    ['log.level'],
  ).action(async (flags: Record<string, unknown> & SimulateFlags) => {
    const config = await configFrom({ logLevel: flags.logLevel });
    const options = {
      port: parseWhole('--port', flags.port, 0, 65535),
      host: flags.host ?? '127.0.0.1',
      seed: parseWhole('--seed', flags.seed, 0, 2 ** 31),
      count: parseWhole('--count', flags.count, 0, 1_000_000),
      mutateEveryMs: parseDurationFlag('--mutate-every', flags.mutateEvery),
    };
    const { runSimulateCommand } = await import('./simulate-command.js');
    process.exitCode = await runSimulateCommand(config, options);
  });
}

interface ChangeFlags {
  since?: string;
  until?: string;
  field?: string;
  uuid?: string;
  kind?: ChangeKind;
  limit?: string;
  json?: boolean;
  csv?: boolean;
}

interface PruneFlags {
  removedBefore?: string;
  olderThan?: string;
  json?: boolean;
}

interface SimulateFlags {
  port?: string;
  host?: string;
  seed?: string;
  count?: string;
  mutateEvery?: string;
}

function parseWhole(flag: string, value: string | undefined, min: number, max: number): number {
  const n = Number(value);
  if (value === undefined || !/^\d+$/.test(value) || n < min || n > max) {
    throw new ConfigError([
      { name: flag, problem: `expected a whole number from ${min} to ${max} (got ${JSON.stringify(value)})` },
    ]);
  }
  return n;
}

function parseDurationFlag(flag: string, value: string | undefined): number {
  const ms = value === undefined ? null : parseDuration(value);
  if (ms === null) {
    throw new ConfigError([
      { name: flag, problem: `expected a duration like 30s, 2m, 90d or 0 (got ${JSON.stringify(value)})` },
    ]);
  }
  return ms;
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
