import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFinished } from 'vitest';
import { WAIT_MS } from './patience.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const BUILT_CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * The e2e tests run the built CLI, as users do. CI builds first; a bare `npm test` after editing
 * src/ rebuilds here, so a stale dist/ never answers for the new code.
 */
export function ensureBuilt(): void {
  if (existsSync(BUILT_CLI) && statSync(BUILT_CLI).mtimeMs >= newestSource(join(ROOT, 'src'))) return;
  const result = spawnSync('bash', ['scripts/build.sh'], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('build failed');
}

export interface RunningProcess {
  child: ChildProcess;
  output: () => string;
  /** Resolves with the first stdout/stderr line matching, or rejects after `timeoutMs` (WAIT_MS). */
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Spawns the built CLI (in `cwd`, the repository by default); killed (SIGKILL) when the test ends if still running. */
export function runCli(args: string[], env: Record<string, string>, cwd: string = ROOT): RunningProcess {
  const child = spawn(process.execPath, [BUILT_CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let text = '';
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onData = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    for (const w of [...waiters]) {
      const line = text.split('\n').find((l) => w.pattern.test(l));
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(line);
      }
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return {
    child,
    output: () => text,
    exited,
    waitFor: (pattern, timeoutMs = WAIT_MS) =>
      new Promise((resolve, reject) => {
        const found = text.split('\n').find((l) => pattern.test(l));
        if (found !== undefined) return resolve(found);
        const timer = setTimeout(
          () =>
            reject(new Error(`no line matching ${pattern} within ${timeoutMs} ms:\n${text.slice(-3000)}`)),
          timeoutMs,
        );
        waiters.push({ pattern, resolve: (line) => (clearTimeout(timer), resolve(line)) });
      }),
  };
}

/** Polls until `check` returns a value (not undefined), or fails after `timeoutMs` (WAIT_MS). */
export async function eventually<T>(
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = WAIT_MS,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no value yet';
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      // Not ready yet; kept so a wait that never ends says why.
      last = error instanceof Error ? error.message : String(error);
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${last})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Whether script(1) from util-linux is here to give a command a pseudo-terminal. */
export const HAS_SCRIPT = spawnSync('script', ['--version'], { stdio: 'ignore' }).status === 0;

// eslint-disable-next-line no-control-regex -- colour codes are what is stripped
const plainTerminal = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '').replace(/\r/g, '');

export interface TerminalProcess {
  /**
   * Resolves with what `found` returns for the output so far (colour codes and carriage returns
   * stripped) once it returns something, or rejects after `timeoutMs` (WAIT_MS) showing the output.
   */
  until<T>(found: (output: string) => T | undefined, timeoutMs?: number): Promise<T>;
  /** The command's exit code (script -e passes it on) and all it wrote, once it has ended. */
  ended(): Promise<{ code: number | null; output: string }>;
}

/**
 * Runs the built CLI on a pseudo-terminal (script(1)), as a person at a terminal does (TERM=xterm,
 * stdin a pipe left open); its whole process group is killed when the test ends.
 */
export function runCliOnTerminal(args: string[], env: Record<string, string>): TerminalProcess {
  const command = [process.execPath, BUILT_CLI, ...args]
    .map((arg) => `'${arg.replaceAll("'", "'\\''")}'`)
    .join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'xterm', ...env },
    stdio: ['pipe', 'pipe', 'ignore'],
    detached: true,
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  onTestFinished(async () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch (error) {
      // The group is gone when the command ended by itself: nothing left to stop.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
    await exited;
  });
  let output = '';
  const checks = new Set<() => void>();
  child.stdout.on('data', (chunk: Buffer) => {
    output += plainTerminal(chunk.toString('utf8'));
    for (const check of [...checks]) check();
  });
  return {
    ended: async () => ({ code: await exited, output }),
    until: (found, timeoutMs = WAIT_MS) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          checks.delete(check);
          reject(new Error(`not found on the terminal within ${timeoutMs} ms:\n${output.slice(-3000)}`));
        }, timeoutMs);
        function check() {
          const value = found(output);
          if (value === undefined) return;
          clearTimeout(timer);
          checks.delete(check);
          resolve(value);
        }
        checks.add(check);
        check();
      }),
  };
}

/** The parent pid and the arguments of a live process, from /proc. */
export function processOf(pid: number): { parent: number; args: string[] } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  return { parent, args: readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean) };
}

/** Whether a process is gone, or a zombie nobody reaped yet. */
export function processGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] === 'Z';
  } catch {
    return true;
  }
}
