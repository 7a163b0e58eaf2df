import { spawn, spawnSync, type ChildProcessByStdio } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';

export const PROJECT_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHILD_SCRIPT = fileURLToPath(new URL('./child-sync.ts', import.meta.url));
export const CLI_SCRIPT = fileURLToPath(new URL('../../src/cli.ts', import.meta.url));

/** One stdout line of a child: a pino line (`msg`) or a marker of child-sync.ts. */
export interface ChildLine {
  msg?: string;
  marker?: string;
  done?: number;
  total?: number;
  n?: number;
  runId?: number;
  code?: string;
  message?: string;
}

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

type Waiter = { predicate: (line: ChildLine) => boolean; resolve: (line: ChildLine | undefined) => void };

/**
 * A real process (`node --import tsx <script>`, possibly behind a launcher) whose output lines are
 * parsed as they arrive (the CLI's `sync` logs to stderr, child-sync.ts to stdout), so a test can act (kill) the moment a line shows up. Killed when the test
 * ends if still alive.
 */
export class ChildRun {
  readonly pid: number;
  readonly lines: ChildLine[] = [];
  readonly exited: Promise<ChildExit>;
  stderr = '';
  stdout = '';
  #alive = true;
  #waiters: Waiter[] = [];
  readonly #process: ChildProcessByStdio<Writable, Readable, Readable>;

  constructor(script: string, args: readonly string[], launcher: readonly string[] = []) {
    const command = [...launcher, process.execPath, '--import', 'tsx', script, ...args];
    this.#process = spawn(command[0] ?? process.execPath, command.slice(1), {
      cwd: PROJECT_ROOT,
      env: childEnv(),
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const pid = this.#process.pid;
    if (pid === undefined) throw new Error(`could not spawn ${command.join(' ')}`);
    this.pid = pid;
    // The child may be gone when we write or close stdin; that is not this test's concern.
    this.#process.stdin.on('error', () => undefined);
    createInterface({ input: this.#process.stderr }).on('line', (line) => this.#onLine(line, 'stderr'));
    createInterface({ input: this.#process.stdout }).on('line', (line) => this.#onLine(line, 'stdout'));
    this.exited = new Promise<ChildExit>((resolve) => {
      this.#process.once('exit', (code, signal) => {
        this.#alive = false;
        for (const waiter of this.#waiters.splice(0)) waiter.resolve(undefined);
        resolve({ code, signal });
      });
    });
    onTestFinished(async () => {
      if (this.#alive) this.kill();
      await this.exited;
    });
  }

  get alive(): boolean {
    return this.#alive;
  }

  /** The first line (already seen or still to come) that matches; undefined if the child exits first. */
  waitFor(predicate: (line: ChildLine) => boolean): Promise<ChildLine | undefined> {
    const seen = this.lines.find(predicate);
    if (seen) return Promise.resolve(seen);
    if (!this.#alive) return Promise.resolve(undefined);
    return new Promise((resolve) => this.#waiters.push({ predicate, resolve }));
  }

  kill(): void {
    if (this.#alive) this.#process.kill('SIGKILL');
  }

  /** Lets child-sync.ts exit after its run (it waits for stdin to close). */
  release(): void {
    this.#process.stdin.end();
  }

  #onLine(text: string, from: 'stdout' | 'stderr'): void {
    this[from] += `${text}\n`;
    let line: ChildLine;
    try {
      line = JSON.parse(text) as ChildLine;
    } catch {
      return;
    }
    this.lines.push(line);
    // Resolve synchronously-ish: a kill aimed at this line must not wait for more output.
    this.#waiters = this.#waiters.filter((waiter) => {
      if (!waiter.predicate(line)) return true;
      waiter.resolve(line);
      return false;
    });
  }
}

export function spawnChildSync(upstreamUrl: string, dbFile: string, webhookUrl?: string): ChildRun {
  const webhook = webhookUrl === undefined ? [] : ['--webhook-url', webhookUrl];
  return new ChildRun(CHILD_SCRIPT, ['--upstream', upstreamUrl, '--db', dbFile, ...webhook]);
}

/** child-sync.ts mirroring media too: the media of `mediaOrigin` into `mediaDir`. */
export function spawnChildMediaSync(
  upstreamUrl: string,
  dbFile: string,
  mediaOrigin: string,
  mediaDir: string,
): ChildRun {
  return new ChildRun(CHILD_SCRIPT, [
    '--upstream',
    upstreamUrl,
    '--db',
    dbFile,
    '--media-origin',
    mediaOrigin,
    '--media-dir',
    mediaDir,
  ]);
}

/** `coworker-mirror sync` run from source, as a user runs it (non-TTY: JSON logs on stdout). */
export function spawnCliSync(upstreamUrl: string, dbFile: string): ChildRun {
  return new ChildRun(CLI_SCRIPT, ['sync', '--upstream', upstreamUrl, '--db', dbFile]);
}

// A fresh PID namespace (unprivileged, through a user namespace): the sync runs as PID 1, as `node`
// does as the CMD of the Docker image. --kill-child: SIGKILL of unshare is SIGKILL of the sync.
const AS_PID_1 = ['unshare', '--user', '--map-root-user', '--pid', '--fork', '--kill-child'];

/** Whether this machine lets us start a process in its own PID namespace. */
export function canRunAsPid1(): boolean {
  return (
    spawnSync(AS_PID_1[0] ?? 'unshare', [...AS_PID_1.slice(1), 'true'], { stdio: 'ignore' }).status === 0
  );
}

/** `coworker-mirror sync` as PID 1 of a new PID namespace on this host: a container's view. */
export function spawnCliSyncAsPid1(upstreamUrl: string, dbFile: string): ChildRun {
  return new ChildRun(CLI_SCRIPT, ['sync', '--upstream', upstreamUrl, '--db', dbFile], AS_PID_1);
}

// Flags name the upstream and the file; nothing from the developer's environment may override them.
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of ['UPSTREAM_URL', 'DATABASE_PATH', 'LOG_LEVEL', 'NODE_OPTIONS']) delete env[name];
  return env;
}
