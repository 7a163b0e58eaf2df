/**
 * The closed set of failures coworker-mirror reports. Callers branch on `code`, never on message
 * text; `cli.ts` maps codes to exit codes and the HTTP layer maps them to statuses.
 */
export const errorCodes = [
  // configuration and usage
  'CONFIG_INVALID',
  'DB_NOT_FOUND',
  'DB_TOO_NEW',
  'UPSTREAM_MISMATCH',
  // upstream transport
  'UPSTREAM_NETWORK',
  'UPSTREAM_TIMEOUT',
  'UPSTREAM_HTTP_STATUS',
  'UPSTREAM_BODY_TOO_LARGE',
  'UPSTREAM_INVALID_JSON',
  // upstream content
  'UPSTREAM_SCHEMA',
  'UPSTREAM_PAGINATION',
  'UPSTREAM_FOREIGN_NEXT',
  'UPSTREAM_PAGE_LOOP',
  'UPSTREAM_TOO_MANY_PAGES',
  'UPSTREAM_INCONSISTENT',
  'UPSTREAM_UNSTABLE_ORDER',
  'EMPTY_LISTING_UNCONFIRMED',
  // store
  'SYNC_LOCKED',
  'DB_ERROR',
  'RUN_ABORTED',
  'NOT_FOUND',
  // serving
  'SNAPSHOT_INVALID',
  // a bug: anything thrown that is not one of the above
  'UNEXPECTED',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export type ErrorDetails = Record<string, unknown>;

export class MirrorError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'MirrorError';
    this.code = code;
    this.details = details;
  }

  toJSON(): { code: ErrorCode; message: string; details: ErrorDetails } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** A bad environment variable or flag: names every offender and the fix. */
export class ConfigError extends MirrorError {
  readonly issues: readonly { name: string; problem: string }[];
  constructor(issues: readonly { name: string; problem: string }[]) {
    super(
      'CONFIG_INVALID',
      `invalid configuration:\n${issues.map((i) => `  ${i.name}: ${i.problem}`).join('\n')}`,
      { issues },
    );
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export function isMirrorError(value: unknown): value is MirrorError {
  return value instanceof MirrorError;
}

/** Wraps anything thrown into a MirrorError, keeping the original as `cause`. */
export function toMirrorError(value: unknown, fallback: ErrorCode = 'UNEXPECTED'): MirrorError {
  if (value instanceof MirrorError) return value;
  const message = value instanceof Error ? value.message : String(value);
  return new MirrorError(fallback, message, {}, { cause: value });
}

/** Shortens untrusted values quoted in error messages. */
export function truncateForMessage(value: unknown, max = 120): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}
