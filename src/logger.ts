import { pino, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LoggerSettings {
  level: string;
  /** Human-readable output; the CLI turns it on when stdout is a TTY. */
  pretty: boolean;
  /** Where lines go; defaults to stdout. Tests pass a stream to read them back. */
  destination?: NodeJS.WritableStream;
}

// The admin token, the upstream's credentials and the webhook secret travel in headers and config;
// no log line may ever carry them, whoever logs the object that holds them.
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
  ],
  censor: '[redacted]',
};

export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = { level: settings.level, redact, base: { name: 'coworker-mirror' } };
  if (settings.pretty) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:standard' } },
    });
  }
  return settings.destination ? pino(options, settings.destination) : pino(options);
}

/** A logger that drops everything; for tests and library use. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
