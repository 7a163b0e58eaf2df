import type { Logger } from 'pino';
import type { NotificationOutbox } from './outbox.js';
import { sendMessage, type SendOutcome } from './send.js';
import type { KeyedTarget } from './targets.js';
import { notifyWorker, type NotifyWorkerDeps } from './channel.js';
import type { DigestSettings } from './digest-outbox.js';

export interface AfterSyncDeps {
  outbox: NotificationOutbox;
  /** NOTIFY_URLS' targets with their ids in the store (`keyedTargets`). */
  targets: readonly KeyedTarget[];
  logger: Logger;
  /** NOTIFY_TIMEOUT: one attempt's deadline. */
  timeoutMs: number;
  /** NOTIFY_SEND_TIMEOUT: the whole delivery's deadline; what is not sent by then stays in the outbox. */
  deadlineMs: number;
  send?: NotifyWorkerDeps['send'];
  /** Hourly or daily digests: the one due is written first (once, whoever writes it). */
  digest?: DigestSettings | null;
  sleep?: NotifyWorkerDeps['sleep'];
}

/** What a sync's delivery came to, for its stderr. */
export interface AfterSyncReport {
  delivered: number;
  /** "slack http://127.0.0.1:…/…: answered 503: …", one per attempt that did not deliver. */
  problems: string[];
  /** Notification rows still pending (retries, rows past the deadline): the next sync or start sends them. */
  left: number;
}

/**
 * `sync` (cron, no `start` running): delivers what its run and earlier ones left in the
 * notification outbox, within `deadlineMs`. Each attempt's own deadline is cut to what is left of
 * it, so the sync exits on time; the rest keeps its rows for the next process.
 */
export async function deliverNotificationsAfterSync(deps: AfterSyncDeps): Promise<AfterSyncReport> {
  const deadline = Date.now() + deps.deadlineMs;
  const report: AfterSyncReport = { delivered: 0, problems: [], left: 0 };
  const send = deps.send ?? sendMessage;
  const worker = notifyWorker({
    outbox: deps.outbox,
    targets: deps.targets,
    logger: quieter(deps.logger),
    timeoutMs: deps.timeoutMs,
    digest: deps.digest ?? null,
    ...(deps.sleep ? { sleep: deps.sleep } : {}),
    send: async (message, target, options) => {
      const timeoutMs = Math.max(1, Math.min(options.timeoutMs, deadline - Date.now()));
      const outcome: SendOutcome = await send(message, target, { ...options, timeoutMs });
      if (outcome.status === 'ok') report.delivered++;
      else report.problems.push(`${target.label}: ${outcome.detail}`);
      return outcome;
    },
  });
  // The deadline stops the pass between two sends; the send in flight ends by its own cut timeout.
  const timer = setTimeout(() => void worker.stop(), deps.deadlineMs);
  try {
    await worker.poke();
  } finally {
    clearTimeout(timer);
    await worker.stop();
  }
  report.left = (await deps.outbox.countPending?.()) ?? 0;
  return report;
}

/** The sync says on stderr what did not go out; a delivery is no news there: warnings and up only. */
function quieter(logger: Logger): Logger {
  return logger.levelVal < logger.levels.values.warn! ? logger.child({}, { level: 'warn' }) : logger;
}

/** The report as stderr lines; none when everything went out. */
export function afterSyncLines(report: AfterSyncReport): string[] {
  const lines = report.problems.map((p) => `coworker-mirror: notification not delivered: ${p}`);
  if (report.left > 0) {
    const rows = report.left === 1 ? '1 notification stays' : `${report.left} notifications stay`;
    lines.push(`coworker-mirror: ${rows} in the outbox for the next sync or start`);
  }
  return lines;
}
