import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { openDatabase } from '../../src/db/open.js';
import { beginRun } from '../../src/sync/run-lock.js';
import { validateCron } from '../../src/sync/scheduler.js';
import { ROOT, ensureBuilt, eventually } from '../helpers/process.js';
import { missing, type Requirement } from '../helpers/requirements.js';
import { simulatedUpstream } from '../helpers/sync.js';
import { tempDir } from '../helpers/temp-db.js';

beforeAll(() => ensureBuilt(), 120_000);

const deployFile = (name: string) => readFileSync(join(ROOT, 'deploy', name), 'utf8');

/** A unit file's settings: section → key → every value it is given, in order. */
type Unit = Record<string, Record<string, string[]>>;

function parseUnit(text: string): Unit {
  const unit: Unit = {};
  let section: Record<string, string[]> | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const header = /^\[(.+)\]$/.exec(line);
    if (header?.[1]) {
      section = unit[header[1]] ??= {};
      continue;
    }
    const setting = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!section || !setting?.[1] || setting[2] === undefined) throw new Error(`not a unit line: ${raw}`);
    (section[setting[1]] ??= []).push(setting[2]);
  }
  return unit;
}

/** The one value of a key; a key given twice (or not at all) fails the test. */
function one(unit: Unit, section: string, key: string): string {
  const values = unit[section]?.[key] ?? [];
  expect(values, `${section} ${key}`).toHaveLength(1);
  return values[0] ?? '';
}

/**
 * The env file as systemd's EnvironmentFile= reads it, for the values the file may hold (its head
 * says which: plain, or in single quotes); a line outside that subset fails the test.
 */
function parseEnvFile(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const assignment = /^([A-Z_][A-Z0-9_]*)=(?:'([^']*)'|([^\s$`"\\';&|<>()*?[\]#~]*))$/.exec(line);
    if (!assignment?.[1]) throw new Error(`an env file line both systemd and sh may not read alike: ${raw}`);
    env[assignment[1]] = assignment[2] ?? assignment[3] ?? '';
  }
  return env;
}

/** What systemd gives a system service's process besides the env file (systemd.exec(5)). */
function serviceEnvironment(stateDir: string, home: string): Record<string, string> {
  return {
    PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    HOME: home,
    USER: 'coworker-mirror',
    LOGNAME: 'coworker-mirror',
    SHELL: '/usr/sbin/nologin',
    STATE_DIRECTORY: stateDir,
  };
}

/** The installed paths the deploy files name, and where this test puts each. */
interface Layout {
  stateDir: string;
  envFile: string;
  env: Record<string, string>;
  substitute: (text: string) => string;
}

/**
 * The clone is this checkout, node the one running the tests, the data folder and the env file in
 * a temp folder; the env file is the example's, with the upstream (and, for a server, the port)
 * replaced. Every path a deploy file names must be one of these: a new one fails here.
 */
function layout(env: Record<string, string>): Layout {
  const dir = tempDir();
  const stateDir = join(dir, 'var-lib-coworker-mirror');
  spawnSync('mkdir', ['-p', stateDir]);
  const envFile = join(dir, 'coworker-mirror.env');
  const paths: [string, string][] = [
    ['/etc/coworker-mirror/coworker-mirror.env', envFile],
    ['/var/lib/coworker-mirror', stateDir],
    ['/opt/coworker-mirror', ROOT.replace(/\/$/, '')],
    ['/usr/bin/node', process.execPath],
  ];
  const substitute = (text: string) => {
    const out = paths.reduce((acc, [from, to]) => acc.replaceAll(from, to), text);
    expect(out, 'an installed path this test does not place').not.toMatch(
      /(^|[\s=])\/(opt|etc|var|srv|home)\//m,
    );
    return out;
  };
  const example = deployFile('coworker-mirror.env');
  let text = substitute(example);
  for (const [name, value] of Object.entries(env)) {
    const line = new RegExp(`^#?${name}=.*$`, 'm');
    expect(text, `the example env file sets ${name}`).toMatch(line);
    text = text.replace(line, `${name}=${value}`);
  }
  writeFileSync(envFile, text);
  return { stateDir, envFile, env: parseEnvFile(text), substitute };
}

