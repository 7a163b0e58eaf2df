#!/usr/bin/env -S node --max-semi-space-size=2
// A 2 MB young generation (V8's default grows to 16 MB a semi-space) lowers a large sync's peak
// memory at the same speed (docs/benchmarks.md has the figures and the command). `npm start` and the
// Dockerfile pass the same flag, since `node dist/cli.js` does not read this line.
// Every module past the version flag is imported when needed: a command pays only for what it uses
// (test/cli/lazy-commands.test.ts).
import { answerVersionFlag } from './cli/version-flag.js';

// A reader that stops early (`changes | head`) closes the pipe: the output is done, not failed, so
// a command ends quietly with 0 as `cat` into `head` does, instead of an unhandled EPIPE's stack.
// Only what commands print goes through process.stdout: servers log through pino straight to fd 1.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') throw error;
  process.exit(0);
});

async function main(): Promise<void> {
  if (answerVersionFlag(process.argv.slice(2), (text) => process.stdout.write(text))) return;
  try {
    const { buildProgram } = await import('./cli/program.js');
    // Commander's own usage errors (unknown option, bad choice, missing argument) are exit 2 like
    // ours; --help and --version stay 0.
    await buildProgram().parseAsync(process.argv);
  } catch (thrown) {
    await reportFailure(thrown);
  }
}

async function reportFailure(thrown: unknown): Promise<void> {
  const [{ CommanderError }, { toMirrorError }, { EXIT, exitCodeFor }, { errorReport }] = await Promise.all([
    import('commander'),
    import('./errors.js'),
    import('./cli/exit-codes.js'),
    import('./cli/report.js'),
  ]);
  if (thrown instanceof CommanderError) {
    process.exitCode = thrown.exitCode === 0 ? EXIT.ok : EXIT.usage;
    if (thrown.exitCode !== 0) toSupervisor('CONFIG_INVALID', thrown.message);
    return;
  }
  // SQLite's errors become DB_ERROR (exit 8) with what to do; anything unforeseen is a bug (exit 1).
  const error = toMirrorError(thrown);
  toSupervisor(error.code, error.message, error.details);
  // What failed and what to do, in a line or two; the stack only when asked for.
  process.stderr.write(errorReport(error, { debug: process.env.LOG_LEVEL === 'debug' }));
  process.exitCode = exitCodeFor(error.code);
}

/**
 * A sync process (src/sync/isolated-sync.ts) that fails before its run tells the process that
 * started it why, so that one does not take a refusal for a crash. No IPC channel, no message.
 */
function toSupervisor(code: string, message: string, details: Record<string, unknown> = {}): void {
  try {
    process.send?.({ type: 'run-failed', code, message, details });
  } catch {
    // The supervisor went away: the exit code and stderr still say it.
  }
}

await main();
