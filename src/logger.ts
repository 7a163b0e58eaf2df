import { pino, type Logger, type LoggerOptions } from 'pino';
import pretty from 'pino-pretty';

export type { Logger };

export interface LoggerSettings {
  level: string;
  /** Human-readable output; the CLI turns it on when stdout is a TTY. */
  pretty: boolean;
  /** Where lines go; defaults to stdout. Tests pass a stream to read them back. */
  destination?: NodeJS.WritableStream;
  /** The file descriptor pretty lines go to (they are written from pino's transport thread). */
  prettyFd?: 1 | 2;
}

/** An error as a person on a terminal reads it: what and its code; the stack only at `debug`. */
function briefError(error: unknown): unknown {
  if (!(error instanceof Error)) return error;
  const code = (error as { code?: unknown }).code;
  return { type: error.name, message: error.message, ...(code !== undefined ? { code } : {}) };
}

// The admin token, the upstream's credentials, the webhook secret and URLs and the database's
// password travel in headers and config; no log line may ever carry them, whoever logs the object
// that holds them.
const redact: LoggerOptions['redact'] = {
  paths: [
    'adminToken',
    'config.server.adminToken',
    'config.server.metricsToken',
    'req.headers.authorization',
    'headers.authorization',
    // The webhook signing secret, wherever a config or settings object is logged.
    'webhookSecret',
    'config.webhooks.secret',
    'webhooks.secret',
    'settings.secret',
    'upstreamHeaders',
    'config.upstream.target.headers',
    'upstream.target.headers',
    'target.headers',
    'upstream.headers',
    // Webhook URLs carry their token, DATABASE_URL its password: a config logged whole shows neither.
    'config.webhooks.urls',
    'webhooks.urls',
    'config.database.url',
    'database.url',
    'config.database.target.connectionString',
    'database.target.connectionString',
    'target.connectionString',
  ],
  censor: '[redacted]',
};

export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = { level: settings.level, redact, base: { name: 'coworker-mirror' } };
  if (settings.pretty) {
    // On a terminal a line is for a person: time, level, message, what failed and the fields, on
    // one line; written in this thread, so it comes before the command's last word, not after it.
    const stacks = settings.level === 'debug' || settings.level === 'trace';
    const stream = pretty({
      colorize: true,
      translateTime: 'SYS:HH:MM:ss',
      ignore: stacks ? 'pid,hostname,name' : 'pid,hostname,name,err',
      // Where it answers and whether the data is invented belong in the line a person reads first.
      messageFormat:
        '{msg}{if url} at {url}{end}{if demo} (demo: the data is invented){end}' +
        (stacks ? '' : '{if err.message}: {err.message}{end}'),
      singleLine: true,
      destination: settings.prettyFd ?? 1,
      sync: true,
    });
    return pino({ ...options, ...(stacks ? {} : { serializers: { err: briefError } }) }, stream);
  }
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

/** A logger that drops everything; for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