/** ExecStart as systemd splits it: no prefixes (`-`, `@`, `+`, `!`), no quoting needed. */
function commandLine(unit: Unit): string[] {
  const line = one(unit, 'Service', 'ExecStart');
  expect(line).toMatch(/^\//);
  expect(line).not.toMatch(/["'\\$%;]/);
  return line.split(/\s+/);
}

interface Started {
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
  kill: (signal: NodeJS.Signals) => void;
}

function startService(unit: Unit, place: Layout): Started {
  const [file = '', ...args] = commandLine(unit).map(place.substitute);
  const child = spawn(file, args, {
    cwd: place.substitute(one(unit, 'Service', 'WorkingDirectory')),
    env: { ...serviceEnvironment(place.stateDir, tempDir()), ...place.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { exited, output: () => text, kill: (signal) => child.kill(signal) };
}

/** The address the server logs (a JSON line: its output is not a terminal). */
async function servedAt(started: Started): Promise<string> {
  return eventually(
    () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(started.output())?.[1],
    undefined,
    'the line saying where it serves',
  );
}

async function listed(base: string): Promise<number | undefined> {
  const res = await fetch(`${base}/api/model/team-block-coworker/list/`);
  if (res.status !== 200) return undefined;
  return ((await res.json()) as { count: number }).count;
}

const seconds = (span: string) => {
  const match = /^(\d+)(s|min)?$/.exec(span);
  if (!match?.[1]) throw new Error(`not a time span this test reads: ${span}`);
  return Number(match[1]) * (match[2] === 'min' ? 60 : 1);
};

function systemdAnalyze(): Requirement<string> {
  const found = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;
  return {
    what: 'systemd-analyze (to verify the unit files)',
    found: found ? 'systemd-analyze' : null,
    install: 'apt-get install -y systemd',
  };
}

const SERVICE = 'coworker-mirror.service';
const SERVE_SERVICE = 'coworker-mirror-serve.service';

describe('the systemd unit of start (deploy/coworker-mirror.service)', () => {
  const unit = parseUnit(deployFile(SERVICE));

  it('runs start in the foreground with the env file, restarts on failure, stops with SIGTERM past the mirror’s own grace, keeps its data in its state folder, hardened', () => {
    expect(commandLine(unit).slice(-2)).toEqual(['/opt/coworker-mirror/dist/cli.js', 'start']);
    const service = Object.fromEntries(
      [
        'Type',
        'User',
        'Group',
        'WorkingDirectory',
        'EnvironmentFile',
        'Restart',
        'RestartPreventExitStatus',
        'KillSignal',
        'KillMode',
        'StateDirectory',
        'NoNewPrivileges',
        'ProtectSystem',
        'ProtectHome',
        'PrivateTmp',
      ].map((key) => [key, one(unit, 'Service', key)]),
    );
    expect(service).toEqual({
      Type: 'simple',
      User: 'coworker-mirror',
      Group: 'coworker-mirror',
      WorkingDirectory: '/opt/coworker-mirror',
      EnvironmentFile: '/etc/coworker-mirror/coworker-mirror.env',
      Restart: 'on-failure',
      // The exit code of a configuration the message names (docs/cli.md).
      RestartPreventExitStatus: '2',
      KillSignal: 'SIGTERM',
      KillMode: 'mixed',
      StateDirectory: 'coworker-mirror',
      NoNewPrivileges: 'true',
      ProtectSystem: 'strict',
      ProtectHome: 'true',
      PrivateTmp: 'true',
    });
    // src/main.ts gives answers and a sync in flight 10 s, a chat message in flight NOTIFY_TIMEOUT (15 s).
    expect(seconds(one(unit, 'Service', 'TimeoutStopSec'))).toBeGreaterThan(10 + 15);
    // V8 writes the code it runs: this would stop node at its first function.
    expect(unit.Service?.MemoryDenyWriteExecute).toBeUndefined();
    // The database the env file names is in the state folder systemd makes for it.
    expect(parseEnvFile(deployFile('coworker-mirror.env')).DATABASE_PATH).toBe(
      `/var/lib/${one(unit, 'Service', 'StateDirectory')}/mirror.db`,
    );
  });

  it('its ExecStart, with the env file, serves the mirror; the KillSignal stops it with exit 0', async () => {
    const upstream = await simulatedUpstream({ seed: 3, count: 12 });
    const place = layout({ UPSTREAM_URL: upstream.url, PORT: '0' });
    const started = startService(unit, place);
    const base = await servedAt(started);
    // The first sync of an empty mirror runs at once; the list endpoint answers once it is stored.
    expect(await eventually(() => listed(base), undefined, 'the listing served')).toBe(12);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    started.kill(one(unit, 'Service', 'KillSignal') as NodeJS.Signals);
    expect(await started.exited).toEqual({ code: 0, signal: null });
    // Its data is where the unit keeps it, and it recorded the run.
    const store = openDatabase(join(place.stateDir, 'mirror.db'));
    onTestFinished(() => store.close());
    expect((await store.listRuns({ limit: 5 })).map((r) => r.status)).toEqual(['succeeded']);
  });
});

describe('the cron way (deploy/coworker-mirror.cron and deploy/coworker-mirror-serve.service)', () => {
  const serveUnit = parseUnit(deployFile(SERVE_SERVICE));

  /** The job line of the cron.d file: its schedule, user and command. */
  function cronJob(): { schedule: string; user: string; command: string; variables: Record<string, string> } {
    const variables: Record<string, string> = {};
    const jobs: string[][] = [];
    for (const raw of deployFile('coworker-mirror.cron').split('\n')) {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) continue;
      const variable = /^([A-Z_]+)=(\S*)$/.exec(line);
      if (variable?.[1]) variables[variable[1]] = variable[2] ?? '';
      else jobs.push(line.split(/\s+/));
    }
    expect(jobs).toHaveLength(1);
    const fields = jobs[0] ?? [];
    // cron turns % into a newline: a command must have none.
    expect(fields.join(' ')).not.toContain('%');
    return {
      schedule: fields.slice(0, 5).join(' '),
      user: fields[5] ?? '',
      command: fields.slice(6).join(' '),
      variables,
    };
  }

  /**
   * The job's command as cron runs it: its SHELL, cron's own small environment. Not spawnSync: the
   * upstream it syncs from answers on this process's event loop.
   */
  function runCronCommand(
    place: Layout,
    variables: Record<string, string>,
    command: string,
  ): Promise<{ status: number | null; stdout: string; stderr: string }> {
    const shell = variables.SHELL ?? '/bin/sh';
    const child = spawn(shell, ['-c', place.substitute(command)], {
      env: { PATH: '/usr/bin:/bin', HOME: tempDir(), LOGNAME: 'coworker-mirror', SHELL: shell },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const closed = new Promise<number | null>((resolve) => child.once('close', resolve));
    onTestFinished(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await closed;
    });
    return closed.then((status) => ({ status, stdout, stderr }));
  }

  it('a sync every few minutes as the service user, with the same env file; the server beside it runs serve, with no schedule of its own', () => {
    const job = cronJob();
    expect(validateCron(job.schedule)).toBe(true);
    expect(job.schedule).toBe('*/10 * * * *');
    expect(job.user).toBe(one(serveUnit, 'Service', 'User'));
    expect(job.variables).toEqual({ SHELL: '/bin/sh', MAILTO: 'root' });
    expect(job.command).toContain(`. ${one(serveUnit, 'Service', 'EnvironmentFile')} `);
    expect(job.command).toContain(` dist/cli.js sync `);
    expect(commandLine(serveUnit).slice(-2)).toEqual(['/opt/coworker-mirror/dist/cli.js', 'serve']);
    expect(one(serveUnit, 'Unit', 'Conflicts')).toBe(SERVICE);
    // The same data folder, env file, stop and restart as the unit of start.
    const startUnit = parseUnit(deployFile(SERVICE));
    for (const key of [
      'WorkingDirectory',
      'EnvironmentFile',
      'StateDirectory',
      'KillSignal',
      'Restart',
      'User',
    ]) {
      expect(one(serveUnit, 'Service', key), key).toBe(one(startUnit, 'Service', key));
    }
  });

  it('its command records a run, silent when all went well; another sync holding the lock makes it say so in one line and exit 4', async () => {
    const upstream = await simulatedUpstream({ seed: 5, count: 9 });
    const place = layout({ UPSTREAM_URL: upstream.url });
    const job = cronJob();
    const first = await runCronCommand(place, job.variables, job.command);
    expect({ status: first.status, stdout: first.stdout, stderr: first.stderr }).toEqual({
      status: 0,
      stdout: '',
      stderr: '',
    });
    const store = openDatabase(join(place.stateDir, 'mirror.db'));
    onTestFinished(() => store.close());
    expect((await store.listRuns({ limit: 5 })).map((r) => [r.status, r.entries])).toEqual([
      ['succeeded', 9],
    ]);

    const held = await beginRun(store, upstream.url);
    const refused = await runCronCommand(place, job.variables, job.command);
    expect(refused.status).toBe(4);
    expect(refused.stdout).toBe('');
    // No flock needed: the mirror's own lock refused it, naming the holder (its run id, pid, host).
    expect(refused.stderr).toBe(
      `coworker-mirror: sync failed (run ${held.id}) [SYNC_LOCKED]: another sync holds the lock: ` +
        `run ${held.id} (pid ${process.pid} on ${hostname()}, started ${held.startedAt})\n`,
    );
    // The refusal wrote no run of its own.
    expect((await store.listRuns({ limit: 5 })).map((r) => [r.id, r.status])).toEqual([
      [held.id, 'running'],
      [1, 'succeeded'],
    ]);
  });

  it('the serve unit’s ExecStart serves what the cron command stored; the KillSignal stops it with exit 0', async () => {
    const upstream = await simulatedUpstream({ seed: 6, count: 7 });
    const place = layout({ UPSTREAM_URL: upstream.url, PORT: '0' });
    const job = cronJob();
    expect((await runCronCommand(place, job.variables, job.command)).status).toBe(0);
    const started = startService(serveUnit, place);
    const base = await servedAt(started);
    expect(await listed(base)).toBe(7);
    started.kill(one(serveUnit, 'Service', 'KillSignal') as NodeJS.Signals);
    expect(await started.exited).toEqual({ code: 0, signal: null });
  });
});

describe('the deploy files as systemd reads them', () => {
  const analyze = systemdAnalyze();
  if (missing(analyze)) return;

  it.each([SERVICE, SERVE_SERVICE])('systemd-analyze verify finds nothing to say about %s', (name) => {
    // verify checks that the program of ExecStart exists: this machine's node stands in for /usr/bin/node.
    const copy = join(tempDir(), name);
    writeFileSync(copy, deployFile(name).replaceAll('/usr/bin/node', process.execPath));
    const result = spawnSync(analyze.found ?? '', ['verify', copy], {
      encoding: 'utf8',
    });
    expect({ status: result.status, stderr: result.stderr }).toEqual({ status: 0, stderr: '' });
  });
});

describe('the example env file (deploy/coworker-mirror.env)', () => {
  it('holds only lines sh and systemd read alike, and sh reads each as systemd does', () => {
    const file = join(ROOT, 'deploy', 'coworker-mirror.env');
    const result = spawnSync('/bin/sh', ['-c', `set -a && . '${file}' && exec env -0`], {
      env: {},
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    const bySh = Object.fromEntries(
      result.stdout
        .split('\0')
        .filter((pair) => pair !== '')
        .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    );
    const bySystemd = parseEnvFile(readFileSync(file, 'utf8'));
    expect(Object.fromEntries(Object.keys(bySystemd).map((name) => [name, bySh[name]]))).toEqual(bySystemd);
  });
});
