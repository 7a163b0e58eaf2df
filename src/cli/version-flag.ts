import { VERSION } from '../version.js';

/**
 * Answers a bare `--version`/`-V` without building the program: building it loads every setting's
 * schema (zod), which would cost several times the one call scripts make to probe the install.
 * True when answered. Commander still answers `--version` anywhere else (`sync --version` is an error).
 */
export function answerVersionFlag(args: readonly string[], write: (text: string) => void): boolean {
  if (args.length !== 1 || (args[0] !== '--version' && args[0] !== '-V')) return false;
  write(`${VERSION}\n`);
  return true;
}
