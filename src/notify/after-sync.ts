import type { Logger } from 'pino';
import type { Config } from '../config/load-config.js';
import type { NotificationRows } from '../db/notify-outbox.js';
import type { OutboxChannel } from '../outbox/channel.js';
import { notifyChannel } from './channel.js';
import { digestSettings } from './digest-outbox.js';
import { outboxOver } from './outbox.js';
import { sendMessage, type SendOutcome } from './send.js';
import { keyedTargets, type TargetKeys } from './targets.js';

/** What a sync's delivery came to, for its stderr. */
interface AfterSyncReport {
  delivered: number;
  /** "slack http://127.0.0.1:…/…: answered 503: …", one per attempt that did not deliver. */
  problems: string[];
  /** Notification rows still pending (retries, rows past the deadline): the next sync or start sends them. */
  left: number;
}

export interface AfterSyncNotifications {
  channel: OutboxChannel;
  /** What did not go out, as stderr lines (`afterSyncLines`), read once the pass is over. */
  lines(): Promise<string[]>;
}

/**
 * The notifications' channel of a plain `sync`'s delivery pass (src/cli/deliver-after-sync.ts):
 * each attempt's own deadline (NOTIFY_TIMEOUT) cut to what is left before `deadline`, the end of
 * NOTIFY_SEND_TIMEOUT, so the sync exits on time; its lines warnings and up only, since a delivery
 * is no news on a sync's stderr, where the report says what did not go out.
 */
export function afterSyncNotifications(deps: {
  rows: NotificationRows;
  config: Pick<Config, 'notify' | 'server'>;
  keys: TargetKeys;
  logger: Logger;
  deadline: number;
}): AfterSyncNotifications {
  const { config, deadline } = deps;
  const outbox = outboxOver(deps.rows);
  const report: AfterSyncReport = { delivered: 0, problems: [], left: 0 };
  const channel = notifyChannel({
    outbox,
    targets: keyedTargets(config.notify.urls, deps.keys),
    timeoutMs: config.notify.timeoutMs,
    digest: digestSettings(config, deps.keys, Intl.DateTimeFormat().resolvedOptions().timeZone),
    send: async (message, target, options) => {
      const timeoutMs = Math.max(1, Math.min(options.timeoutMs, deadline - Date.now()));
      const outcome: SendOutcome = await sendMessage(message, target, { ...options, timeoutMs });
      if (outcome.status === 'ok') report.delivered++;
      else report.problems.push(`${target.label}: ${outcome.detail}`);
      return outcome;
    },
  });
  return {
    channel: { ...channel, log: quieter(deps.logger) },
    lines: async () => afterSyncLines({ ...report, left: (await outbox.countPending?.()) ?? 0 }),
  };
}

/** The sync says on stderr what did not go out; a delivery is no news there: warnings and up only. */
function quieter(logger: Logger): Logger {
  return logger.levelVal < logger.levels.values.warn! ? logger.child({}, { level: 'warn' }) : logger;
}

/** The report as stderr lines; none when everything went out. */
function afterSyncLines(report: AfterSyncReport): string[] {
  const lines = report.problems.map((p) => `coworker-mirror: notification not delivered: ${p}`);
  if (report.left > 0) {
    const rows = report.left === 1 ? '1 notification stays' : `${report.left} notifications stay`;
    lines.push(`coworker-mirror: ${rows} in the outbox for the next sync or start`);
  }
  return lines;
}
