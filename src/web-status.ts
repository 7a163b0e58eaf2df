import cron from 'node-cron';
import type { Config } from './config.js';
import type { Scheduler } from './sync/scheduler.js';
import { maskUrlCredentials } from './config/upstream-target.js';
import type { StatusSource } from './web/status-source.js';

/** The next time `expression` fires after now; node-cron computes it without starting a task. */
export function nextCronRun(expression: string): Date | null {
  const task = cron.createTask(expression, () => undefined);
  try {
    return task.getNextRuns(1)[0] ?? null;
  } finally {
    void task.destroy();
  }
}

/** What `start` tells the status page: the mode, the masked upstream, the schedule. */
export function statusSourceFor(
  config: Pick<Config, 'upstream' | 'sync'>,
  upstreamLabel: string,
  scheduler: Scheduler,
): StatusSource {
  return {
    upstream: () => ({
      mode: config.upstream.target ? 'upstream' : 'demo',
      url: maskUrlCredentials(upstreamLabel),
    }),
    nextRunAt: () => nextCronRun(config.sync.cron),
    randomDelayMs: config.sync.randomDelayMs,
    syncRunning: () => scheduler.running,
  };
}
