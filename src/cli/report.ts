import type { UnknownVariable } from '../config/unknown-variables.js';
import type { ErrorCode, MirrorError } from '../errors.js';
import { visibleLines } from './terminal.js';

/** What to do next, for the failures a person can fix; the message itself says what failed. */
const HINTS: Partial<Record<ErrorCode, string>> = {
  DB_ERROR:
    'check that --db (DATABASE_PATH) names a coworker-mirror database and that it and its folder are readable',
  UNEXPECTED: 'this is a bug in coworker-mirror; LOG_LEVEL=debug prints the stack to report it with',
  SYNC_LOCKED: 'wait for that run to end; a run whose process died is recovered by the next start',
};

function stackOf(error: unknown, depth = 0): string[] {
  if (!(error instanceof Error) || depth > 4) return [];
  const lines = [(error.stack ?? `${error.name}: ${error.message}`).trimEnd()];
  if (error.cause !== undefined) lines.push(`caused by: ${stackOf(error.cause, depth + 1).join('\n')}`);
  return lines;
}

/**
 * A failed command as a person reads it: `coworker-mirror: <what failed>` and, where there is one,
 * `hint: <what to do>`. The stack (with causes) only with `debug`, where a bug report needs it.
 */
export function errorReport(error: MirrorError, options: { debug: boolean }): string {
  // A database error carries its own advice (the file is not a database, the disk is full, …):
  // it is the hint, said once.
  const advice = typeof error.details.advice === 'string' ? error.details.advice : undefined;
  const message =
    advice !== undefined && error.message.endsWith(`; ${advice}`)
      ? error.message.slice(0, -(advice.length + 2))
      : error.message;
  // Messages quote upstream values; a terminal shows their control characters, never obeys them.
  const lines = [`coworker-mirror: ${visibleLines(message)}`];
  // A message that already ends in its advice (`…: check the password of DATABASE_URL`) is one line.
  const said = advice !== undefined && message.endsWith(`: ${advice}`);
  const hint = said ? undefined : (advice ?? HINTS[error.code]);
  if (hint) lines.push(`hint: ${hint}`);
  if (options.debug) lines.push(...stackOf(error));
  return `${lines.join('\n')}\n`;
}

/** One warning line per unknown variable that looks like a misspelt setting. */
export function unknownVariableWarnings(unknown: readonly UnknownVariable[]): string[] {
  return unknown.map(
    (u) => `coworker-mirror: warning: unknown variable ${u.name} is ignored; did you mean ${u.suggestion}?`,
  );
}
