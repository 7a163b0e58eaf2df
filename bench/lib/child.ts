import { spawn } from 'node:child_process';

export interface ChildOptions {
  /** Killed (SIGKILL) past this; the bench then reports the failure instead of hanging. */
  timeoutMs: number;
  env?: NodeJS.ProcessEnv;
  /** Extra node flags, e.g. `--cpu-prof`. */
  nodeFlags?: readonly string[];
}

export interface ChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
}

/**
 * Runs a TypeScript script in its own node process (so its peak RSS is its own), output streamed
 * to ours. Resolves when it exits, whatever the exit status.
 */
export function runScript(
  script: string,
  args: readonly string[],
  options: ChildOptions,
): Promise<ChildOutcome> {
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), '--import', 'tsx', script, ...args], {
    stdio: 'inherit',
    env: options.env ?? process.env,
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs);
  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, timedOut });
    });
  });
}

export function describeOutcome(outcome: ChildOutcome): string {
  if (outcome.timedOut) return 'timed out';
  if (outcome.signal) return `killed by ${outcome.signal}`;
  return `exit code ${outcome.code}`;
}
